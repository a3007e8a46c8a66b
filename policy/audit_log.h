// The tamper-evident audit log: JSON lines, one record per decision.
//
// Every record carries `seq` (1, 2, ...), `kind`, `time_ms`, `prev` (the
// SHA-256 of the previous record's exact line bytes, without its newline;
// 64 zeros for the first) and `hash` (the SHA-256 of the record's own
// canonical serialisation without `hash`). A record must be byte-identical
// to its canonical form (nlohmann::json::dump of the parsed object), so any
// edit of any byte makes that record, or the one after it, fail to verify.
// The first record of a session is a `header` (SessionHeader below).
//
// Kinds: "header", "decision" (enforced by the supervisor), "hint"
// (untrusted, reported by the preload), "approval", "bypass", "exec".
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "policy/fd.h"
#include "policy/policy.h"
#include "policy/result.h"

namespace cordon::policy {

// Thread-safe: Append and Close may be called from any thread.
class AuditLog {
 public:
  // Opens (creating 0600) `path` for appending. An existing log is verified
  // first and continued; a broken one is refused (EBADMSG) rather than
  // extended, so tampering is never papered over by new records.
  static Result<std::unique_ptr<AuditLog>> Open(const std::string& path);

  ~AuditLog();
  AuditLog(const AuditLog&) = delete;
  AuditLog& operator=(const AuditLog&) = delete;

  // Appends one record: `fields` (an object) plus seq, kind, time_ms, prev
  // and hash, which `fields` may not contain (EINVAL). One write(2) per
  // record on an O_APPEND fd. After a failed write every Append fails (EIO).
  Status Append(std::string_view kind, nlohmann::json fields);

  // fsync(2) and close; idempotent. Appends after Close fail (EBADF).
  Status Close();

  const std::string& path() const { return path_; }

 private:
  AuditLog(std::string path, Fd fd, std::string prev, uint64_t next_seq);

  std::mutex mu_;
  std::string path_;
  Fd fd_;
  std::string prev_;  // hash of the last line written
  uint64_t next_seq_;
  bool failed_ = false;
};

// The session header's fields: resolved policy, profile and why, cordon
// version, the enforcement rung and the tool's argv.
nlohmann::json SessionHeader(const Policy& p, std::string_view rung,
                             const std::vector<std::string>& argv);

struct VerifyReport {
  bool intact = false;
  size_t records = 0;       // records checked and found intact
  size_t broken_line = 0;   // 1-based line of the first broken record (0 if intact)
  std::string why;          // what is wrong with it
  std::string last_hash;    // hash of the last intact line (64 zeros if none)
};

// Verifies a log's bytes. Pure: no I/O.
VerifyReport VerifyAuditBytes(std::string_view bytes);

// Reads and verifies the log at `path`; an error only when it cannot be read.
Result<VerifyReport> VerifyAuditLog(const std::string& path);

}  // namespace cordon::policy
