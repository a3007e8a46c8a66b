// `cordon run` and the options every command that launches a tool shares
// (grep and glob reuse them): flags -> Policy -> Launch.
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "policy/policy.h"
#include "supervisor/run_gates.h"

namespace cordon::tools {

struct RunOptions {
  std::string workspace;
  std::string session;          // --session: run in that managed workspace
  std::string workspaces_root;  // --workspaces-root; empty: the default
  std::string profile;  // empty: what the policy says (read-only by default)
  std::vector<std::string> ro, rw, deny;
  std::vector<std::string> deny_globs;  // --deny-glob (policy/deny_glob.h)
  std::vector<std::string> env_keep;  // --env-keep NAME: a secret's variable the tool keeps
  bool no_private_cache = false;      // --no-private-cache: the cache variables stay the caller's
  std::string network;  // empty: policy's (none by default)
  std::string sensitive_delete;  // empty: the policy's (recoverable by default)
  std::string hard_links;        // empty: the policy's (refuse by default)
  std::string policy_file;  // --policy FILE (docs/policy.md); flags override it for this run
  std::string receipt;      // --receipt FILE: the policy's SHA-256 must match
  bool sandbox = false;     // --sandbox: force confinement on, this run only
  bool no_sandbox = false;  // --no-sandbox: needs the policy's allowBypass
  bool allow_degraded = false;
  bool force_notify_all = false;  // hidden: test the notify-all rung
  std::vector<std::string> tools;  // --tool NAME=PATH: the exec allowlist
  std::string approvals;            // deny|tty|rules:FILE|socket:PATH; empty: by stdin
  double approval_timeout_s = 60;   // --approval-timeout SECONDS
  std::string audit;   // --audit FILE|none; empty: the run record's (run_services.h)
  std::string events;  // --events FD|FILE: run.start/run.end, with the log's anchor
  nlohmann::json audit_header = nlohmann::json::object();  // set by grep/glob: added to the header
  // Set by grep/glob: must pass before the tool's exec (the run's gates'
  // AdmitExec, supervisor/run_gates.h). Without a supervisor (preload-only)
  // it is asked before launch.
  // A refusal is its setter's to report: cordon run prints no error for it.
  std::shared_ptr<supervisor::ExecAdmission> exec_gate;
  int stdout_fd = -1;  // set by grep's version probe: the tool's fd 1 (-1: cordon's)
  std::vector<std::string> command;
};

// Adds the run options to `cmd` (not the trailing command).
void AddRunOptions(CLI::App* cmd, RunOptions& opts);

// Builds and validates the policy the options describe. On error prints
// every problem and returns false (the caller exits 125). With `errors`
// the problems go there instead of being printed (a reload's, said to its
// caller); `label` names the policy file in them instead of its path.
// With `warnings` the warnings go there too instead of the run's stderr.
bool BuildPolicy(const RunOptions& opts, policy::Policy& out,
                 std::vector<std::string>* errors = nullptr, const std::string& label = "",
                 std::vector<std::string>* warnings = nullptr);

// Launches argv under the policy; returns cordon's exit status. `env` is
// the tool's environment (null: cordon's own, as `cordon run` passes it).
// Pinned tools are checked against their identity first (126 if changed).
int RunTool(const RunOptions& opts, const policy::Policy& p, std::vector<std::string> argv,
            const std::vector<std::string>* env = nullptr);

void RegisterRun(CLI::App& app, int& exit_code);

}  // namespace cordon::tools
