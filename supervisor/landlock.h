// Landlock: probing the running kernel's ABI and building the ruleset the
// tool will restrict itself with. The ruleset is built in the supervisor
// (before fork); the child only calls RestrictSelf(), which is
// async-signal-safe. See landlock(7) and torvalds/linux samples/landlock.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/fd.h"
#include "policy/fs_plan.h"
#include "base/result.h"

namespace cordon::supervisor {

// 0 when Landlock is unavailable (not built, disabled at boot, or blocked).
int ProbeLandlockAbi();

// Every filesystem right the given ABI knows.
uint64_t HandledFsRights(int abi);

// The rights one grant stands for, limited to what `abi` handles and to the
// rights a non-directory can carry when `is_dir` is false.
uint64_t RightsFor(const policy::Grant& g, int abi, bool is_dir);

struct LandlockConfig {
  int abi = 0;
  bool restrict_tcp = false;    // network none: handle bind/connect, allow no port
  bool scope = true;            // abstract unix sockets and signals (ABI >= 6)
};

struct LandlockRuleset {
  Fd fd;
  std::vector<std::string> skipped;  // grants whose path vanished or failed, with why
};

Result<LandlockRuleset> BuildRuleset(const std::vector<policy::Grant>& grants,
                                     const LandlockConfig& cfg);

// In the child, after PR_SET_NO_NEW_PRIVS, with LANDLOCK_RESTRICT_SELF_*
// `flags` (uapi.h; ABI 7 for the LOG ones). Returns 0 or -errno.
int RestrictSelf(int ruleset_fd, uint32_t flags = 0);

}  // namespace cordon::supervisor
