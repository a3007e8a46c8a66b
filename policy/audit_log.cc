#include "policy/audit_log.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>

#include "policy/digest.h"
#include "policy/policy_json.h"

namespace cordon::policy {
namespace {

const std::string kZeroHash(64, '0');
constexpr size_t kMaxLogBytes = size_t{1} << 30;

// Canonical serialisation. Invalid UTF-8 (a file name can hold any bytes) is
// replaced rather than thrown on; the parser rejects it on the way back, so
// writer and verifier always hash the same bytes.
std::string Dump(const nlohmann::json& j) {
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

bool IsReserved(const std::string& key) {
  return key == "seq" || key == "kind" || key == "time_ms" || key == "prev" || key == "hash";
}

bool IsHex64(const nlohmann::json& v) {
  if (!v.is_string()) return false;
  const std::string& s = v.get_ref<const std::string&>();
  if (s.size() != 64) return false;
  for (char c : s) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

// Checks one line against the chain; empty when intact.
std::string CheckLine(std::string_view line, const std::string& prev, uint64_t seq) {
  nlohmann::json j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return "not a JSON object";
  if (Dump(j) != line) return "not in canonical form (bytes edited)";
  if (!IsHex64(j.value("hash", nlohmann::json()))) return "missing or malformed hash";
  std::string hash = j["hash"].get<std::string>();
  j.erase("hash");
  if (!DigestEquals(Sha256Hex(Dump(j)), hash)) return "record hash mismatch (record edited)";
  if (!j.contains("seq") || !j["seq"].is_number_unsigned() || j["seq"].get<uint64_t>() != seq) {
    return "sequence number is not " + std::to_string(seq) + " (record removed, moved or inserted)";
  }
  if (!j.contains("prev") || !j["prev"].is_string() ||
      !DigestEquals(j["prev"].get<std::string>(), prev)) {
    return "prev does not match the previous record (chain broken)";
  }
  if (!j.contains("kind") || !j["kind"].is_string()) return "missing kind";
  if (seq == 1 && j["kind"] != "header") return "first record is not a session header";
  return {};
}

}  // namespace

VerifyReport VerifyAuditBytes(std::string_view bytes) {
  VerifyReport r;
  r.last_hash = kZeroHash;
  if (bytes.empty()) {
    r.broken_line = 1;
    r.why = "empty log: no session header";
    return r;
  }
  size_t pos = 0;
  size_t line_no = 0;
  while (pos < bytes.size()) {
    ++line_no;
    size_t nl = bytes.find('\n', pos);
    std::string_view line = bytes.substr(pos, nl == std::string_view::npos ? nl : nl - pos);
    std::string why = nl == std::string_view::npos
                          ? "record not terminated by a newline (truncated)"
                          : CheckLine(line, r.last_hash, line_no);
    if (!why.empty()) {
      r.broken_line = line_no;
      r.why = std::move(why);
      return r;
    }
    r.last_hash = Sha256Hex(line);
    r.records = line_no;
    pos = nl + 1;
  }
  r.intact = true;
  return r;
}

Result<VerifyReport> VerifyAuditLog(const std::string& path) {
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
  return VerifyAuditBytes(bytes);
}

Result<std::unique_ptr<AuditLog>> AuditLog::Open(const std::string& path) {
  Fd fd(::open(path.c_str(), O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600));
  if (!fd) return Errno("open", path);
  struct stat st;
  if (::fstat(fd.get(), &st) != 0) return Errno("fstat", path);
  if (!S_ISREG(st.st_mode)) return SysError{EINVAL, "open", path + ": not a regular file"};
  std::string prev = kZeroHash;
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
  return std::unique_ptr<AuditLog>(new AuditLog(path, std::move(fd), std::move(prev), next_seq));
}

AuditLog::AuditLog(std::string path, Fd fd, std::string prev, uint64_t next_seq)
    : path_(std::move(path)), fd_(std::move(fd)), prev_(std::move(prev)), next_seq_(next_seq) {}

AuditLog::~AuditLog() { (void)Close(); }

Status AuditLog::Append(std::string_view kind, nlohmann::json fields) {
  if (fields.is_null()) fields = nlohmann::json::object();
  if (!fields.is_object()) return SysError{EINVAL, "audit append", "fields must be an object"};
  for (const auto& [key, value] : fields.items()) {
    if (IsReserved(key)) return SysError{EINVAL, "audit append", "reserved field " + key};
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (!fd_) return SysError{EBADF, "audit append", "log closed"};
  if (failed_) return SysError{EIO, "audit append", "an earlier write failed"};
  fields["seq"] = next_seq_;
  fields["kind"] = std::string(kind);
  fields["time_ms"] = std::chrono::duration_cast<std::chrono::milliseconds>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count();
  fields["prev"] = prev_;
  fields["hash"] = Sha256Hex(Dump(fields));
  std::string line = Dump(fields);
  std::string out = line + "\n";
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
  prev_ = Sha256Hex(line);
  ++next_seq_;
  return Ok();
}

Status AuditLog::Close() {
  std::lock_guard<std::mutex> lock(mu_);
  if (!fd_) return Ok();
  // The log is evidence: it reaches the disk before cordon reports success.
  int rc = ::fsync(fd_.get());
  int err = errno;
  fd_.reset();
  if (rc != 0) return SysError{err, "fsync", path_};
  return Ok();
}

nlohmann::json SessionHeader(const Policy& p, std::string_view rung,
                             const std::vector<std::string>& argv) {
  return {
      {"cordon_version", CORDON_VERSION},
      {"profile", ProfileName(p.profile)},
      {"profile_reason", p.profile_reason},
      {"rung", std::string(rung)},
      {"argv", argv},
      {"policy", PolicyToJson(p)},
  };
}

}  // namespace cordon::policy
