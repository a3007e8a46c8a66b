#include "supervisor/approvals/approver.h"

#include <poll.h>
#include <sys/eventfd.h>

#include "policy/digest.h"
#include "supervisor/audit/audit_log.h"

namespace cordon::supervisor {

using policy::DigestEquals;

int WaitReadable(int fd, int cancel_fd, std::chrono::steady_clock::time_point deadline) {
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    int ms = left.count() < 0 ? 0 : static_cast<int>(std::min<int64_t>(left.count(), 1 << 30));
    pollfd p[2] = {{cancel_fd, POLLIN, 0}, {fd, POLLIN, 0}};
    int n = ::poll(p, fd >= 0 ? 2 : 1, ms);
    if (n < 0) {
      if (errno == EINTR) continue;
      return -1;
    }
    if (p[0].revents) return 2;
    if (fd >= 0 && p[1].revents) return 1;
    if (n == 0 && ms == 0) return 0;
  }
}

Approver::Approver() = default;
Approver::~Approver() = default;

void Approver::SetAuditLog(std::shared_ptr<AuditLog> log) {
  std::lock_guard<std::mutex> lock(mu_);
  audit_ = std::move(log);
}

void Approver::Record(const char* event, const ApprovalRequest& req, nlohmann::json extra) {
  extra["event"] = event;
  extra["approver"] = Name();
  extra["request_id"] = req.request_id;
  std::shared_ptr<AuditLog> log;
  {
    std::lock_guard<std::mutex> lock(mu_);
    log = audit_;
  }
  if (log) (void)log->Append("approval", std::move(extra));
}

Outcome Approver::Ask(const ApprovalRequest& req, std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  Outcome early = Outcome::kAllowedOnce;  // "none yet"
  std::string why;
  int cancel_fd = -1;
  std::shared_ptr<AuditLog> log;
  {
    std::lock_guard<std::mutex> lock(mu_);
    log = audit_;
    if (shutdown_) {
      early = Outcome::kShutdown;
      why = "supervisor shutting down";
    } else if (!used_ids_.insert(req.request_id).second) {
      early = Outcome::kStale;
      why = "request id already used (no replay)";
    } else if (!DigestEquals(req.preview_digest, req.preview.Digest())) {
      early = Outcome::kStale;
      why = "preview digest does not match the preview";
    } else {
      Pending& p = pending_[req.request_id];
      p.cancel.reset(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
      cancel_fd = p.cancel.get();
      if (cancel_fd < 0) {
        pending_.erase(req.request_id);
        early = Outcome::kDenied;
        why = "eventfd failed";
      }
    }
  }
  nlohmann::json request = {{"preview", req.preview.ToJson()},
                            {"preview_digest", req.preview_digest},
                            {"tool_pid", req.tool_pid},
                            {"tool_argv0", req.tool_argv0},
                            {"timeout_ms", timeout.count()}};
  if (early == Outcome::kAllowedOnce && log) {
    request["event"] = "request";
    request["approver"] = Name();
    request["request_id"] = req.request_id;
    if (!log->Append("approval", request).ok()) {
      early = Outcome::kDenied;
      why = "audit log write failed";
    }
  }
  Outcome out = early;
  if (early == Outcome::kAllowedOnce) {
    out = Decide(req, deadline, cancel_fd, &why);
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = pending_.find(req.request_id);
    if (it != pending_.end() && cancel_fd >= 0) {
      // A cancel that raced the answer wins: the tool or the run is gone.
      if (shutdown_) out = Outcome::kShutdown;
      else if (it->second.cancelled) out = Outcome::kCancelled;
      pending_.erase(it);
    }
  }
  nlohmann::json outcome = {{"outcome", OutcomeName(out)}, {"preview_digest", req.preview_digest}};
  if (!why.empty()) outcome["note"] = why;
  if (early != Outcome::kAllowedOnce) outcome["preview"] = req.preview.ToJson();
  Record("outcome", req, std::move(outcome));
  return out;
}

void Approver::Cancel(uint64_t request_id) {
  std::lock_guard<std::mutex> lock(mu_);
  used_ids_.insert(request_id);
  auto it = pending_.find(request_id);
  if (it == pending_.end()) return;
  it->second.cancelled = true;
  (void)::eventfd_write(it->second.cancel.get(), 1);
}

void Approver::Joined(const ApprovalRequest& req, uint64_t asked_id) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    used_ids_.insert(req.request_id);
  }
  Record("joined", req, {{"joins", asked_id}, {"preview_digest", req.preview_digest}});
}

void Approver::CancelAll() {
  std::lock_guard<std::mutex> lock(mu_);
  shutdown_ = true;
  for (auto& [id, p] : pending_) (void)::eventfd_write(p.cancel.get(), 1);
}

Outcome DenyApprover::Decide(const ApprovalRequest&, std::chrono::steady_clock::time_point, int,
                             std::string* note) {
  *note = "approvals: deny";
  return Outcome::kDenied;
}

}  // namespace cordon::supervisor
