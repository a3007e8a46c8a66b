// `cordon doctor [--json]`: what this kernel offers and which rung a run
// would stand on. Exit 0 when full confinement is available, 125 otherwise.
#pragma once

#include <CLI/CLI.hpp>

namespace cordon::tools {

void RegisterDoctor(CLI::App& app, int& exit_code);

}  // namespace cordon::tools
