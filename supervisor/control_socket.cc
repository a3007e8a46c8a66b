#include "supervisor/control_socket.h"

#include <fcntl.h>
#include <poll.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>

namespace cordon::supervisor {
namespace {

constexpr size_t kMaxControlBytes = 64 * 1024;
constexpr size_t kMaxFds = 4;

// "/proc/self/fd/N/control.sock": short whatever the directory's path.
Result<sockaddr_un> Address(int dir_fd) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  const std::string path = "/proc/self/fd/" + std::to_string(dir_fd) + "/" + kControlSocketName;
  if (path.size() >= sizeof addr.sun_path) return SysError{ENAMETOOLONG, "control socket", path};
  std::memcpy(addr.sun_path, path.data(), path.size());
  return addr;
}

}  // namespace

Status SendControl(int sock, const nlohmann::json& msg, const std::vector<int>& fds) {
  if (fds.size() > kMaxFds) return SysError{EINVAL, "send", "too many descriptors"};
  std::string s = msg.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  if (s.size() > kMaxControlBytes) return SysError{EMSGSIZE, "send"};
  iovec iov{s.data(), s.size()};
  msghdr m{};
  m.msg_iov = &iov;
  m.msg_iovlen = 1;
  alignas(cmsghdr) char buf[CMSG_SPACE(sizeof(int) * kMaxFds)] = {};
  if (!fds.empty()) {
    m.msg_control = buf;
    m.msg_controllen = CMSG_SPACE(sizeof(int) * fds.size());
    cmsghdr* c = CMSG_FIRSTHDR(&m);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int) * fds.size());
    std::memcpy(CMSG_DATA(c), fds.data(), sizeof(int) * fds.size());
  }
  for (;;) {
    ssize_t n = ::sendmsg(sock, &m, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Errno("send");
    return Ok();
  }
}

Result<ControlMessage> RecvControl(int sock, int stop) {
  while (stop >= 0) {
    pollfd fds[2] = {{sock, POLLIN, 0}, {stop, POLLIN, 0}};
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return Errno("poll");
    }
    if (fds[1].revents) return SysError{ECANCELED, "recv", "the run is ending"};
    if (fds[0].revents) break;
  }
  std::string data(kMaxControlBytes + 1, '\0');
  iovec iov{data.data(), data.size()};
  msghdr m{};
  m.msg_iov = &iov;
  m.msg_iovlen = 1;
  alignas(cmsghdr) char buf[CMSG_SPACE(sizeof(int) * kMaxFds)] = {};
  m.msg_control = buf;
  m.msg_controllen = sizeof buf;
  ssize_t n;
  do {
    n = ::recvmsg(sock, &m, MSG_CMSG_CLOEXEC | MSG_TRUNC);
  } while (n < 0 && errno == EINTR);
  if (n < 0) return Errno("recv");
  ControlMessage out;
  for (cmsghdr* c = CMSG_FIRSTHDR(&m); c != nullptr; c = CMSG_NXTHDR(&m, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
    const size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (size_t i = 0; i < count; ++i) {
      int fd;
      std::memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
      out.fds.emplace_back(fd);
    }
  }
  if (n == 0) return SysError{ECONNRESET, "recv", "peer closed the connection"};
  if (static_cast<size_t>(n) > kMaxControlBytes || (m.msg_flags & MSG_CTRUNC)) {
    return SysError{EBADMSG, "recv", "message too large"};
  }
  data.resize(static_cast<size_t>(n));
  out.body = nlohmann::json::parse(data, nullptr, /*allow_exceptions=*/false);
  if (out.body.is_discarded() || !out.body.is_object() || !out.body.contains("type") ||
      !out.body["type"].is_string()) {
    return SysError{EBADMSG, "recv", "not a control message"};
  }
  return out;
}

Result<Fd> ConnectControl(int dir_fd) {
  auto addr = Address(dir_fd);
  if (!addr) return addr.error();
  Fd fd(::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0));
  if (!fd) return Errno("socket");
  if (::connect(fd.get(), reinterpret_cast<sockaddr*>(&addr.value()), sizeof(sockaddr_un)) != 0) {
    return Errno("connect");
  }
  return fd;
}

Result<std::unique_ptr<ControlSocket>> ControlSocket::Listen(int dir_fd, Handler handler) {
  std::unique_ptr<ControlSocket> s(new ControlSocket);
  s->dir_ = Fd(::fcntl(dir_fd, F_DUPFD_CLOEXEC, 0));
  if (!s->dir_) return Errno("dup");
  auto addr = Address(s->dir_.get());
  if (!addr) return addr.error();
  // A socket left by a cordon that was killed: ours now.
  (void)::unlinkat(s->dir_.get(), kControlSocketName, 0);
  s->listener_ = Fd(::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0));
  if (!s->listener_) return Errno("socket");
  if (::bind(s->listener_.get(), reinterpret_cast<sockaddr*>(&addr.value()), sizeof(sockaddr_un)) !=
      0) {
    return Errno("bind", kControlSocketName);
  }
  // The directory (0700) keeps others out already; the socket says so too.
  if (::fchmodat(s->dir_.get(), kControlSocketName, 0600, 0) != 0) return Errno("chmod");
  if (::listen(s->listener_.get(), 4) != 0) return Errno("listen");
  int p[2];
  if (::pipe2(p, O_CLOEXEC) != 0) return Errno("pipe");
  s->stop_read_ = Fd(p[0]);
  s->stop_write_ = Fd(p[1]);
  s->handler_ = std::move(handler);
  s->thread_ = std::thread([raw = s.get()] { raw->Serve(); });
  return s;
}

ControlSocket::~ControlSocket() {
  if (thread_.joinable()) {
    stop_write_.reset();  // EOF on stop_read_
    // A connection being served is ended under it: its handler's next
    // read or write fails, and it returns.
    thread_.join();
  }
  if (dir_) (void)::unlinkat(dir_.get(), kControlSocketName, 0);
}

void ControlSocket::Serve() {
  for (;;) {
    pollfd fds[2] = {{listener_.get(), POLLIN, 0}, {stop_read_.get(), POLLIN, 0}};
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return;
    }
    if (fds[1].revents) return;
    if (!(fds[0].revents & POLLIN)) continue;
    Fd conn(::accept4(listener_.get(), nullptr, nullptr, SOCK_CLOEXEC));
    if (!conn) continue;
    ucred cred{};
    socklen_t len = sizeof cred;
    if (::getsockopt(conn.get(), SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 ||
        !PeerMayControl(cred.uid, ::getuid())) {
      spdlog::warn("control socket: refused a peer of uid {}: not the run's owner", cred.uid);
      (void)SendControl(
          conn.get(), {{"type", "refused"},
                       {"message", "uid " + std::to_string(cred.uid) + " does not own this run"}});
      // What the peer sent is read (and dropped) before the close: a
      // socket closed with unread data resets its peer, which would then
      // lose the refusal. A second at most.
      (void)::shutdown(conn.get(), SHUT_WR);
      for (int i = 0; i < 4; ++i) {
        pollfd p{conn.get(), POLLIN, 0};
        char drop[256];
        if (::poll(&p, 1, 250) <= 0 || ::recv(conn.get(), drop, sizeof drop, MSG_DONTWAIT) <= 0)
          break;
      }
      continue;
    }
    handler_(conn.get(), stop_read_.get());
  }
}

}  // namespace cordon::supervisor
