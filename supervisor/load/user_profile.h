// The user-profile paths every run may read (seed 004's generated base
// policy: "selected user-profile paths read-only"): today git's identity
// and configuration, so that `git commit` under cordon run takes the
// user's name and e-mail from the private HOME the tool gets (tool_env.h
// links granted home paths into it). Read-only, never executable; a user
// rule of the same path (a --deny) wins the tie (policy/rule_lookup.h).
#pragma once

#include <string>

#include "policy/policy.h"

namespace cordon::supervisor {

// The source those rules carry, for explain.
inline constexpr const char* kUserProfileSource = "user profile: git identity and config";

// Adds to p.base_paths a read-only rule for each of git's user files that
// exists under `home` (absolute): ~/.gitconfig and
// ~/.config/git/{config,ignore,attributes}, and the same three under
// `xdg_config_home` (the caller's XDG_CONFIG_HOME, which git reads in place
// of ~/.config; ignored unless absolute). Nothing of the home when `home`
// is empty, relative or gone.
void AddUserProfile(policy::Policy& p, const std::string& home,
                    const std::string& xdg_config_home = "");

}  // namespace cordon::supervisor
