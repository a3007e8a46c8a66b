// Tool paths, read + execute (seed 004's base policy; issue 24, item 1):
// every directory on the tool's PATH and the install root of the toolchain
// it lies in (policy/tool_roots.h), plus the command's own executable and
// its `#!` interpreter (one level of `env X`, found on PATH), become
// read-only Policy::base_paths. Resolved once, at launch: a handful of
// stat/realpath calls and one read of a script's first line, no walk.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "policy/policy.h"

namespace cordon::supervisor {

struct ToolRootsInput {
  std::string path_env;           // the PATH the tool will get
  std::string home;               // the caller's HOME
  std::string runner_tool_cache;  // $RUNNER_TOOL_CACHE
  std::string command;            // argv[0]; empty: PATH only (policy explain)
  // The toolchains' variables (policy::kToolRootVariables) that are set.
  std::vector<std::pair<std::string, std::string>> env_dirs;
  // The variables of policy::kToolInputVariables that are set: what they
  // name is granted read-only, not executable.
  std::vector<std::pair<std::string, std::string>> inputs;
};

// Adds the rules to p.base_paths (p normalised: its rules canonical). A
// path the rules in force already let the tool read and execute, or deny,
// gets none: a base grant never loosens a denial nor narrows a read-write
// grant. Returns one line per entry skipped for a reason the user should
// see (a file on PATH, a symlink loop, the home itself). The same holds for
// the paths `inputs` name, granted read-only (not executable) as they
// are, file or directory, with no toolchain root.
std::vector<std::string> AddToolRoots(policy::Policy& p, const ToolRootsInput& in);

}  // namespace cordon::supervisor
