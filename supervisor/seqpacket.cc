#include "supervisor/seqpacket.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <cstring>

namespace cordon::supervisor {

Result<Fd> ConnectSeqpacket(const std::string& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.empty() || path.size() >= sizeof addr.sun_path) {
    return SysError{ENAMETOOLONG, "connect", path};
  }
  std::memcpy(addr.sun_path, path.data(), path.size());
  Fd fd(::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0));
  if (!fd) return Errno("socket");
  if (::connect(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    return Errno("connect", path);
  }
  return fd;
}

Status SendPacket(int fd, const nlohmann::json& msg, std::size_t max_bytes,
                  const std::vector<int>& fds) {
  if (fds.size() > kMaxPacketFds) return SysError{EINVAL, "send", "too many descriptors"};
  std::string s = msg.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  if (s.size() > max_bytes) return SysError{EMSGSIZE, "send"};
  iovec iov{s.data(), s.size()};
  msghdr m{};
  m.msg_iov = &iov;
  m.msg_iovlen = 1;
  alignas(cmsghdr) char buf[CMSG_SPACE(sizeof(int) * kMaxPacketFds)] = {};
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
    ssize_t n = ::sendmsg(fd, &m, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Errno("send");
    return Ok();
  }
}

Result<Packet> RecvPacket(int fd, std::size_t max_bytes, std::size_t max_fds, int stop) {
  if (max_fds > kMaxPacketFds) return SysError{EINVAL, "recv", "too many descriptors"};
  while (stop >= 0) {
    pollfd fds[2] = {{fd, POLLIN, 0}, {stop, POLLIN, 0}};
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return Errno("poll");
    }
    if (fds[1].revents) return SysError{ECANCELED, "recv", "the run is ending"};
    if (fds[0].revents) break;
  }
  std::string data(max_bytes + 1, '\0');
  iovec iov{data.data(), data.size()};
  msghdr m{};
  m.msg_iov = &iov;
  m.msg_iovlen = 1;
  alignas(cmsghdr) char buf[CMSG_SPACE(sizeof(int) * kMaxPacketFds)] = {};
  if (max_fds > 0) {
    m.msg_control = buf;
    m.msg_controllen = CMSG_SPACE(sizeof(int) * max_fds);
  }
  ssize_t n;
  do {
    n = ::recvmsg(fd, &m, MSG_CMSG_CLOEXEC | MSG_TRUNC);
  } while (n < 0 && errno == EINTR);
  if (n < 0) return Errno("recv");
  Packet out;
  for (cmsghdr* c = max_fds > 0 ? CMSG_FIRSTHDR(&m) : nullptr; c != nullptr;
       c = CMSG_NXTHDR(&m, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
    const size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (size_t i = 0; i < count; ++i) {
      int received;
      std::memcpy(&received, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
      out.fds.emplace_back(received);
    }
  }
  if (n == 0) return SysError{ECONNRESET, "recv", "peer closed the connection"};
  if (static_cast<size_t>(n) > max_bytes) return SysError{EBADMSG, "recv", "message too large"};
  if (m.msg_flags & MSG_CTRUNC) {
    return SysError{EBADMSG, "recv", "more descriptors attached than the protocol takes"};
  }
  data.resize(static_cast<size_t>(n));
  out.body = nlohmann::json::parse(data, nullptr, /*allow_exceptions=*/false);
  if (out.body.is_discarded() || !out.body.is_object() || !out.body.contains("type") ||
      !out.body["type"].is_string()) {
    return SysError{EBADMSG, "recv", "not a protocol message"};
  }
  return out;
}

Result<nlohmann::json> RecvMessage(int fd) {
  auto p = RecvPacket(fd, policy::kMaxMessageBytes);
  if (!p) return p.error();
  return std::move(p->body);
}

}  // namespace cordon::supervisor
