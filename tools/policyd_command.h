// `cordon policyd --socket PATH`: the policy service daemon, and
// `cordon approve --socket PATH` to list and answer its pending requests.
#pragma once

#include <CLI/CLI.hpp>

namespace cordon::tools {

void RegisterPolicyd(CLI::App& app, int& exit_code);
void RegisterApprove(CLI::App& app, int& exit_code);

}  // namespace cordon::tools
