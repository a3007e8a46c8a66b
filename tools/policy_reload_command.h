// `cordon policy reload --run RUN FILE`: replaces the policy a running
// cordon's supervisor decides by (tools/run_reload.h is the run's side).
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "supervisor/tool_filter.h"

namespace cordon::tools {

// What a reload may change in a run whose filter is `decided` (`policy
// explain`'s "Reload" line; docs/policy.md "Reloading a running tool's
// policy").
std::string ReloadLine(const supervisor::ToolFilterOptions& decided);

// Adds `reload` to `cordon policy`.
void AddPolicyReload(CLI::App* policy_cmd, int& exit_code);

}  // namespace cordon::tools
