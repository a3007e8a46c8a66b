// The seccomp filter every tool runs under: the syscalls no confined tool
// needs (they reach around Landlock or into the kernel), the namespace and
// socket families and types the policy forbids, and the mutating path
// syscalls, connect and bind that are sent to the supervisor.
//
// libseccomp compiles it at build time, once per combination of the
// options (supervisor/filtergen.cc writes the table); a launch copies the one it
// needs instead of running libseccomp (README, "Speed").
#pragma once

#include <vector>

#include "policy/policy.h"
#include "base/result.h"
#include "supervisor/probe.h"
#include "supervisor/seccomp_filter.h"

namespace cordon::supervisor {

// Every field is part of ToolFilterIndex: adding one breaks its build
// until the table covers it.
struct ToolFilterOptions {
  policy::Network network = policy::Network::kNone;
  bool notify_mutations = true;  // send mutating path syscalls to the supervisor
  bool notify_all_paths = false;  // the notify-all rung: reads too (no Landlock)
  bool notify_deletes = true;      // off when deletes need no approval (and nothing is carved)
  bool notify_write_opens = true;  // off with links: kernel (and nothing is carved)
  bool notify_exec = true;         // off without an exec allowlist
  bool notify_signals = false;     // Landlock has no signal scope (ABI < 6, notify-all)
  // openat with wire::kBrokerOpenFlag (brokered reads): on when the run
  // needs them (BrokersReads). Off, a filter that notifies no write
  // open names no open at all, and the kernel's action cache allows every
  // one without running the filter.
  bool notify_brokered_reads = false;
  // Renames follow deletes and write opens; on the notify-all rung every
  // group notifies whatever these say (tool_filter.cc, NotifyMutations).
};

// Sets the notify_* fields to what `p` needs decided (DESIGN.md: notify
// only that): write opens under links: strict, deletes when a delete of a
// pre-existing file needs an approval, exec against an exec allowlist; and
// write opens and deletes (so renames) whatever links and sensitive.delete
// relax when the protected-path scan stopped at its bound (fail closed) or
// the rules carve a read-write grant (policy::CarvesWrites: the carved
// directory cannot make or remove entries at the kernel layer).
// Brokered reads when the run needs them (BrokersReads: what is made
// beside a carved-out path, or a granted file made in the run, has no
// kernel grant). Then what the rung
// needs: every path syscall on the notify-all rung, and
// signals to other processes where Landlock has no signal scope (ABI < 6).
// The one place that maps a policy and a rung to a filter: `cordon run`
// builds the filter from it, `policy explain` says it.
void NotifyWhatPolicyNeeds(const policy::Policy& p, Rung rung, int landlock_abi,
                           ToolFilterOptions* o);

// Whether the run needs the read broker: the rules carve a read-write
// grant for a denial (policy::CarvesReads), or grant a file that does not
// exist yet (a CI step's output: Landlock has no rule for it). Looks at
// the filesystem for the latter.
bool BrokersReads(const std::vector<policy::PathRule>& rules);

// Whether every write open, delete and rename goes to the supervisor.
bool DecidesEveryChange(const ToolFilterOptions& o);
// Whether execve and execveat go to the supervisor.
bool NotifiesExec(const ToolFilterOptions& o);

// The program for `opts`, from the table compiled at build time.
Result<BpfProgram> BuildToolFilter(const ToolFilterOptions& opts);

// The same program compiled now with libseccomp: the table's source, and
// what tests compare the table against.
Result<BpfProgram> CompileToolFilter(const ToolFilterOptions& opts);

// The table: one program per combination of the options.
inline constexpr size_t kToolFilterCombinations = 256;
size_t ToolFilterIndex(const ToolFilterOptions& opts);
ToolFilterOptions ToolFilterOptionsAt(size_t index);

// The syscall numbers sent to the supervisor under `opts` (for explain).
std::vector<int> NotifiedSyscalls(const ToolFilterOptions& opts);

}  // namespace cordon::supervisor
