// `cordon policy check FILE` (exit 0, or 125 listing every error) and
// `cordon policy explain FILE [--json]`: the effective policy after
// defaults and normalisation, in words a newcomer can follow.
#pragma once

#include <CLI/CLI.hpp>

namespace cordon::tools {

void RegisterPolicy(CLI::App& app, int& exit_code);

}  // namespace cordon::tools
