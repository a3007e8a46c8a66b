// The web proxy (supervisor/net/web_proxy.h) against a direct connection
// and against the floor of any relay (FloorRelay, below): throughput of a large download and the
// added latency of a small request, both plain http over loopback to a server in this process. The
// proxy is the real one, with a fixed resolver answering 127.0.0.1 and that address declared public
// (what the test build's hooks do); each client socket is bound first and its port recorded, as the
// supervisor does for the tool.
//   build/bench/web_proxy_bench [--benchmark_filter=...]
// Issue 25's targets: proxied throughput >= 85% of direct for 200 MB, and
// <= 2 ms added per request.
#include <arpa/inet.h>
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "supervisor/net/web_proxy.h"

namespace {

using namespace cordon;

class FixedResolver final : public supervisor::Resolver {
 public:
  supervisor::Resolved Resolve(const std::string&, std::chrono::milliseconds,
                               const std::atomic<bool>*) override {
    return {{*policy::ParseIpLiteral("127.0.0.1")}, {}};
  }
};

// A listener on 127.0.0.1 (a port of the kernel's choosing) that hands
// each connection to `serve` on a thread of its own.
class Listener {
 public:
  explicit Listener(std::function<void(int)> serve) : serve_(std::move(serve)) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    ::bind(fd_, reinterpret_cast<sockaddr*>(&a), len);
    ::listen(fd_, 128);
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this] { Loop(); });
  }
  ~Listener() {
    stop_ = true;
    ::shutdown(fd_, SHUT_RDWR);
    thread_.join();
    ::close(fd_);
  }
  int port() const { return port_; }

 private:
  void Loop() {
    while (!stop_) {
      int c = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (c < 0) continue;
      std::thread([this, c] { serve_(c); }).detach();
    }
  }
  std::function<void(int)> serve_;
  int fd_;
  int port_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

// Answers every request on its connection with `/N`'s N bytes, then closes.
class Server {
 public:
  Server() : body_(1 << 20, 'x'), listener_([this](int c) { Serve(c); }) {}
  int port() const { return listener_.port(); }

 private:
  void Serve(int c) {
    std::string req;
    char buf[4096];
    while (req.find("\r\n\r\n") == std::string::npos) {
      ssize_t n = ::recv(c, buf, sizeof buf, 0);
      if (n <= 0) break;
      req.append(buf, static_cast<size_t>(n));
    }
    size_t slash = req.find(" /");
    uint64_t n = slash == std::string::npos ? 0 : std::stoull(req.substr(slash + 2));
    std::string head = "HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(n) +
                       "\r\nConnection: close\r\n\r\n";
    (void)!::send(c, head.data(), head.size(), MSG_NOSIGNAL);
    while (n > 0) {
      size_t k = std::min<uint64_t>(n, body_.size());
      ssize_t w = ::send(c, body_.data(), k, MSG_NOSIGNAL);
      if (w <= 0) break;
      n -= static_cast<uint64_t>(w);
    }
    ::close(c);
  }
  std::string body_;
  Listener listener_;  // last: it serves with the members above
};

// The floor: the least a relaying process does, and nothing cordon's proxy
// does besides. It takes the request head, connects to the server it was
// told of at start, and moves the server's bytes to the client on a thread
// per connection as the proxy does: no parsing, no resolution, no checks,
// no caps, no poll. Two ways: copied through a buffer of the proxy's size
// (recv/send, what the proxy does), or spliced through a 1 MiB pipe
// (socket -> pipe -> socket, no copy to user space). What the proxy
// costs over it is what the proxy's own work costs; what it costs over
// direct is what carrying every byte through a third process costs.
class FloorRelay {
 public:
  FloorRelay(int server_port, bool splice)
      : server_port_(server_port), splice_(splice), listener_([this](int c) { Relay(c); }) {}
  int port() const { return listener_.port(); }

 private:
  void Relay(int c) {
    std::vector<char> buf(256 * 1024);  // the proxy's chunk
    std::string head;
    while (head.find("\r\n\r\n") == std::string::npos) {
      ssize_t n = ::recv(c, buf.data(), buf.size(), 0);
      if (n <= 0) break;
      head.append(buf.data(), static_cast<size_t>(n));
    }
    int up = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(static_cast<uint16_t>(server_port_));
    if (::connect(up, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
        ::send(up, head.data(), head.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(head.size())) {
      if (splice_) {
        int pp[2];
        ::pipe2(pp, O_CLOEXEC);
        ::fcntl(pp[0], F_SETPIPE_SZ, 1 << 20);
        for (ssize_t n; (n = ::splice(up, nullptr, pp[1], nullptr, 1 << 20,
                                      SPLICE_F_MOVE | SPLICE_F_MORE)) > 0;) {
          for (ssize_t off = 0; off < n;) {
            ssize_t w = ::splice(pp[0], nullptr, c, nullptr, static_cast<size_t>(n - off),
                                 SPLICE_F_MOVE | SPLICE_F_MORE);
            if (w <= 0) break;
            off += w;
          }
        }
        ::close(pp[0]);
        ::close(pp[1]);
      } else
        for (ssize_t n; (n = ::recv(up, buf.data(), buf.size(), 0)) > 0;) {
          for (ssize_t off = 0; off < n;) {
            ssize_t w = ::send(c, buf.data() + off, static_cast<size_t>(n - off), MSG_NOSIGNAL);
            if (w <= 0) break;
            off += w;
          }
        }
    }
    ::close(up);
    ::close(c);
  }
  int server_port_;
  bool splice_;
  Listener listener_;  // last: it serves with the members above
};

Server* g_server;
FloorRelay* g_floor;
FloorRelay* g_splice_floor;
supervisor::WebProxy* g_proxy;

enum Path { kDirect = 0, kProxy = 1, kFloor = 2, kSpliceFloor = 3 };
const char* PathName(int64_t p) {
  return p == kDirect  ? "direct"
         : p == kProxy ? "through the proxy"
         : p == kFloor ? "through the floor relay (copy)"
                       : "through the floor relay (splice)";
}

// One GET of `bytes` bytes, direct to the server, through the proxy or
// through the floor relay; the bytes received.
uint64_t Get(int64_t path, uint64_t bytes) {
  int s = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::string req;
  if (path == kProxy) {
    socklen_t len = sizeof a;
    ::bind(s, reinterpret_cast<sockaddr*>(&a), len);  // port 0: any
    ::getsockname(s, reinterpret_cast<sockaddr*>(&a), &len);
    g_proxy->peers()->Expect(ntohs(a.sin_port));
    a.sin_port = htons(g_proxy->peers()->endpoint().port);
    req = "GET http://bench.example:" + std::to_string(g_server->port()) + "/" +
          std::to_string(bytes) + " HTTP/1.1\r\n\r\n";
  } else {
    a.sin_port = htons(static_cast<uint16_t>(path == kFloor         ? g_floor->port()
                                             : path == kSpliceFloor ? g_splice_floor->port()
                                                                    : g_server->port()));
    req = "GET /" + std::to_string(bytes) + " HTTP/1.1\r\nHost: x\r\n\r\n";
  }
  ::connect(s, reinterpret_cast<sockaddr*>(&a), sizeof a);
  (void)!::send(s, req.data(), req.size(), MSG_NOSIGNAL);
  static thread_local std::vector<char> buf(1 << 18);
  uint64_t got = 0;
  for (ssize_t n; (n = ::recv(s, buf.data(), buf.size(), 0)) > 0;) got += static_cast<uint64_t>(n);
  ::close(s);
  return got;
}

void BM_Download(benchmark::State& state) {
  const int64_t path = state.range(0);
  const uint64_t bytes = static_cast<uint64_t>(state.range(1)) << 20;
  for (auto _ : state) {
    if (Get(path, bytes) < bytes) state.SkipWithError("short download");
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * bytes));
  state.SetLabel(PathName(path));
}
BENCHMARK(BM_Download)
    ->Args({kDirect, 200})
    ->Args({kFloor, 200})
    ->Args({kSpliceFloor, 200})
    ->Args({kProxy, 200})
    ->Unit(benchmark::kMillisecond)
    ->MinTime(3)
    ->UseRealTime();

void BM_Request(benchmark::State& state) {
  const int64_t path = state.range(0);
  for (auto _ : state) benchmark::DoNotOptimize(Get(path, 2));
  state.SetLabel(PathName(path));
}
BENCHMARK(BM_Request)
    ->Arg(kDirect)
    ->Arg(kFloor)
    ->Arg(kProxy)
    ->Unit(benchmark::kMicrosecond)
    ->MinTime(2)
    ->UseRealTime();

}  // namespace

int main(int argc, char** argv) {
  Server server;
  g_server = &server;
  FloorRelay floor(server.port(), /*splice=*/false), splice_floor(server.port(), /*splice=*/true);
  g_floor = &floor;
  g_splice_floor = &splice_floor;
  supervisor::WebProxyOptions o;
  o.network = policy::Network::kPublicWeb;
  o.grant.max_response_bytes = std::size_t{1} << 32;
  o.grant.max_connections = 256;
  o.resolver = std::make_shared<FixedResolver>();
  o.also_public = policy::ParseIpPrefix("127.0.0.1/32");
  auto proxy = supervisor::WebProxy::Start(std::move(o));
  if (!proxy) return 1;
  g_proxy = proxy.value().get();
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
