// cordon's side of the preload: whether a command can take it (a glibc
// dynamic executable), where the library is, the environment that
// configures it (preload/wire.h), and the decoding of its report records
// into one-line text for logs and the audit trail (marked as untrusted
// hints from the tool).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "policy/policy.h"

namespace cordon::supervisor {

// True when `exe_path` is an ELF executable whose PT_INTERP names a glibc
// loader (ld-linux*.so*). A "#!" script is judged by its interpreter (up to
// four levels, as the kernel follows). False, with the reason in `why`, for
// static binaries, musl (ld-musl-*), unreadable or non-ELF files.
bool UsesGlibcLoader(const std::string& exe_path, std::string* why);

// The installed or built libcordon_preload.so: the path compiled in, then
// ../preload/ and ../lib/cordon/ next to the running cordon binary. Empty
// when none exists.
std::string FindPreloadLibrary();

struct PreloadEnv {
  std::vector<std::string> set;          // KEY=VALUE entries to add
  std::vector<std::string> read_only;    // extra read-only rules (the .so)
};

// The environment entries that configure the preload for policy `p`:
// LD_PRELOAD=<library>[:<caller's LD_PRELOAD>], the workspace, its mode,
// the read-only, read-write and denied sets (policy::EffectiveRules without
// the TMPDIR, which the preload takes from $TMPDIR), the broker flag when
// the rules carve reads (policy::CarvesReads), CORDON_LOG=1 when
// `log_refusals`, and the refusals-only report mode when `refused_only`.
// False with `why` when a rule path cannot be encoded (holds ':'); then the
// run goes without the preload.
struct PreloadReporting {
  bool log_refusals = false;  // the preload writes its own line per refusal
  bool refused_only = false;  // wire::kEnvReportMode: refusals alone are reported
  // wire::kEnvBypass: the supervisor may offer a refused change as a
  // bypass (policy/bypass.h), so the preload leaves rule refusals of
  // changes to it. Never on the preload-only rung, where nothing else decides.
  bool bypass = false;
};
bool MakePreloadEnv(const policy::Policy& p, const std::string& library,
                    const std::string& caller_ld_preload, PreloadReporting reporting,
                    PreloadEnv* out, std::string* why);

// Replaces cordon's own variables in a tool environment: drops every
// CORDON_* and LD_PRELOAD entry the caller passed (so the caller cannot
// turn cordon's settings off) and appends `add`.
void ApplyPreloadEnv(std::vector<std::string>* env, const std::vector<std::string>& add);

// One record as a line of text ("pid 12 open("/x") mutate refused
// outside EACCES") or as a JSON object; false when the record is malformed
// (wrong size, magic or version), with a note in `out`.
bool DecodeReport(const void* data, size_t len, std::string* out);
bool DecodeReportJson(const void* data, size_t len, nlohmann::json* out);

// A refusal the preload reported, as the user is told of it: `what` (the
// call, the path, the rule) and `hint` (policy::RefusalHint: the grant that
// would allow it; empty for a truncated or relative path). False for any
// other record.
// `refused` (sorted by path, may be null): the run's refused hard-linked
// and special files, named as such rather than as a denied path.
// `probe` (may be null): set when the path is a runtime's probe
// (policy::IsRuntimeProbe), said only if the tool fails.
bool DescribeRefusal(const void* data, size_t len, std::string* what, std::string* hint,
                     const std::vector<policy::RefusedEntry>* refused = nullptr,
                     bool* probe = nullptr);

// True for an image's check-in record (wire::Call::kCheckIn), with the pid
// it names (the tool's word: attribution only, preload_checkin.h).
bool CheckInPid(const void* data, size_t len, int32_t* pid);

// Tallies the report stream of one run. The preload counts what it could
// not send; a process's exit record carries its totals, so `unaccounted`
// is zero when every call is either received or counted as dropped.
class ReportTally {
 public:
  // Returns false for a malformed record.
  bool Add(const void* data, size_t len);
  uint64_t received() const { return received_; }  // call records
  uint64_t refused() const { return refused_; }
  uint64_t malformed() const { return malformed_; }
  uint64_t checkins() const { return checkins_; }  // wire::Call::kCheckIn records
  uint64_t dropped() const;      // sum over processes of their drop counts
  uint64_t unaccounted() const;  // exit-reported calls minus received minus dropped
  std::string Summary() const;   // one line

 private:
  struct Process {
    uint64_t received = 0;
    uint64_t dropped = 0;
    uint64_t total = 0;
    bool exited = false;
  };
  std::map<std::pair<int32_t, uint32_t>, Process> procs_;
  uint64_t received_ = 0;
  uint64_t refused_ = 0;
  uint64_t malformed_ = 0;
  uint64_t checkins_ = 0;
};

}  // namespace cordon::supervisor
