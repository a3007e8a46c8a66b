// The audit log file: the records of policy/audit_record.h, appended to a
// file one write(2) each and fsync'd at the end.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "base/fd.h"
#include "policy/audit_record.h"
#include "base/result.h"

namespace cordon::supervisor {

using policy::VerifyReport;


// Thread-safe: Append and Close may be called from any thread.
class AuditLog {
 public:
  // Opens (creating 0600) `path` for appending. An existing log is verified
  // first and continued; a broken one is refused (EBADMSG) rather than
  // extended, so tampering is never papered over by new records.
  // `sync`: fsync at Close. A log the user named is; a run's default log
  // is not (an fsync costs a launch 4 ms or more; the page cache holds it
  // once cordon has written it, whatever becomes of cordon).
  static Result<std::unique_ptr<AuditLog>> Open(const std::string& path, bool sync = true);

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

  // The stretch of the log this process wrote (first_seq 0: none yet).
  policy::AuditAnchor Anchor();

 private:
  AuditLog(std::string path, Fd fd, std::string prev, uint64_t next_seq, bool sync);

  std::mutex mu_;
  std::string path_;
  Fd fd_;
  std::string prev_;  // hash of the last line written
  uint64_t next_seq_;
  bool failed_ = false;
  bool sync_ = true;
  policy::AuditAnchor anchor_;
};

// The log's bytes (up to 1 GiB).
Result<std::string> ReadAuditLog(const std::string& path);

// Reads and verifies the log at `path`; an error only when it cannot be read.
Result<VerifyReport> VerifyAuditLog(const std::string& path);

}  // namespace cordon::supervisor
