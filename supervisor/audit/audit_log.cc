#include "supervisor/audit/audit_log.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>

#include "policy/audit_record.h"

namespace cordon::supervisor {
namespace {

constexpr size_t kMaxLogBytes = size_t{1} << 30;

}  // namespace

Result<std::string> ReadAuditLog(const std::string& path) {
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) return Errno("open", path);
  std::string bytes;
  char buf[1 << 16];
  for (;;) {
    ssize_t n = ::read(fd.get(), buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      return Errno("read", path);
    }
    if (n == 0) break;
    bytes.append(buf, static_cast<size_t>(n));
    if (bytes.size() > kMaxLogBytes) return SysError{EFBIG, "read", path};
  }
  return bytes;
}

Result<VerifyReport> VerifyAuditLog(const std::string& path) {
  Result<std::string> bytes = ReadAuditLog(path);
  if (!bytes) return bytes.error();
  return policy::VerifyAuditBytes(bytes.value());
}

Result<std::unique_ptr<AuditLog>> AuditLog::Open(const std::string& path, bool sync) {
  Fd fd(::open(path.c_str(), O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600));
  if (!fd) return Errno("open", path);
  struct stat st;
  if (::fstat(fd.get(), &st) != 0) return Errno("fstat", path);
  if (!S_ISREG(st.st_mode)) return SysError{EINVAL, "open", path + ": not a regular file"};
  std::string prev = policy::kAuditZeroHash;
  uint64_t next_seq = 1;
  if (st.st_size > 0) {
    auto report = VerifyAuditLog(path);
    if (!report) return report.error();
    if (!report->intact) {
      return SysError{EBADMSG, "audit log",
                      path + ": line " + std::to_string(report->broken_line) + ": " + report->why};
    }
    prev = report->last_hash;
    next_seq = report->records + 1;
  }
  return std::unique_ptr<AuditLog>(new AuditLog(path, std::move(fd), std::move(prev), next_seq, sync));
}

AuditLog::AuditLog(std::string path, Fd fd, std::string prev, uint64_t next_seq, bool sync)
    : path_(std::move(path)), fd_(std::move(fd)), prev_(std::move(prev)), next_seq_(next_seq),
      sync_(sync) {}

AuditLog::~AuditLog() { (void)Close(); }

Status AuditLog::Append(std::string_view kind, nlohmann::json fields) {
  if (std::string why = policy::CheckRecordFields(fields); !why.empty()) {
    return SysError{EINVAL, "audit append", why};
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (!fd_) return SysError{EBADF, "audit append", "log closed"};
  if (failed_) return SysError{EIO, "audit append", "an earlier write failed"};
  int64_t time_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                        std::chrono::system_clock::now().time_since_epoch())
                        .count();
  policy::SealedRecord rec = policy::SealRecord(kind, std::move(fields), next_seq_, time_ms, prev_);
  std::string out = rec.line + "\n";
  size_t done = 0;
  while (done < out.size()) {
    ssize_t n = ::write(fd_.get(), out.data() + done, out.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      failed_ = true;
      return Errno("write", path_);
    }
    done += static_cast<size_t>(n);
  }
  if (anchor_.first_seq == 0) {
    anchor_.first_seq = next_seq_;
    anchor_.first_hash = rec.line_hash;
  }
  anchor_.last_seq = next_seq_;
  anchor_.last_hash = rec.line_hash;
  prev_ = std::move(rec.line_hash);
  ++next_seq_;
  return Ok();
}

policy::AuditAnchor AuditLog::Anchor() {
  std::lock_guard<std::mutex> lock(mu_);
  return anchor_;
}

Status AuditLog::Close() {
  std::lock_guard<std::mutex> lock(mu_);
  if (!fd_) return Ok();
  // The log is evidence: it reaches the disk before cordon reports success.
  int rc = sync_ ? ::fsync(fd_.get()) : 0;
  int err = errno;
  fd_.reset();
  if (rc != 0) return SysError{err, "fsync", path_};
  return Ok();
}

}  // namespace cordon::supervisor
