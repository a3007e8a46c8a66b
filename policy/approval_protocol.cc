#include "policy/approval_protocol.h"

#include <sys/socket.h>
#include <sys/un.h>

#include <cstring>

#include "policy/digest.h"

namespace cordon::policy {

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

nlohmann::json HelloMessage(const char* role) {
  return {{"type", "hello"}, {"version", kApprovalProtocolVersion}, {"role", role}};
}

std::string CheckHello(const nlohmann::json& msg) {
  if (msg.value("type", "") == "error") return "service error: " + msg.value("message", "?");
  if (msg.value("type", "") != "hello") return "expected hello";
  if (!msg.contains("version") || msg["version"] != kApprovalProtocolVersion) {
    return "unsupported protocol version (want " + std::to_string(kApprovalProtocolVersion) + ")";
  }
  return {};
}

nlohmann::json RequestMessage(const ApprovalRequest& req, int64_t timeout_ms) {
  return {{"type", "request"},
          {"id", req.request_id},
          {"digest", req.preview_digest},
          {"preview", req.preview.ToJson()},
          {"tool_pid", req.tool_pid},
          {"tool_argv0", req.tool_argv0},
          {"timeout_ms", timeout_ms}};
}

std::optional<ApprovalRequest> ParseRequest(const nlohmann::json& msg) {
  if (!msg.contains("id") || !msg["id"].is_number_unsigned() || !msg.contains("digest") ||
      !msg["digest"].is_string() || !msg.contains("preview")) {
    return std::nullopt;
  }
  auto preview = DeletePreview::FromJson(msg["preview"]);
  if (!preview) return std::nullopt;
  ApprovalRequest r;
  r.request_id = msg["id"].get<uint64_t>();
  r.preview = std::move(*preview);
  r.preview_digest = msg["digest"].get<std::string>();
  if (!DigestEquals(r.preview_digest, r.preview.Digest())) return std::nullopt;
  if (msg.contains("tool_pid") && msg["tool_pid"].is_number_integer()) {
    r.tool_pid = msg["tool_pid"].get<int>();
  }
  if (msg.contains("tool_argv0") && msg["tool_argv0"].is_string()) {
    r.tool_argv0 = msg["tool_argv0"].get<std::string>();
  }
  return r;
}

nlohmann::json ErrorMessage(const std::string& message) {
  return {{"type", "error"}, {"message", message}};
}

}  // namespace cordon::policy
