// The seccomp filter every tool runs under: the syscalls no confined tool
// needs (they reach around Landlock or into the kernel), the namespace and
// socket families the policy forbids, and the mutating path syscalls that
// are sent to the supervisor (see notify_set.h).
#pragma once

#include <vector>

#include "policy/policy.h"
#include "policy/result.h"
#include "supervisor/seccomp_filter.h"

namespace cordon::supervisor {

struct ToolFilterOptions {
  policy::Network network = policy::Network::kNone;
  bool notify_mutations = true;  // send mutating path syscalls to the supervisor
  bool notify_all_paths = false;  // the notify-all rung: reads too (no Landlock)
  bool notify_unlink_rename = true;  // off when deletes need no approval
  bool notify_write_opens = true;    // off with links: kernel
  bool notify_exec = true;
};

Result<BpfProgram> BuildToolFilter(const ToolFilterOptions& opts);

// The syscall numbers sent to the supervisor under `opts` (for explain).
std::vector<int> NotifiedSyscalls(const ToolFilterOptions& opts);

}  // namespace cordon::supervisor
