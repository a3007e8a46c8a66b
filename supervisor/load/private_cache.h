// The workspace's private cache (policy/private_cache.h): where it is on
// this machine, made for a run, and its rule added to the base policy.
#pragma once

#include <string>
#include <vector>

#include "policy/policy.h"

namespace cordon::supervisor {

// Under workspace-write (p.workspace canonical, p.profile final): sets
// p.private_cache to the workspace's cache directory,
// ${XDG_STATE_HOME:-~/.local/state}/cordon/caches/<SHA-256 of p.workspace>,
// and adds its read-write, disposable rule to p.base_paths. `create` (a
// run): the directory is made (0700, and its missing parents); explain only
// names it. A relative XDG_STATE_HOME is ignored with a warning; a cache
// that cannot be made, or is not a directory of this user's alone, is left
// out with a warning (the run goes on without one).
void AddPrivateCache(policy::Policy& p, bool create, std::vector<std::string>& warnings);

}  // namespace cordon::supervisor
