// Landlock's own denial records (ABI 7), as the kernel's audit subsystem
// multicasts them, read back into one run's account. Pure: the netlink
// socket that receives them is supervisor/landlock_audit_reader.h.
//
// A denial is one audit event (one serial) holding one LANDLOCK_ACCESS
// record per blocked object ("domain=ID blockers=fs.read_file path=... dev=
// ... ino=..."), the first denial of a domain also a LANDLOCK_DOMAIN record
// "status=allocated ... pid=P" naming the process that created the domain
// (for a run: the tool's first process, which restricted itself before its
// exec), and, where the task has an audit context, a SYSCALL record with
// the denied process's pid, comm and exe. When the domain is freed a
// LANDLOCK_DOMAIN "status=deallocated denials=N" says how many denials the
// kernel counted for it. Every other record, and every other domain, is
// someone else's and is dropped.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cordon::policy {

// Audit record types (linux/audit.h) this reads.
inline constexpr uint16_t kAuditSyscall = 1300;
inline constexpr uint16_t kAuditUser = 1005;
inline constexpr uint16_t kAuditLandlockAccess = 1423;
inline constexpr uint16_t kAuditLandlockDomain = 1424;

// One record's text: "audit(SECONDS.MILLIS:SERIAL): key=value key=value".
struct AuditText {
  uint64_t serial = 0;
  // In order; values unquoted, and the hex the kernel writes for a string
  // it cannot quote (a space, a quote, a control byte) decoded.
  std::vector<std::pair<std::string, std::string>> fields;

  // The value of `key`, or null.
  const std::string* Find(std::string_view key) const;
};

// Parses one record's payload (a trailing NUL or newline is allowed).
// Nullopt when it is not of that shape.
std::optional<AuditText> ParseAuditText(std::string_view payload);

struct LandlockDenial {
  uint64_t serial = 0;
  std::string blockers;  // "fs.read_file", "fs.make_reg,fs.refer", "net.connect_tcp", ...
  // The blocked object's fields as the kernel named them (path, dev, ino,
  // opid, ocomm, daddr, dest, ...), in order.
  std::vector<std::pair<std::string, std::string>> object;
  // From the event's SYSCALL record, when there was one: the denied process.
  int64_t pid = 0;
  std::string comm, exe, syscall;
};

// What a run's records came to.
struct LandlockAccount {
  std::vector<LandlockDenial> denials;  // in the order the kernel sent them
  // The domain's own count, from its deallocated record (nullopt: not seen
  // before the account was closed).
  std::optional<uint64_t> kernel_denials;
  size_t dropped = 0;      // denials of the run's domain past the bound
  bool ambiguous = false;  // two domains named the run's creator pid: none attached
};

// Sorts the multicast stream into the run's denials. Feed every record as
// it arrives; the creator pid may be set late (records seen before it are
// held, within a bound). Not thread-safe: the reader locks around it.
class LandlockRecords {
 public:
  // At most `max_denials` denials kept for the run (and, before the run's
  // domain is known, as many held per domain, for at most kMaxDomains).
  explicit LandlockRecords(size_t max_denials = 4096) : max_(max_denials) {}
  static constexpr size_t kMaxDomains = 64;

  // The tool's first process, which created the run's Landlock domain.
  void SetCreator(int64_t pid);

  void Feed(uint16_t type, std::string_view payload);

  // True when every domain of the run that logged a denial has been freed
  // (so its count is known); true too when none has logged one.
  bool Deallocated() const;
  // True once an AUDIT_USER record carrying `marker` was seen.
  bool SawMarker(std::string_view marker) const;

  LandlockAccount Account() const;

 private:
  struct Domain {
    std::vector<LandlockDenial> denials;
    size_t dropped = 0;
  };
  void Access(const AuditText& t);
  void DomainStatus(const AuditText& t);
  void Syscall(const AuditText& t);
  bool Foreign(const std::string& domain) const;
  void Prune();

  size_t max_;
  int64_t creator_ = 0;
  std::map<std::string, Domain> held_;       // domain id -> its denials so far
  std::map<std::string, int64_t> creators_;  // domain id -> creator pid (allocated records)
  std::map<std::string, uint64_t> freed_;    // domain id -> the kernel's count
  std::set<std::string> foreign_;            // not the run's: their records are dropped
  // The last events that held a denial: serial -> (domain, index), so the
  // SYSCALL record that follows can name the process.
  std::map<uint64_t, std::pair<std::string, size_t>> by_serial_;
  std::set<std::string> markers_;
};

// "audit(...)" text for an AUDIT_USER record that marks where a run's
// records end: everything the kernel queued before it has been delivered
// once it comes back.
std::string LandlockMarker(std::string_view run_id);

}  // namespace cordon::policy
