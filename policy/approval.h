// Approvals for the sensitive operation (deleting a file that existed
// before the run): the preview a person or host is shown, the outcomes, and
// the Approver every approval source implements.
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
#include <optional>
#include <set>
#include <string>
#include <unordered_map>

#include "policy/fd.h"

namespace cordon::policy {

class AuditLog;

// What the supervisor measured on the fd it holds (supervisor/delete_preview.h).
struct DeletePreview {
  std::string rel_path;  // relative to the workspace; printable UTF-8
  uint64_t size = 0;
  std::string sha256;  // hex
  uint64_t dev = 0, ino = 0;
  int64_t mtime_ns = 0, ctime_ns = 0;

  // SHA-256 over a canonical, versioned serialisation of every field.
  std::string Digest() const;
  nlohmann::json ToJson() const;
  // Null when a field is missing or has the wrong type.
  static std::optional<DeletePreview> FromJson(const nlohmann::json& j);
};

enum class Outcome {
  kAllowedOnce,   // the one grant
  kDenied,        // an answer, a rule or the deny approver said no
  kTimeout,       // nobody answered in time
  kDisconnected,  // the approver or service went away
  kCancelled,     // the supervisor withdrew the request (tool gone)
  kStale,         // wrong id or digest, a replayed id, a request that lies about its preview
  kShutdown,      // the supervisor is stopping
};

const char* OutcomeName(Outcome o);  // "allowed-once", "denied", ...

struct ApprovalRequest {
  uint64_t request_id = 0;  // unique per run (the seccomp notification id)
  DeletePreview preview;
  std::string preview_digest;  // must equal preview.Digest()
  int tool_pid = 0;
  std::string tool_argv0;
};

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

}  // namespace cordon::policy
