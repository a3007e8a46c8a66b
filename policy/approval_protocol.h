// The approval protocol's messages: versioned JSON, one per SOCK_SEQPACKET
// packet (docs/approvals.md describes them). Shared by the socket approver
// (a run), the policy service and `cordon approve`. Pure: the socket that
// carries them is supervisor/seqpacket.h.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "policy/approval.h"

namespace cordon::policy {

inline constexpr int kApprovalProtocolVersion = 1;
inline constexpr size_t kMaxMessageBytes = 256 * 1024;

nlohmann::json HelloMessage(const char* role);  // role: "run", "approver", "service"
// Empty when `msg` is an acceptable hello, else the reason.
std::string CheckHello(const nlohmann::json& msg);

nlohmann::json RequestMessage(const ApprovalRequest& req, int64_t timeout_ms);
// Null unless every field is present and the digest matches the preview.
std::optional<ApprovalRequest> ParseRequest(const nlohmann::json& msg);

nlohmann::json ErrorMessage(const std::string& message);

}  // namespace cordon::policy
