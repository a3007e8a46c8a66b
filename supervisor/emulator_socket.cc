// connect(2) and bind(2), made by the supervisor on a copy of the tool's
// socket (the same open socket: pidfd_getfd), never let through: between a
// check and CONTINUE the tool could dup2 another socket onto the fd number
// or rewrite the address in its memory.
//
// Unix sockets, under either network mode. Landlock (ABI 7) does not fence
// a socket's name, so the kernel would let a root tool connect to any
// daemon on the host (systemd's private socket, D-Bus, docker, cordon
// policyd, which would take its own approval) and bind a name in a
// protected place. Names beneath the writable roots only:
//   - connect opens the name beneath its root without following anything,
//     checks that it is a socket with no other name (a hard link planted
//     before the run could name one outside), and connects through
//     /proc/self/fd to that very inode: a name swapped for a symlink
//     meanwhile is never followed;
//   - bind creates the name in the parent directory held open beneath its
//     root, after the protected-path check, with the tool's umask, and
//     with the tool's string for the socket's address (socket_bind.h).
// Abstract names are refused: nothing fences them off the host's without
// Landlock's scope, and the supervisor's own calls are not scoped. The
// unnamed autobind (an address of the family alone) is made as asked.
// The peer of a connection made here sees the supervisor's credentials
// (SO_PEERCRED), not the tool's.
//
// Other families (network allow only: the filter refuses them under none)
// are made as asked, on a thread of NotifyLoop's capless pool with the
// socket copy and address checked here, so the kernel refuses what it
// would refuse the tool: a bind below ip_unprivileged_port_start, a netlink
// group that needs CAP_NET_ADMIN.
//
// A connect on a blocking socket may wait as long as the tool's own would
// (a full backlog, a SYN timeout): it runs on a deferred thread, so other
// calls are answered meanwhile, and a stopping supervisor interrupts it.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <cstddef>
#include <cstring>
#include <optional>

#include <spdlog/spdlog.h>

#include "supervisor/caps.h"
#include "policy/loopback.h"
#include "policy/socket_name.h"
#include "supervisor/emulator.h"
#include "supervisor/loopback_facts.h"
#include "supervisor/net/proxy_peers.h"
#include "supervisor/socket_bind.h"
#include "supervisor/socket_stand_in.h"
#include "supervisor/tool_creds.h"
#include "supervisor/tool_fd.h"
#include "supervisor/tool_memory.h"

namespace cordon::supervisor {
namespace {

constexpr size_t kPathOffset = offsetof(sockaddr_un, sun_path);

// The call on our copy of the tool's socket, to the name `target` (a path
// through /proc/self/fd, short enough for sun_path): 0 or -1 with errno.
int CallOnSocket(int sock, const std::string& target, bool bind) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (target.size() >= sizeof addr.sun_path) {
    errno = ENAMETOOLONG;
    return -1;
  }
  std::memcpy(addr.sun_path, target.data(), target.size());
  auto len = static_cast<socklen_t>(kPathOffset + target.size() + 1);
  auto* sa = reinterpret_cast<const sockaddr*>(&addr);
  return bind ? ::bind(sock, sa, len) : ::connect(sock, sa, len);
}

// The local port of the tool's socket `s` (of `domain`) for a connect to
// the web proxy: bound to loopback first when it is not bound yet; -errno
// when it cannot be.
int ToolProxyPort(int s, int domain) {
  sockaddr_storage name{};
  socklen_t nlen = sizeof name;
  if (::getsockname(s, reinterpret_cast<sockaddr*>(&name), &nlen) != 0) return -errno;
  policy::InetEndpoint e;
  if (policy::ParseInetEndpoint(&name, nlen, &e) == policy::InetParse::kInet && e.port != 0) {
    return e.port;
  }
  sockaddr_storage lo{};
  socklen_t lolen;
  if (domain == AF_INET6) {
    auto& a = reinterpret_cast<sockaddr_in6&>(lo);
    a.sin6_family = AF_INET6;
    a.sin6_addr.s6_addr[10] = a.sin6_addr.s6_addr[11] = 0xff;  // ::ffff:127.0.0.1
    a.sin6_addr.s6_addr[12] = 127;
    a.sin6_addr.s6_addr[15] = 1;
    lolen = sizeof a;
  } else {
    auto& a = reinterpret_cast<sockaddr_in&>(lo);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    lolen = sizeof a;
  }
  if (::bind(s, reinterpret_cast<sockaddr*>(&lo), lolen) != 0) return -errno;
  nlen = sizeof name;
  if (::getsockname(s, reinterpret_cast<sockaddr*>(&name), &nlen) != 0) return -errno;
  if (policy::ParseInetEndpoint(&name, nlen, &e) != policy::InetParse::kInet) return -EINVAL;
  return e.port;
}

// bind(2) of `sock` to the name the tool wrote, `written`, made as `name`
// in the held directory `parent`: 0 or an errno. Where the scratch root
// cannot be made (supervisor/socket_bind.h), through /proc/self/fd: the
// same name in the same place, with that path for its address.
int BindNamed(int sock, int parent, const std::string& written, const std::string& name) {
  if (auto layout = policy::MirrorSocketName(written, name)) {
    Result<int> r = BindAsWritten(sock, parent, written, *layout);
    if (r) return r.value();
    static std::atomic<bool> said{false};
    if (!said.exchange(true)) {
      // At info, as the other fallbacks in a container are: most programs
      // never ask (Python's forkserver keeps the name it bound).
      spdlog::info(
          "a Unix socket bound in this run shows /proc/self/fd/N/NAME as its address "
          "(getsockname), not the path it was bound to: {} failed ({}); programs that "
          "pass their listener's address on (Python's multiprocessing) then fail",
          r.error().op, std::strerror(r.error().err));
    }
  }
  return CallOnSocket(sock, ProcPath(parent) + "/" + name, true) == 0 ? 0 : errno;
}

Reply AbstractRefused(const std::string& what) {
  return Reply::Errno(EACCES, what +
                                  " to an abstract Unix socket name: only names beneath the "
                                  "writable paths are reachable");
}

}  // namespace

Reply NoPidfdGetfd(const std::string& what) {
  static std::atomic<bool> said{false};
  if (!said.exchange(true)) {
    spdlog::warn("{} fails with EBADF here: this container's seccomp profile refuses "
                 "pidfd_getfd, and the supervisor needs the tool's own descriptor to make it; "
                 "run the container with --cap-add SYS_PTRACE (Docker's default profile then "
                 "allows pidfd_getfd)",
                 what);
  }
  return Reply::Errno(EBADF);
}

Reply Emulator::SocketName(const Request& req, int tool_fd, uint64_t addr_ptr, uint64_t len,
                           bool bind, const std::function<bool()>& valid) {
  const std::string what = bind ? "bind" : "connect";
  sockaddr_storage addr{};
  if (len > sizeof addr) return Reply::Errno(EINVAL);
  if (len > 0 && !ReadToolBytes(req.tid, addr_ptr, &addr, len)) return Reply::Errno(EFAULT);
  auto creds = ReadToolCreds(req.tid);
  if (!valid()) return Reply::Errno(EACCES, "stale");
  if (!creds) return Reply::Errno(ESRCH);
  auto sock = GetToolFd(creds->tgid, tool_fd);
  // No pidfd_getfd: the call is made on a stand-in of the tool's socket,
  // installed at its number once it succeeds (supervisor/socket_stand_in.h).
  int install_at = -1;
  uint32_t install_flags = 0;
  if (!sock && sock.error().err != EBADF && sock.error().err != ESRCH) {
    auto in = MakeInetStandIn(stand_ins_, creds->tgid, tool_fd, StandInDatagrams());
    if (!valid()) return Reply::Errno(EACCES, "stale");
    if (!in && in.error().err == EAFNOSUPPORT) {
      return StandInName(req, creds->tgid, tool_fd, addr, len, bind, valid);
    }
    if (!in) return Reply::Errno(in.error().err);
    sock = std::move(in->sock);
    install_at = in->install_at;
    install_flags = in->install_flags;
  }
  if (!sock) return Reply::Errno(EBADF);
  int domain = 0;
  socklen_t dlen = sizeof domain;
  if (::getsockopt(sock->get(), SOL_SOCKET, SO_DOMAIN, &domain, &dlen) != 0) {
    return Reply::Errno(errno);  // ENOTSOCK, as the kernel says
  }
  bool blocking = !bind && !(::fcntl(sock->get(), F_GETFL) & O_NONBLOCK);
  if (domain == AF_UNIX) {
    const auto& sun = reinterpret_cast<const sockaddr_un&>(addr);
    if (len < kPathOffset || len > sizeof sun || sun.sun_family != AF_UNIX) {
      return Reply::Errno(EINVAL);
    }
    size_t n = len - kPathOffset;
    if (n == 0) {
      if (!bind) return Reply::Errno(EINVAL);
      // Autobind: the kernel picks a fresh abstract name.
      return ::bind(sock->get(), reinterpret_cast<const sockaddr*>(&sun),
                    static_cast<socklen_t>(kPathOffset)) == 0
                 ? Reply{}
                 : Reply::Errno(errno);
    }
    if (sun.sun_path[0] == '\0') return AbstractRefused(what);
    std::string path(sun.sun_path, ::strnlen(sun.sun_path, n));
    if (!blocking) return UnixName(req, sock->get(), path, bind, valid);
    // It may wait (a full backlog): on a worker, with the socket held.
    auto held = std::make_shared<Fd>(std::move(sock.value()));
    return Later([this, req, held, path, bind, valid] {
      return UnixName(req, held->get(), path, bind, valid);
    });
  }
  // The network rule (policy/loopback.h): under none, the tool's own
  // loopback only; under public-web and hosts:, the web proxy too.
  const bool none = policy::NetworkFenced(rules().network);
  policy::NetRequest nr;
  nr.mode = rules().network;
  nr.op = bind ? policy::NetOp::kBind : policy::NetOp::kConnect;
  nr.parsed = policy::ParseInetEndpoint(&addr, len, &nr.endpoint);
  if (opts_.web_proxy) nr.proxy = &opts_.web_proxy->endpoint();
  // A UDP socket: made in the run's private loopback, or not the run's
  // (emulator_udp.cc).
  int sock_type = 0;
  socklen_t stlen = sizeof sock_type;
  nr.datagram = none && (domain == AF_INET || domain == AF_INET6) &&
                ::getsockopt(sock->get(), SOL_SOCKET, SO_TYPE, &sock_type, &stlen) == 0 &&
                sock_type == SOCK_DGRAM;
  if (nr.datagram) {
    LoopbackNetns* ns = MadeLoopback();
    nr.private_loopback = ns != nullptr && ns->Holds(sock->get());
  }
  bool to_loopback = none && !bind && !nr.datagram && nr.parsed == policy::InetParse::kInet &&
                     (domain == AF_INET || domain == AF_INET6) && policy::IsLoopback(nr.endpoint);
  std::shared_ptr<ProxyPeers> proxy;
  if (none) {
    if (domain != AF_INET && domain != AF_INET6) {
      return Reply::Errno(EACCES, what + ": a socket of another family than AF_UNIX, AF_INET "
                                         "and AF_INET6 under network " +
                                         policy::NetworkName(rules().network));
    }
    if (to_loopback && !(nr.proxy && nr.endpoint.port == nr.proxy->port)) {
      ListenerFacts f = GatherListenerFacts(creds->tgid, nr.endpoint);
      nr.listeners = f.listeners;
      nr.listeners_of_run = f.listeners_of_run;
    }
    policy::NetDecision d = policy::DecideNet(nr);
    if (!d.allow) return Reply::Errno(d.err, d.why, d.hint);
    if (d.on_loopback) policy::LoopbackForWildcard(&addr, len, DualStack(sock->get(), domain));
    if (d.to_proxy) {
      proxy = opts_.web_proxy;
      to_loopback = false;  // the proxy's listener is the supervisor's, for this run
    }
  }
  // Made on a thread of the capless pool (NotifyLoop), on the copy of the
  // socket and the address checked here. Dropping again there is a check
  // that costs one capset.
  auto held = std::make_shared<Fd>(std::move(sock.value()));
  const pid_t tgid = creds->tgid;
  auto call = [this, held, addr, len, bind, what, to_loopback, tgid, nr, proxy, domain, install_at,
               install_flags]() -> Reply {
    if (int rc = DropThreadCapabilities(); rc != 0) {
      return Reply::Errno(EACCES, what + ": cannot drop capabilities: " + std::strerror(-rc));
    }
    auto* sa = reinterpret_cast<const sockaddr*>(&addr);
    auto salen = static_cast<socklen_t>(len);
    int s = held->get();
    // A connection to the web proxy is the tool's by its local port,
    // recorded before it can arrive (proxy_peers.h).
    int proxy_port = proxy ? ToolProxyPort(s, domain) : 0;
    if (proxy && proxy_port < 0) return Reply::Errno(-proxy_port);
    if (proxy) proxy->Expect(static_cast<uint16_t>(proxy_port));
    int rc = blocking_.Run([&] { return bind ? ::bind(s, sa, salen) : ::connect(s, sa, salen); });
    int err = errno;
    if (proxy && rc != 0 && err != EINPROGRESS) proxy->Forget(static_cast<uint16_t>(proxy_port));
    if (to_loopback && (rc == 0 || err == EINPROGRESS)) {
      // Narrows the window between the check and the call: a listener
      // not of this run that took the port meanwhile gets no connection.
      // (One that is gone is fine: a server may stop listening once it
      // has accepted.)
      ListenerFacts f = GatherListenerFacts(tgid, nr.endpoint);
      if (f.listeners_of_run != f.listeners) {
        ::shutdown(s, SHUT_RDWR);
        return Reply::Errno(ECONNREFUSED, "connect to " + policy::FormatEndpoint(nr.endpoint) +
                                              " under network none: the listener there is not "
                                              "this run's");
      }
    }
    Reply r = rc == 0 ? Reply{} : Reply::Errno(err);
    if (install_at >= 0 && (rc == 0 || err == EINPROGRESS)) {
      // The stand-in goes in over the tool's socket; a bound stream one is
      // kept until the tool listens on it.
      int type = 0;
      socklen_t tlen = sizeof type;
      struct stat st;
      if (bind && ::getsockopt(s, SOL_SOCKET, SO_TYPE, &type, &tlen) == 0 && type == SOCK_STREAM &&
          ::fstat(s, &st) == 0) {
        Fd copy(::fcntl(s, F_DUPFD_CLOEXEC, 0));
        if (copy) stand_ins_.Keep(st.st_ino, std::move(copy));
      }
      r.install = Fd(::fcntl(s, F_DUPFD_CLOEXEC, 0));
      r.install_at = install_at;
      r.install_flags = install_flags;
      if (!r.install) return Reply::Errno(errno);
    }
    return r;
  };
  return Later(std::move(call), Reply::Worker::kCapless);
}

Reply Emulator::UnixName(const Request& req, int sock, const std::string& path, bool bind,
                         const std::function<bool()>& valid) {
  const std::string what = bind ? "bind" : "connect";
  auto p = Resolve(req, AT_FDCWD, path, false);
  if (!valid()) return Reply::Errno(EACCES, "stale");
  if (!p) {
    // glibc asks nscd first for every user and host lookup and falls back
    // by itself: of cordon's making, not the tool's, so not worth a line.
    if (!bind && (path == "/var/run/nscd/socket" || path == "/run/nscd/socket")) {
      return Reply::Errno(p.error().err);
    }
    return Reply::PathRefused(what + " to a Unix socket: ", p.error());
  }
  if (p->loc.rel.empty()) return Reply::Errno(bind ? EADDRINUSE : ECONNREFUSED);
  auto parent = WriteRoots::OpenParent(p->loc);
  if (!parent) return Reply::Errno(parent.error().err);
  if (!bind) {
    // The inode itself, never through a symlink: the name may change under us.
    Fd target(::openat(parent->get(), p->loc.name.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC));
    if (!target) return Reply::Errno(errno);
    struct stat st;
    if (::fstat(target.get(), &st) != 0) return Reply::Errno(errno);
    if (S_ISLNK(st.st_mode))
      return Reply::Errno(EACCES, "connect to " + p->abs + ": symbolic link");
    if (!S_ISSOCK(st.st_mode)) return Reply::Errno(ECONNREFUSED);
    // A second name, planted before the run, for a socket outside.
    if (st.st_nlink > 1)
      return Reply::Errno(EACCES, "connect to " + p->abs + ": hard-linked socket");
    std::string name = ProcPath(target.get());
    return blocking_.Run([&] { return CallOnSocket(sock, name, false); }) == 0
               ? Reply{}
               : Reply::Errno(errno);
  }
  if (Protected(p->loc)) return Reply::Errno(EACCES, "bind " + p->abs + ": protected path");
  auto tool_umask = umask_.Get(req.tid, valid);
  if (!tool_umask) return Reply::Errno(EACCES, "stale");
  // The socket's inode mode becomes the file's, less the caller's umask.
  struct stat sst;
  if (::fstat(sock, &sst) == 0) {
    (void)::fchmod(sock, sst.st_mode & 0777 & ~tool_umask.value());
  }
  if (int err = BindNamed(sock, parent->get(), path, p->loc.name); err != 0) {
    return Reply::Errno(err);
  }
  struct stat st;
  if (::fstatat(parent->get(), p->loc.name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) {
    Born(st);
    NoteCreated(p->loc, st);
  }
  return Reply{};
}

Reply Emulator::StandInName(const Request& req, pid_t tgid, int tool_fd,
                            const sockaddr_storage& addr, uint64_t len, bool bind,
                            const std::function<bool()>& valid) {
  const std::string what = bind ? "bind" : "connect";
  auto tool = ReadToolUnixSocket(tgid, tool_fd);
  if (!valid()) return Reply::Errno(EACCES, "stale");
  if (!tool && tool.error().err == EAFNOSUPPORT) return NoPidfdGetfd(what + " on this socket");
  if (!tool) return Reply::Errno(tool.error().err == ENOTSOCK ? ENOTSOCK : EBADF);
  const auto& sun = reinterpret_cast<const sockaddr_un&>(addr);
  if (len < kPathOffset || len > sizeof sun || sun.sun_family != AF_UNIX) {
    return Reply::Errno(EINVAL);
  }
  const int type = tool->line.type;
  if (type != SOCK_STREAM && type != SOCK_SEQPACKET) return Reply::Errno(EBADF);
  // A stand-in bound earlier that the tool now connects: the same socket.
  std::optional<Fd> kept = stand_ins_.Take(tool->ino);
  auto put_back = [&] {
    if (kept) stand_ins_.Keep(tool->ino, std::move(*kept));
  };
  if (tool->line.named && (bind || !kept)) {
    put_back();
    return Reply::Errno(bind ? EINVAL : EBADF);  // bound already: as the kernel says for bind
  }
  const size_t n = len - kPathOffset;
  if (n > 0 && sun.sun_path[0] == '\0') {
    put_back();
    return AbstractRefused(what);
  }
  if (n == 0 && !bind) return Reply::Errno(EINVAL);
  // The call itself, on the stand-in kept or a new one: a connect on a
  // blocking socket may wait as long as the tool's own would, so it runs
  // on a worker, holding the stand-in taken here.
  auto held = std::make_shared<std::optional<Fd>>(std::move(kept));
  auto call = [this, req, tool_fd, addr, n, bind, valid, t = tool.value(), held]() -> Reply {
    const auto& sun = reinterpret_cast<const sockaddr_un&>(addr);
    std::optional<Fd>& kept = *held;
    Fd sock = kept ? std::move(*kept)
                   : Fd(::socket(AF_UNIX,
                                 t.line.type | SOCK_CLOEXEC | (t.nonblock ? SOCK_NONBLOCK : 0), 0));
    if (!sock) return Reply::Errno(errno);
    Reply r;
    if (n == 0) {
      // Autobind: the kernel picks a fresh abstract name.
      if (::bind(sock.get(), reinterpret_cast<const sockaddr*>(&sun),
                 static_cast<socklen_t>(kPathOffset)) != 0) {
        r = Reply::Errno(errno);
      }
    } else {
      r = UnixName(req, sock.get(), std::string(sun.sun_path, ::strnlen(sun.sun_path, n)), bind,
                   valid);
    }
    if (r.error != 0) {
      if (kept) stand_ins_.Keep(t.ino, std::move(sock));
      return r;
    }
    if (kept) return r;  // the tool's descriptor names it already
    if (bind) {
      struct stat st;
      Fd copy(::fcntl(sock.get(), F_DUPFD_CLOEXEC, 0));
      if (copy && ::fstat(sock.get(), &st) == 0) stand_ins_.Keep(st.st_ino, std::move(copy));
    }
    r.install = std::move(sock);
    r.install_at = tool_fd;
    r.install_flags = t.cloexec ? O_CLOEXEC : 0;
    return r;
  };
  if (!bind && !tool->nonblock) return Later(std::move(call));
  return call();
}

Reply Emulator::Listen(const Request& req, int tool_fd, int backlog) {
  auto creds = ReadToolCreds(req.tid);
  if (!creds) return Reply::Errno(ESRCH);
  auto sock = GetToolFd(creds->tgid, tool_fd);
  int install_at = -1;
  uint32_t install_flags = 0;
  if (!sock && sock.error().err != EBADF && sock.error().err != ESRCH) {
    // No pidfd_getfd: a stand-in bound here is listened on (the tool's
    // descriptor names that very socket); an unbound socket's listen (an
    // implicit bind) on a fresh one, installed over the tool's. Both after
    // the same decision.
    auto in = MakeInetStandIn(stand_ins_, creds->tgid, tool_fd, StandInDatagrams());
    if (in) {
      sock = std::move(in->sock);
      install_at = in->install_at;
      install_flags = in->install_flags;
    } else if (in.error().err != EAFNOSUPPORT) {
      return Reply::Errno(in.error().err);
    } else {
      // AF_UNIX: only a stand-in bound here can listen.
      auto ino = ToolSocketInode(creds->tgid, tool_fd);
      std::optional<Fd> kept = ino ? stand_ins_.Take(ino.value()) : std::nullopt;
      if (!kept) return NoPidfdGetfd("listen on this socket");
      sock = std::move(*kept);
    }
  }
  if (!sock) return Reply::Errno(EBADF);
  int domain = 0;
  socklen_t dlen = sizeof domain;
  if (::getsockopt(sock->get(), SOL_SOCKET, SO_DOMAIN, &domain, &dlen) != 0) {
    return Reply::Errno(errno);
  }
  if (domain == AF_INET || domain == AF_INET6) {
    sockaddr_storage name{};
    socklen_t nlen = sizeof name;
    if (::getsockname(sock->get(), reinterpret_cast<sockaddr*>(&name), &nlen) != 0) {
      return Reply::Errno(errno);
    }
    policy::NetRequest nr;
    nr.mode = rules().network;
    nr.op = policy::NetOp::kListen;
    nr.parsed = policy::ParseInetEndpoint(&name, nlen, &nr.endpoint);
    int type = 0;
    socklen_t tlen = sizeof type;
    nr.datagram =
        ::getsockopt(sock->get(), SOL_SOCKET, SO_TYPE, &type, &tlen) == 0 && type == SOCK_DGRAM;
    LoopbackNetns* ns = nr.datagram ? MadeLoopback() : nullptr;
    nr.private_loopback = ns != nullptr && ns->Holds(sock->get());
    policy::NetDecision d = policy::DecideNet(nr);
    if (!d.allow) return Reply::Errno(d.err, d.why, d.hint);
    // Not bound yet: the kernel would bind it to the wildcard address.
    if (d.on_loopback && policy::LoopbackForWildcard(&name, nlen, DualStack(sock->get(), domain)) &&
        ::bind(sock->get(), reinterpret_cast<sockaddr*>(&name), nlen) != 0) {
      return Reply::Errno(errno);
    }
  }
  // On the copy: the socket the name was read from, whatever the tool's fd
  // number holds by now.
  if (::listen(sock->get(), backlog) != 0) return Reply::Errno(errno);
  Reply r;
  if (install_at >= 0) {  // a fresh stand-in, bound by the listen itself
    r.install = std::move(sock.value());
    r.install_at = install_at;
    r.install_flags = install_flags;
  }
  return r;
}

}  // namespace cordon::supervisor
