// `cordon grep [run options] [--json] -- PATTERN [PATH]...` and
// `cordon glob [run options] -- GLOB [PATH]...`: ripgrep inside the sandbox
// with a fixed argument template (seed 002). Each path is admitted first
// (inside the workspace, no raw ".."; a relative one is the workspace's,
// whatever the caller's cwd, and reaches ripgrep as spelt, so paths print
// as `cd WS && rg` prints them), the bounded tree check runs on every
// root, ripgrep is pinned by identity (so it is the only binary the run may
// execute) and gets a scrubbed environment.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "policy/policy.h"
#include "tools/run_command.h"

namespace cordon::tools {

enum class SearchKind { kGrep, kGlob };

// How ripgrep prints matches (grep only; at most one is set).
struct RipgrepOutput {
  bool json = false;   // --json
  bool count = false;  // --count: PATH:COUNT per matching file
};

// What stands for the user's input in the template the audit log records.
inline constexpr const char* kPatternHole = "{PATTERN}";
inline constexpr const char* kPathsHole = "{PATH}...";

// The argv ripgrep runs with. `pattern` is the regex (grep) or the glob
// (glob); `roots` are already admitted (relative to the workspace, or
// absolute inside it) and spelt as the user gave them. User input only ever appears as the value of
// `-e`/`--glob` or after `--`, so none of it can become an option.
std::vector<std::string> RipgrepTemplate(SearchKind kind, const std::string& rg_path,
                                         const std::string& pattern, const RipgrepOutput& output,
                                         const std::vector<std::string>& roots);

// The environment ripgrep gets: PATH, HOME, LANG, LC_*, TERM from `caller`
// (TMPDIR is set by the launcher); nothing else, so no RIPGREP_CONFIG_PATH
// and no LD_*.
std::vector<std::string> ScrubbedEnv(const std::vector<std::string>& caller);

// First line of `rg --version`, asked of the pinned ripgrep inside the
// search's own fence made read-only (never unconfined: this exec is checked
// against the pin like the search's), with the search's environment `env`;
// empty when it cannot be read.
std::string RipgrepVersion(const RunOptions& run, const policy::Policy& p,
                           const std::string& rg_path, const std::vector<std::string>& env);

void RegisterGrep(CLI::App& app, int& exit_code);

}  // namespace cordon::tools
