// The approval protocol's wire layer: versioned JSON messages, one per
// SOCK_SEQPACKET packet (docs/approvals.md describes the messages). Shared
// by the socket approver (a run), the policy service and `cordon approve`.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "policy/approval.h"
#include "policy/fd.h"
#include "policy/result.h"

namespace cordon::policy {

inline constexpr int kApprovalProtocolVersion = 1;
inline constexpr size_t kMaxMessageBytes = 256 * 1024;

// Connects a SOCK_SEQPACKET socket to `path` (close-on-exec, blocking).
Result<Fd> ConnectSeqpacket(const std::string& path);

// One message per packet. Send never raises SIGPIPE.
Status SendMessage(int fd, const nlohmann::json& msg);
// EOF is ECONNRESET; an oversized or non-JSON-object packet is EBADMSG.
Result<nlohmann::json> RecvMessage(int fd);

nlohmann::json HelloMessage(const char* role);  // role: "run", "approver", "service"
// Empty when `msg` is an acceptable hello, else the reason.
std::string CheckHello(const nlohmann::json& msg);

nlohmann::json RequestMessage(const ApprovalRequest& req, int64_t timeout_ms);
// Null unless every field is present and the digest matches the preview.
std::optional<ApprovalRequest> ParseRequest(const nlohmann::json& msg);

nlohmann::json ErrorMessage(const std::string& message);

}  // namespace cordon::policy
