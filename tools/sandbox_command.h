// `cordon sandbox status|enable|disable`: seed 004's /sandbox toggle. Reads
// and edits sandbox.enabled in the user's settings file (settings_file.h),
// which `cordon run` uses as its policy when no --policy is given.
#pragma once

#include <CLI/CLI.hpp>

namespace cordon::tools {

void RegisterSandbox(CLI::App& app, int& exit_code);

}  // namespace cordon::tools
