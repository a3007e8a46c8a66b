#include "supervisor/approvals/seqpacket.h"

#include <sys/socket.h>
#include <sys/un.h>

#include <cstring>

namespace cordon::supervisor {

using policy::kMaxMessageBytes;

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

Status SendMessage(int fd, const nlohmann::json& msg) {
  std::string s = msg.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  if (s.size() > kMaxMessageBytes) return SysError{EMSGSIZE, "send"};
  for (;;) {
    ssize_t n = ::send(fd, s.data(), s.size(), MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Errno("send");
    return Ok();
  }
}

Result<nlohmann::json> RecvMessage(int fd) {
  std::string buf(kMaxMessageBytes + 1, '\0');
  ssize_t n;
  do {
    n = ::recv(fd, buf.data(), buf.size(), MSG_TRUNC);
  } while (n < 0 && errno == EINTR);
  if (n < 0) return Errno("recv");
  if (n == 0) return SysError{ECONNRESET, "recv", "peer closed the connection"};
  if (static_cast<size_t>(n) > kMaxMessageBytes) return SysError{EBADMSG, "recv", "message too large"};
  buf.resize(static_cast<size_t>(n));
  nlohmann::json j = nlohmann::json::parse(buf, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object() || !j.contains("type") || !j["type"].is_string()) {
    return SysError{EBADMSG, "recv", "not a protocol message"};
  }
  return j;
}

}  // namespace cordon::supervisor
