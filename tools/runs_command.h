// `cordon undo` and `cordon runs list|show|prune` (issue 26): a recoverable
// run's changes, shown and taken back from its journal
// (supervisor/journal/). Bad input (an unknown run, a damaged journal, a
// workspace that moved) is one line and exit 125, with nothing touched.
#pragma once

#include <CLI/CLI.hpp>

namespace cordon::tools {

void RegisterUndo(CLI::App& app, int& exit_code);
void RegisterRuns(CLI::App& app, int& exit_code);

}  // namespace cordon::tools
