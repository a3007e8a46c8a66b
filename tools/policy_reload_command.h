// `cordon policy reload --run RUN FILE`: replaces the policy a running
// cordon's supervisor decides by (tools/run_reload.h is the run's side).
#pragma once

#include <CLI/CLI.hpp>

namespace cordon::tools {

// Adds `reload` to `cordon policy`.
void AddPolicyReload(CLI::App* policy_cmd, int& exit_code);

}  // namespace cordon::tools
