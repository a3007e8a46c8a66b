// One connection of the tool to the web proxy, from its request to its
// end (web_proxy.h). Every wait is bounded by the request's deadline
// (sandbox.network.timeoutSeconds, from accept) and ends when the proxy
// stops; the bytes from the server to the tool are capped
// (sandbox.network.maxResponseBytes). One request per connection: plain
// http goes upstream with Connection: close, so a response ends with its
// stream and a pipelined second request never reaches a server unchecked.
#include <netinet/in.h>
#include <poll.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <string>
#include <vector>

#include "policy/tls_client_hello.h"
#include "policy/web_request.h"
#include "supervisor/net/web_proxy.h"

namespace cordon::supervisor {
namespace {

using Clock = std::chrono::steady_clock;
constexpr size_t kChunk = 256 * 1024;

class Session {
 public:
  Session(Fd client, const WebProxy::Shared& s)
      : client_(std::move(client)),
        s_(s),
        p_(s.policy.load()),
        deadline_(Clock::now() + std::chrono::seconds(p_->web.timeout_seconds)),
        buf_(kChunk) {}

  void Run() {
    Serve();
    if (!ev_.allowed || !ev_.reason.empty()) {
      spdlog::warn("web proxy: {} {}{}: {}{}", ev_.method.empty() ? "request" : ev_.method,
                   ev_.host.empty() ? "" : ev_.host + ":" + std::to_string(ev_.port),
                   ev_.allowed ? " (cut short)" : " refused", ev_.reason,
                   hint_.empty() ? "" : "; " + hint_);
    }
    if (ev_.allowed && !ev_.reason.empty()) {
      // Cut short (a cap, the run's end): a reset, so the tool's client
      // sees an error and not an end of stream it could take for the whole.
      linger l{1, 0};
      ::setsockopt(client_.get(), SOL_SOCKET, SO_LINGER, &l, sizeof l);
    }
    if (s_.on_event) s_.on_event(ev_);
  }

 private:
  void Serve();
  bool Tunnel(const std::vector<policy::IpAddress>& addrs, std::string pending);
  bool Plain(const policy::ProxyRequest& r, std::string pending);
  bool ConnectPinned(const std::vector<policy::IpAddress>& addrs);
  void Relay(bool from_client);

  // Waits for `events` on `fd` until the deadline or the proxy's stop:
  // false (and why_) when it did not come.
  bool Wait(int fd, short events) {
    while (true) {
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline_ - Clock::now()).count();
      if (left <= 0)
        return Cut("past the time cap of " + std::to_string(p_->web.timeout_seconds) + " s");
      pollfd fds[2] = {{fd, events, 0}, {s_.stop.get(), POLLIN, 0}};
      int n = ::poll(fds, 2, static_cast<int>(std::min<long long>(left, 60000)));
      if (n < 0 && errno != EINTR) return Cut(std::string("poll: ") + std::strerror(errno));
      if (n > 0 && fds[1].revents) return Cut("the run ended");
      if (n > 0 && fds[0].revents) return true;
    }
  }
  bool Cut(std::string why) {
    if (ev_.reason.empty()) ev_.reason = std::move(why);
    return false;
  }
  // Appends what `fd` has (up to `max` bytes in `*out`): >0 read, 0 EOF, -1 no more.
  ssize_t ReadSome(int fd, std::string* out, size_t max) {
    if (out->size() >= max) return -1;
    if (!Wait(fd, POLLIN)) return -1;
    ssize_t n = ::recv(fd, buf_.data(), std::min(buf_.size(), max - out->size()), 0);
    if (n < 0) {
      if (errno == EAGAIN || errno == EINTR) return ReadSome(fd, out, max);
      Cut(std::string("recv: ") + std::strerror(errno));
      return -1;
    }
    out->append(buf_.data(), static_cast<size_t>(n));
    return n;
  }
  bool SendAll(int fd, std::string_view data) {
    while (!data.empty()) {
      ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
      if (n < 0) {
        if (errno == EINTR) continue;
        if (errno != EAGAIN) return Cut(std::string("send: ") + std::strerror(errno));
        if (!Wait(fd, POLLOUT)) return false;
        continue;
      }
      data.remove_prefix(static_cast<size_t>(n));
    }
    return true;
  }
  // The server's bytes to the tool, within the cap.
  bool Down(std::string_view data) {
    if (ev_.bytes_down + data.size() > p_->web.max_response_bytes) {
      return Cut("the response is over the cap of " + std::to_string(p_->web.max_response_bytes) +
                 " bytes (sandbox.network.maxResponseBytes)");
    }
    ev_.bytes_down += data.size();
    return SendAll(client_.get(), data);
  }
  void Answer(int status, std::string reason) {
    ev_.status = status;
    ev_.reason = reason;
    (void)SendAll(client_.get(), policy::ProxyAnswer(status, reason));
  }

  Fd client_, up_;
  const WebProxy::Shared& s_;
  // The grant in force when the connection was accepted (WebProxy::SetGrant).
  const std::shared_ptr<const policy::Policy> p_;
  const Clock::time_point deadline_;
  std::vector<char> buf_;
  ProxyEvent ev_;
  policy::WebVerdict v_;
  std::string hint_;  // the grant that lets a refused request through
};

void Session::Serve() {
  std::string in;
  policy::ProxyRequest req;
  std::string why;
  while (true) {
    switch (policy::ParseRequestHead(in, &req, &why)) {
      case policy::HeadParse::kOk:
        break;
      case policy::HeadParse::kBad:
        return Answer(400, why);
      case policy::HeadParse::kNeedMore:
        if (ReadSome(client_.get(), &in, policy::kMaxHeadBytes + 1) <= 0) {
          if (ev_.reason.empty()) ev_.reason = "the client closed before a whole request";
          return;
        }
        continue;
    }
    break;
  }
  ev_.method = req.method;
  v_ = policy::DecideWebRequest(*p_, req);
  ev_.host = v_.url.host;
  ev_.port = v_.url.port;
  if (v_.status != 0) {
    hint_ = v_.hint;
    return Answer(v_.status, v_.reason);
  }
  std::vector<policy::IpAddress> addrs;
  if (v_.url.host_is_ip) {
    addrs.push_back(*policy::ParseIpLiteral(v_.url.host));
  } else {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline_ - Clock::now());
    Resolved r = s_.resolver->Resolve(v_.url.host, left, &s_.stopping);
    if (!r.error.empty()) return Answer(502, r.error);
    addrs = std::move(r.addrs);
  }
  // Every address, not only the one used: a name that also points inward
  // is not a public name.
  if (std::string bad = policy::CheckResolved(addrs, s_.also_public); !bad.empty()) {
    hint_ = policy::WebHint(*p_, policy::WebRefusal::kNoWebGrant, v_.url.host);
    return Answer(403, v_.url.host + ": " + bad);
  }
  std::string pending = in.substr(req.head_bytes);
  if (v_.connect) {
    (void)Tunnel(addrs, std::move(pending));
  } else if (ConnectPinned(addrs)) {
    (void)Plain(req, std::move(pending));
  }
}

// Connects to the checked addresses, in the resolver's order; the first
// that answers is the one (no second lookup).
bool Session::ConnectPinned(const std::vector<policy::IpAddress>& addrs) {
  std::string last;
  for (const policy::IpAddress& a : addrs) {
    sockaddr_storage ss{};
    socklen_t len;
    if (a.v6) {
      auto& s6 = reinterpret_cast<sockaddr_in6&>(ss);
      s6.sin6_family = AF_INET6;
      std::memcpy(&s6.sin6_addr, a.bytes.data(), 16);
      s6.sin6_port = htons(v_.url.port);
      len = sizeof s6;
    } else {
      auto& s4 = reinterpret_cast<sockaddr_in&>(ss);
      s4.sin_family = AF_INET;
      std::memcpy(&s4.sin_addr, a.bytes.data(), 4);
      s4.sin_port = htons(v_.url.port);
      len = sizeof s4;
    }
    Fd s(::socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
    if (!s) continue;
    int rc = ::connect(s.get(), reinterpret_cast<sockaddr*>(&ss), len);
    if (rc != 0 && errno == EINPROGRESS) {
      if (!Wait(s.get(), POLLOUT)) return false;
      int err = 0;
      socklen_t elen = sizeof err;
      ::getsockopt(s.get(), SOL_SOCKET, SO_ERROR, &err, &elen);
      rc = err == 0 ? 0 : -1;
      errno = err;
    }
    if (rc != 0) {
      last = policy::FormatIp(a) + ": " + std::strerror(errno);
      continue;
    }
    up_ = std::move(s);
    ev_.address = policy::FormatIp(a);
    ev_.allowed = true;
    return true;
  }
  if (!v_.connect) Answer(502, "cannot connect to " + v_.url.host + " (" + last + ")");
  else Cut("cannot connect to " + v_.url.host + " (" + last + ")");
  return false;
}

// CONNECT: 200, then the tool's ClientHello must name the host asked for;
// only then is the server connected and the bytes relayed as they are.
bool Session::Tunnel(const std::vector<policy::IpAddress>& addrs, std::string pending) {
  if (!SendAll(client_.get(), "HTTP/1.1 200 Connection established\r\n\r\n")) return false;
  std::string sni;
  while (true) {
    policy::HelloParse p = policy::ParseClientHelloSni(pending, &sni);
    if (p == policy::HelloParse::kOk) break;
    if (p == policy::HelloParse::kNotTls) return Cut("the tunnel does not start with TLS");
    if (p == policy::HelloParse::kMalformed) return Cut("a malformed TLS ClientHello");
    if (ReadSome(client_.get(), &pending, policy::kMaxClientHelloBytes) <= 0) {
      return Cut("no whole TLS ClientHello from the client");
    }
  }
  if (!policy::SniMatches(sni, v_.url.host, v_.url.host_is_ip)) {
    return Cut("the TLS server name '" + sni + "' is not the host the tunnel was opened for");
  }
  if (!ConnectPinned(addrs)) return false;
  ev_.bytes_up += pending.size();
  if (!SendAll(up_.get(), pending)) return false;
  Relay(true);
  return true;
}

// Plain http: the request upstream in origin form; the response head
// looked at (a redirect to another origin under public-web, a declared
// length over the cap) before a byte of it reaches the tool.
bool Session::Plain(const policy::ProxyRequest& r, std::string pending) {
  // Under public-web nothing but the head goes upstream: no body, no
  // pipelined second request past the check.
  const bool read_only = p_->network == policy::Network::kPublicWeb;
  std::string head = policy::UpstreamRequestHead(r, v_.url, read_only);
  ev_.bytes_up += head.size();
  if (!SendAll(up_.get(), head)) return false;
  if (!read_only) {
    ev_.bytes_up += pending.size();
    if (!SendAll(up_.get(), pending)) return false;
  }
  std::string resp;
  policy::ResponseHead rh;
  while (true) {
    policy::HeadParse p = policy::ParseResponseHead(resp, &rh);
    if (p == policy::HeadParse::kOk) break;
    if (p == policy::HeadParse::kBad) {
      Answer(502, "the server's response is not HTTP/1.x");
      return false;
    }
    ssize_t n = ReadSome(up_.get(), &resp, policy::kMaxHeadBytes + 1);
    if (n == 0) {
      Answer(502, "the server closed without a response");
      return false;
    }
    if (n < 0) {
      if (ev_.reason.starts_with("past the time cap")) Answer(504, ev_.reason);
      return false;
    }
  }
  if (read_only && rh.status >= 300 && rh.status < 400 && !rh.location.empty() &&
      !policy::SameOrigin(v_.url, rh.location)) {
    Answer(403, "a redirect from " + v_.url.Origin() + " to another origin (" +
                    rh.location.substr(0, 200) + ") under public-web: same-origin redirects only");
    return false;
  }
  if (rh.content_length && *rh.content_length + rh.head_bytes > p_->web.max_response_bytes) {
    Answer(502, "a response of " + std::to_string(*rh.content_length) +
                    " bytes is over the cap of " + std::to_string(p_->web.max_response_bytes) +
                    " bytes (sandbox.network.maxResponseBytes)");
    return false;
  }
  if (!Down(resp)) return false;
  Relay(!read_only);
  return true;
}

// Both ways until the server is done: the tool's bytes up (when
// `from_client`), the server's down within the cap. The tool's end of
// stream is passed on as a half close.
void Session::Relay(bool from_client) {
  bool client_open = from_client;
  while (true) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline_ - Clock::now()).count();
    if (left <= 0) {
      Cut("past the time cap of " + std::to_string(p_->web.timeout_seconds) + " s");
      return;
    }
    pollfd fds[3] = {{up_.get(), POLLIN, 0},
                     {client_open ? client_.get() : -1, POLLIN, 0},
                     {s_.stop.get(), POLLIN, 0}};
    int n = ::poll(fds, 3, static_cast<int>(std::min<long long>(left, 60000)));
    if (n < 0) {
      if (errno == EINTR) continue;
      Cut(std::string("poll: ") + std::strerror(errno));
      return;
    }
    if (fds[2].revents) {
      Cut("the run ended");
      return;
    }
    if (fds[1].revents) {
      ssize_t r = ::recv(client_.get(), buf_.data(), buf_.size(), 0);
      if (r > 0) {
        ev_.bytes_up += static_cast<uint64_t>(r);
        if (!SendAll(up_.get(), std::string_view(buf_.data(), static_cast<size_t>(r)))) return;
      } else if (r == 0 || (errno != EAGAIN && errno != EINTR)) {
        client_open = false;
        ::shutdown(up_.get(), SHUT_WR);
      }
    }
    if (fds[0].revents) {
      ssize_t r = ::recv(up_.get(), buf_.data(), buf_.size(), 0);
      if (r > 0) {
        if (!Down(std::string_view(buf_.data(), static_cast<size_t>(r)))) return;
      } else if (r == 0) {
        return;  // the server is done: the tool sees end of stream as the session closes
      } else if (errno != EAGAIN && errno != EINTR) {
        Cut(std::string("recv: ") + std::strerror(errno));
        return;
      }
    }
  }
}

}  // namespace

void ServeProxyClient(Fd client, const WebProxy::Shared& s) {
  Session(std::move(client), s).Run();
}

}  // namespace cordon::supervisor
