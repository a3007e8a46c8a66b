#include "supervisor/net/web_proxy.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <spdlog/spdlog.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "policy/web_request.h"

namespace cordon::supervisor {

Result<std::unique_ptr<WebProxy>> WebProxy::Start(WebProxyOptions o) {
  std::unique_ptr<WebProxy> p(new WebProxy);
  p->listener_ = Fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (!p->listener_) return Errno("socket", "web proxy");
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  if (::bind(p->listener_.get(), reinterpret_cast<sockaddr*>(&a), len) != 0) {
    return Errno("bind", "web proxy");
  }
  if (::listen(p->listener_.get(), 128) != 0) return Errno("listen", "web proxy");
  if (::getsockname(p->listener_.get(), reinterpret_cast<sockaddr*>(&a), &len) != 0) {
    return Errno("getsockname", "web proxy");
  }
  policy::InetEndpoint ep;
  std::memcpy(ep.addr.data(), &a.sin_addr, 4);
  ep.port = ntohs(a.sin_port);
  p->peers_ = std::make_shared<ProxyPeers>(ep);
  p->shared_ = std::make_shared<Shared>();
  if (!o.resolver) o.resolver = SystemResolver();
  p->SetGrant(o.network, o.grant);
  p->shared_->resolver = std::move(o.resolver);
  p->shared_->also_public = o.also_public;
  p->shared_->on_event = std::move(o.on_event);
  p->shared_->stop = Fd(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!p->shared_->stop) return Errno("eventfd", "web proxy");
  WebProxy* raw = p.get();
  p->acceptor_ = std::thread([raw] { raw->AcceptLoop(); });
  return p;
}

WebProxy::~WebProxy() { Stop(); }

void WebProxy::SetGrant(policy::Network network, const policy::WebGrant& grant) {
  auto p = std::make_shared<policy::Policy>();
  p->network = network;
  p->web = grant;
  shared_->policy.store(std::move(p));
}

std::string WebProxy::Url() const {
  return "http://127.0.0.1:" + std::to_string(peers_->endpoint().port);
}

void WebProxy::Stop() {
  {
    std::lock_guard<std::mutex> l(mu_);
    if (stopped_) return;
    stopped_ = true;
  }
  shared_->stopping = true;
  uint64_t one = 1;
  (void)!::write(shared_->stop.get(), &one, sizeof one);
  if (acceptor_.joinable()) acceptor_.join();
  std::vector<Session> sessions;
  {
    std::lock_guard<std::mutex> l(mu_);
    sessions.swap(sessions_);
  }
  for (Session& s : sessions) s.thread.join();
}

void WebProxy::AcceptLoop() {
  while (true) {
    pollfd fds[2] = {{listener_.get(), POLLIN, 0}, {shared_->stop.get(), POLLIN, 0}};
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      spdlog::error("web proxy: poll: {}", std::strerror(errno));
      return;
    }
    if (fds[1].revents != 0) return;
    sockaddr_in peer{};
    socklen_t len = sizeof peer;
    Fd c(::accept4(listener_.get(), reinterpret_cast<sockaddr*>(&peer), &len,
                   SOCK_CLOEXEC | SOCK_NONBLOCK));
    if (!c) continue;
    ProxyEvent refused;
    // Only the tool's connections, which the supervisor made and recorded.
    if (peer.sin_family != AF_INET || ntohl(peer.sin_addr.s_addr) != INADDR_LOOPBACK ||
        !peers_->Take(ntohs(peer.sin_port))) {
      refused.reason = "a connection to the proxy that is not the run's tool's (from port " +
                       std::to_string(ntohs(peer.sin_port)) + ")";
      if (shared_->on_event) shared_->on_event(refused);
      continue;  // closed unanswered
    }
    const std::size_t max_connections = shared_->policy.load()->web.max_connections;
    if (shared_->active.load() >= max_connections) {
      refused.status = 503;
      refused.reason = "more than " + std::to_string(max_connections) +
                       " connections at once (sandbox.network.maxConnections)";
      std::string answer = policy::ProxyAnswer(503, refused.reason);
      (void)!::send(c.get(), answer.data(), answer.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
      if (shared_->on_event) shared_->on_event(refused);
      continue;
    }
    ++shared_->active;
    std::lock_guard<std::mutex> l(mu_);
    // Finished threads are joined as new ones start, so a long run keeps few.
    std::erase_if(sessions_, [](Session& s) {
      if (!s.done->load()) return false;
      s.thread.join();
      return true;
    });
    auto done = std::make_shared<std::atomic<bool>>(false);
    sessions_.push_back({std::thread([client = std::move(c), s = shared_, done]() mutable {
                           ServeProxyClient(std::move(client), *s);
                           --s->active;
                           done->store(true);
                         }),
                         done});
  }
}

}  // namespace cordon::supervisor
