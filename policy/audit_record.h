// The tamper-evident audit log's record format: JSON lines, one record per
// decision. Pure: the file that holds them is supervisor/audit/audit_log.h.
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
// (untrusted, reported by the preload), "approval", "bypass", "exec",
// "change", "web", "landlock" (the kernel's own record of a denial,
// policy/landlock_audit.h), "end".
#pragma once

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "policy/policy.h"

namespace cordon::policy {

// The `prev` of a log's first record.
extern const std::string kAuditZeroHash;

// Why `fields` (null or an object) cannot be a record's fields (a reserved
// key: seq, kind, time_ms, prev, hash), or empty.
std::string CheckRecordFields(const nlohmann::json& fields);

struct SealedRecord {
  std::string line;       // canonical, without the newline
  std::string line_hash;  // the next record's `prev`
};

// The record `fields` (checked with CheckRecordFields) becomes as record
// number `seq` after the one whose line hashed to `prev`.
SealedRecord SealRecord(std::string_view kind, nlohmann::json fields, uint64_t seq,
                        int64_t time_ms, const std::string& prev);

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

// A run's stretch of a log, kept outside the log (the run record,
// policy/run_record.h, and the host's events stream): the sequence numbers
// of its first and last record and the SHA-256 of their line bytes. A chain
// alone cannot show records cut from its end, nor a log written again whole
// with fresh hashes; the anchor shows both.
struct AuditAnchor {
  uint64_t first_seq = 0;
  uint64_t last_seq = 0;
  std::string first_hash;
  std::string last_hash;
  bool operator==(const AuditAnchor&) const = default;
};

// Whether the log's bytes still hold the stretch `a` names: empty when
// they do, else why not ("truncated: ...", "replaced: ..."). Only the
// lines up to a.last_seq are read; a chain that breaks before them is the
// verifier's to report (VerifyAuditBytes).
std::string CheckAnchor(std::string_view bytes, const AuditAnchor& a);

// One record of a run's stretch of a log, as `cordon runs show` reads it.
struct RunLogRecord {
  std::string kind;    // decision, change, approval, hint, ...
  std::string change;  // a change's kind (supervisor/run_observer.h)
  std::string path, to;
  bool kept = false;
  bool refused = false;  // a decision that refused
  std::string blockers;  // landlock: what the kernel refused (fs.read_file, ...); path: its object
};

// The records of run `id` in a log's bytes: from its header (whose `run`
// is `id`) to its `end`. Lines that do not parse are skipped (the chain is
// the verifier's to judge).
std::vector<RunLogRecord> RunRecordsIn(std::string_view bytes, std::string_view id);

nlohmann::json AnchorJson(const AuditAnchor& a);
std::optional<AuditAnchor> ParseAnchor(const nlohmann::json& j);

}  // namespace cordon::policy
