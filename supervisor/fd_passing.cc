#include "supervisor/fd_passing.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace cordon::supervisor {

int SendFdRawErrno(int sock, const void* data, std::size_t len, int fd) {
  iovec iov{const_cast<void*>(data), len};
  alignas(cmsghdr) char buf[CMSG_SPACE(sizeof(int))] = {};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  if (fd >= 0) {
    msg.msg_control = buf;
    msg.msg_controllen = sizeof buf;
    cmsghdr* c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    std::memcpy(CMSG_DATA(c), &fd, sizeof fd);
  }
  ssize_t n;
  do {
    n = ::sendmsg(sock, &msg, MSG_NOSIGNAL);
  } while (n < 0 && errno == EINTR);
  if (n < 0) return -errno;
  return static_cast<std::size_t>(n) == len ? 0 : -EPIPE;
}

Result<Fd> RecvFd(int sock, void* data, std::size_t len) {
  iovec iov{data, len};
  alignas(cmsghdr) char buf[CMSG_SPACE(sizeof(int))] = {};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = buf;
  msg.msg_controllen = sizeof buf;
  ssize_t n;
  do {
    n = ::recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
  } while (n < 0 && errno == EINTR);
  if (n < 0) return SysError{errno, "recvmsg"};
  if (n == 0) return SysError{EPIPE, "recvmsg"};
  cmsghdr* c = CMSG_FIRSTHDR(&msg);
  if (c == nullptr || c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS ||
      c->cmsg_len != CMSG_LEN(sizeof(int))) {
    return SysError{EPROTO, "recvmsg", "no descriptor"};
  }
  int fd;
  std::memcpy(&fd, CMSG_DATA(c), sizeof fd);
  return Fd(fd);
}

int ReadChildStatus(int fd, void* data, std::size_t len, int timeout_ms) {
  pollfd p{fd, POLLIN, 0};
  int ready;
  do {
    ready = ::poll(&p, 1, timeout_ms);
  } while (ready < 0 && errno == EINTR);
  if (ready == 0) return ETIMEDOUT;
  ssize_t n;
  do {
    n = ready > 0 ? ::read(fd, data, len) : -1;
  } while (n < 0 && errno == EINTR);
  return n == static_cast<ssize_t>(len) ? 0 : EPIPE;
}

}  // namespace cordon::supervisor
