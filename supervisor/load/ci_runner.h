// CI runners (issue 24, item 5): reads the runner's environment and the
// paths it names, and adds the grants policy/ci_runner.h maps them to as
// Policy::base_paths (seed 004's base policy, kept out of the digest). A
// value that is empty, relative, "/", of the wrong type or broad is not
// granted, and a one-line warning says why.
#pragma once

#include <string>
#include <vector>

#include "policy/ci_runner.h"
#include "policy/policy.h"

namespace cordon::supervisor {

// The runner this process runs under (its detect variable is "true"), or
// null.
const policy::CiRunnerSpec* DetectCiRunner();

// The runner's workspace ($GITHUB_WORKSPACE, $CI_PROJECT_DIR) when one is
// detected and its value passes policy::CheckCiValue; else empty, with a
// warning when the value is bad.
std::string CiDefaultWorkspace(std::vector<std::string>& warnings);

// Adds the runner's grants to p.base_paths (p.workspace set, `home` the
// caller's HOME or empty). Nothing when no runner is detected.
void AddCiRunner(policy::Policy& p, const std::string& home, std::vector<std::string>& warnings);

}  // namespace cordon::supervisor
