// cordon fetch: seed 002's fixed web tool (fetch_command.cc).
#pragma once

#include <CLI/CLI.hpp>

namespace cordon::tools {

void RegisterFetch(CLI::App& app, int& exit_code);

}  // namespace cordon::tools
