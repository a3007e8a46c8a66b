// The web grants' proxy (issue 25 items 2 and 3): an HTTP proxy on
// 127.0.0.1 (an ephemeral port) that the supervisor runs for a
// public-web or hosts: run, and that only the run's tool can use (its
// connections are recorded in ProxyPeers as the supervisor makes them).
// It takes CONNECT host:port (https) and absolute-form http requests,
// decides each by policy/web_request.h, resolves the name itself, checks
// every address, connects to the address it checked, holds a CONNECT
// tunnel to a TLS ClientHello naming the requested host, and caps time,
// bytes per response and connections at once (policy::WebGrant).
// One thread accepts; each connection is served on a thread of its own.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "base/fd.h"
#include "base/result.h"
#include "policy/net_address.h"
#include "policy/policy.h"
#include "supervisor/net/proxy_peers.h"
#include "supervisor/net/resolver.h"
#include "supervisor/run_observer.h"

namespace cordon::supervisor {

struct WebProxyOptions {
  policy::Network network = policy::Network::kPublicWeb;
  policy::WebGrant grant;
  std::shared_ptr<Resolver> resolver;  // null: SystemResolver()
  // The test build's range that counts as public (tools/test_hooks.h).
  std::optional<policy::IpPrefix> also_public;
  // Each request, when it ends (the audit log); called from any thread.
  std::function<void(const ProxyEvent&)> on_event;
};

class WebProxy {
 public:
  static Result<std::unique_ptr<WebProxy>> Start(WebProxyOptions o);
  ~WebProxy();  // Stop()
  WebProxy(const WebProxy&) = delete;
  WebProxy& operator=(const WebProxy&) = delete;

  const std::shared_ptr<ProxyPeers>& peers() const { return peers_; }
  std::string Url() const;  // http://127.0.0.1:PORT
  // Ends every connection and joins the threads.
  void Stop();
  // From the next connection on, decides by `network` and `grant` (a
  // policy reload that narrows them; the caller checked that it does:
  // policy/reload_check.h). Connections already open keep the grant they
  // were accepted under, as a file opened before a reload stays open.
  void SetGrant(policy::Network network, const policy::WebGrant& grant);

  // Shared with the connections' threads.
  struct Shared {
    // WebProxyOptions' mechanisms; its network and grant are `policy`'s.
    std::shared_ptr<Resolver> resolver;
    std::optional<policy::IpPrefix> also_public;
    std::function<void(const ProxyEvent&)> on_event;
    // Network and web only: what DecideWebRequest reads, the caps. Read
    // once per connection; replaced whole by SetGrant.
    std::atomic<std::shared_ptr<const policy::Policy>> policy;
    Fd stop;                // an eventfd, readable once stopping
    std::atomic<size_t> active{0};
    std::atomic<bool> stopping{false};  // set with `stop`, for waits that poll no fd
  };

 private:
  WebProxy() = default;
  void AcceptLoop();

  Fd listener_;
  std::shared_ptr<ProxyPeers> peers_;
  std::shared_ptr<Shared> shared_;
  std::thread acceptor_;
  std::mutex mu_;
  struct Session {
    std::thread thread;
    std::shared_ptr<std::atomic<bool>> done;
  };
  std::vector<Session> sessions_;
  bool stopped_ = false;
};

// Serves one accepted connection of the tool to its end (proxy_session.cc).
void ServeProxyClient(Fd client, const WebProxy::Shared& s);

}  // namespace cordon::supervisor
