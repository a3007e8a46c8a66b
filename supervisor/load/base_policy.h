// Seed 004's generated base policy as this machine gives it, assembled in
// one place for `cordon run` and `policy explain`, so that explain shows
// the base a run from here gets: git's identity and config read-only
// (user_profile.h), the credentials denied (credentials.h), a CI runner's
// step files (ci_runner.h), a linked git worktree's repository
// (git_worktree.h), and the tool paths (tool_roots.h).
#pragma once

#include <string>
#include <vector>

#include "policy/policy.h"

namespace cordon::supervisor {

// The rules that do not depend on the user's: added before NormalisePolicy
// (p.workspace set). Reads HOME and the runner's variables from this
// process's environment; appends one line per value not granted.
void AddMachineBase(policy::Policy& p, std::vector<std::string>& warnings);

// A read-only base rule for `path`, with `source`, when it is a regular
// file: through a symbolic link when `follow` (as git and the shell read
// their configs), else only the file itself (as rg reads its ignore
// files' names). A directory or device there grants nothing.
void AddReadOnlyFile(policy::Policy& p, const std::string& path, const char* source, bool follow);

// Tool paths for `command` (argv[0]; empty: PATH only), after
// NormalisePolicy, from this process's PATH, HOME and RUNNER_TOOL_CACHE.
// Returns the entries skipped with a reason (AddToolRoots).
std::vector<std::string> AddToolPaths(policy::Policy& p, const std::string& command);

}  // namespace cordon::supervisor
