// The Approver every approval source implements: one-shot asks with
// cancellation and shutdown, recorded in the audit log (policy/approval.h
// has the request, the preview and the outcomes).
//
// Only Outcome::kAllowedOnce grants, and only for the request id and the
// preview digest it was given for. Everything else (deny, timeout,
// disconnect, cancel, a stale answer, shutdown) refuses, and nothing can be
// replayed: an Approver answers each request id at most once, ever.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <unordered_map>

#include "base/fd.h"
#include "policy/approval.h"

namespace cordon::supervisor {

using policy::ApprovalRequest;
using policy::DeletePreview;
using policy::Outcome;
using policy::OutcomeName;

class AuditLog;

// Thread-safe and blocking. The notify loop calls Ask from one worker thread
// per pending delete; Cancel/CancelAll from any thread make the matching
// asks return promptly. Subclasses implement Decide.
class Approver {
 public:
  virtual ~Approver();
  Approver(const Approver&) = delete;
  Approver& operator=(const Approver&) = delete;

  // Blocks until an outcome, at most about `timeout`. Records the request
  // and the outcome in the audit log when one is set (a request that cannot
  // be recorded is refused: no decision without its record).
  Outcome Ask(const ApprovalRequest& req, std::chrono::milliseconds timeout);

  // The pending ask with this id returns kCancelled; an id not yet asked is
  // burnt (a later Ask with it is kStale).
  void Cancel(uint64_t request_id);

  // `req` joins the question asked for `asked_id` (the same call restarted
  // after a signal: supervisor/approvals/joined_asks.h): recorded, not
  // asked, and its id is burnt.
  void Joined(const ApprovalRequest& req, uint64_t asked_id);

  // Every pending and future ask returns kShutdown.
  void CancelAll();

  void SetAuditLog(std::shared_ptr<AuditLog> log);
  virtual const char* Name() const = 0;

 protected:
  Approver();
  // Decides one request. `cancel_fd` (an eventfd) becomes readable when the
  // ask is cancelled or the approver shuts down: waits must poll it. `note`
  // may carry a one-line reason for the audit record.
  virtual Outcome Decide(const ApprovalRequest& req,
                         std::chrono::steady_clock::time_point deadline, int cancel_fd,
                         std::string* note) = 0;

 private:
  struct Pending {
    Fd cancel;  // eventfd
    bool cancelled = false;
  };
  void Record(const char* event, const ApprovalRequest& req, nlohmann::json extra);

  std::mutex mu_;
  bool shutdown_ = false;
  std::set<uint64_t> used_ids_;  // every id ever asked or cancelled
  std::unordered_map<uint64_t, Pending> pending_;
  std::shared_ptr<AuditLog> audit_;
};

// `--approvals deny`, the CI default: refuses without asking anyone.
class DenyApprover final : public Approver {
 public:
  const char* Name() const override { return "deny"; }

 protected:
  Outcome Decide(const ApprovalRequest&, std::chrono::steady_clock::time_point, int,
                 std::string* note) override;
};

// Waits until `fd` is readable, `cancel_fd` is readable or the deadline
// passes. Returns 1 for fd, 2 for cancel (checked first), 0 for timeout,
// -1 for a poll error. POLLHUP/POLLERR on `fd` count as readable.
int WaitReadable(int fd, int cancel_fd, std::chrono::steady_clock::time_point deadline);

}  // namespace cordon::supervisor
