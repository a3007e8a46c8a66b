#include "supervisor/approvals/socket_approver.h"

#include "policy/approval_protocol.h"
#include "policy/digest.h"
#include "policy/json_fields.h"
#include "supervisor/seqpacket.h"

namespace cordon::supervisor {

using policy::DigestEquals;
using policy::HelloMessage;
using policy::RequestMessage;
using policy::CheckHello;
namespace {

// Waits for one message; maps every way of not getting one to an outcome.
std::optional<Outcome> Await(int fd, int cancel_fd, std::chrono::steady_clock::time_point deadline,
                             nlohmann::json& msg, std::string* note) {
  switch (WaitReadable(fd, cancel_fd, deadline)) {
    case 0: *note = "no answer before the deadline"; return Outcome::kTimeout;
    case 2: *note = "request withdrawn"; return Outcome::kCancelled;
    case 1: break;
    default: *note = "poll failed"; return Outcome::kDisconnected;
  }
  auto got = RecvMessage(fd);
  if (!got) {
    *note = "approver connection lost: " + Describe(got.error());
    return Outcome::kDisconnected;
  }
  msg = std::move(got.value());
  return std::nullopt;
}

}  // namespace

Outcome SocketApprover::Decide(const ApprovalRequest& req,
                               std::chrono::steady_clock::time_point deadline, int cancel_fd,
                               std::string* note) {
  auto fd = ConnectSeqpacket(path_);
  if (!fd) {
    *note = "cannot reach the approver: " + Describe(fd.error());
    return Outcome::kDisconnected;
  }
  if (!SendMessage(fd->get(), HelloMessage("run")).ok()) {
    *note = "approver connection lost";
    return Outcome::kDisconnected;
  }
  nlohmann::json msg;
  if (auto o = Await(fd->get(), cancel_fd, deadline, msg, note)) return *o;
  if (std::string why = CheckHello(msg); !why.empty()) {
    *note = why;
    return Outcome::kDisconnected;
  }
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      deadline - std::chrono::steady_clock::now());
  if (!SendMessage(fd->get(), RequestMessage(req, left.count())).ok()) {
    *note = "approver connection lost";
    return Outcome::kDisconnected;
  }
  auto o = Await(fd->get(), cancel_fd, deadline, msg, note);
  if (o) {
    // Tell the service the request is dead so no one answers it later; the
    // closing connection says so too.
    if (*o == Outcome::kTimeout || *o == Outcome::kCancelled) {
      (void)SendMessage(fd->get(), {{"type", "cancel"}, {"id", req.request_id}});
    }
    return *o;
  }
  std::string type = policy::StringField(msg, "type");
  if (type == "error") {
    *note = "service error: " + policy::StringField(msg, "message", "?");
    return Outcome::kDenied;
  }
  if (type != "answer") {
    *note = "unexpected message " + type;
    return Outcome::kDenied;
  }
  bool id_ok = msg.contains("id") && msg["id"].is_number_unsigned() &&
               msg["id"].get<uint64_t>() == req.request_id;
  bool digest_ok = msg.contains("digest") && msg["digest"].is_string() &&
                   DigestEquals(msg["digest"].get<std::string>(), req.preview_digest);
  std::string decision = policy::StringField(msg, "decision");
  if (decision == "deny" && id_ok) {
    *note = "denied by the approver";
    return Outcome::kDenied;
  }
  if (!id_ok || !digest_ok || decision == "stale") {
    *note = "answer for another request id or preview digest";
    return Outcome::kStale;
  }
  if (decision == "allow-once") return Outcome::kAllowedOnce;
  *note = "unknown decision " + decision;
  return Outcome::kDenied;
}

}  // namespace cordon::supervisor
