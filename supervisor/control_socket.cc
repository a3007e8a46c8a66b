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

// "/proc/self/fd/N/control.sock": short whatever the directory's path.
std::string Path(int dir_fd) {
  return "/proc/self/fd/" + std::to_string(dir_fd) + "/" + kControlSocketName;
}

Result<sockaddr_un> Address(int dir_fd) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  const std::string path = Path(dir_fd);
  if (path.size() >= sizeof addr.sun_path) return SysError{ENAMETOOLONG, "control socket", path};
  std::memcpy(addr.sun_path, path.data(), path.size());
  return addr;
}

}  // namespace

Result<Fd> ConnectControl(int dir_fd) { return ConnectSeqpacket(Path(dir_fd)); }

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
