#include "policy/approval_protocol.h"

#include "policy/digest.h"
#include "policy/json_fields.h"

namespace cordon::policy {

nlohmann::json HelloMessage(const char* role) {
  return {{"type", "hello"}, {"version", kApprovalProtocolVersion}, {"role", role}};
}

std::string CheckHello(const nlohmann::json& msg) {
  const std::string type = StringField(msg, "type");
  if (type == "error") return "service error: " + StringField(msg, "message", "?");
  if (type != "hello") return "expected hello";
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
