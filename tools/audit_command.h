// `cordon audit verify FILE`: checks the audit log's hash chain. Exit 0 when
// intact, 1 when broken (the first broken record is named), 125 when the
// file cannot be read.
#pragma once

#include <CLI/CLI.hpp>

namespace cordon::tools {

void RegisterAudit(CLI::App& app, int& exit_code);

}  // namespace cordon::tools
