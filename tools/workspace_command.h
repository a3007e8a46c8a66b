// `cordon workspace create|list|show|retire`: managed per-session
// workspaces (supervisor/workspace_store.h), and the two hooks `cordon run
// --session` uses. Exit status: 0; 125 for bad input or a workspace that
// does not validate; 1 when retire refuses because the session is still in
// use (or a mount inside it had to be kept).
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "base/fd.h"
#include "policy/policy.h"
#include "tools/run_command.h"

namespace cordon::tools {

// The session's files/ directory under the configured root, for
// BuildPolicy. Appends to `errors` on a bad session id or root. Existence
// and ownership are checked later, under the lock (AcquireSession).
std::string SessionFilesDir(const RunOptions& o, std::vector<std::string>& errors);

// Before anything runs: takes the session's shared lock and re-validates the
// ownership record and the policy digest. Logs why and returns an invalid Fd
// on refusal. Keep the Fd open until the supervisor exits.
Fd AcquireSession(const RunOptions& o, const policy::Policy& p);

void RegisterWorkspace(CLI::App& app, int& exit_code);

}  // namespace cordon::tools
