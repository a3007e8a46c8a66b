// The supervisor's side of a run: prepares the fence (Landlock ruleset,
// seccomp program, private TMPDIR), forks the child (child.h), serves the
// seccomp listener, forwards SIGINT/SIGTERM/SIGHUP to the tool's process
// group, and when the tool exits kills whatever is left of it and returns
// the exit status the CLI contract names (tool's own, 128+N, 125/126/127).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "policy/fs_plan.h"
#include "policy/policy.h"
#include "supervisor/emulator.h"
#include "supervisor/preload_checkin.h"
#include "supervisor/probe.h"
#include "supervisor/refusal_log.h"
#include "supervisor/rules.h"
#include "supervisor/tool_filter.h"

namespace cordon::supervisor {

class LandlockAuditReader;

inline constexpr int kExitCordonError = 125;
inline constexpr int kExitNotExecutable = 126;
inline constexpr int kExitNotFound = 127;


struct LaunchRequest {
  const policy::Policy* policy = nullptr;  // validated and normalised
  std::vector<std::string> argv;           // argv[0] resolved by the caller or via PATH
  std::vector<std::string> env;            // the tool's environment (KEY=VALUE)
  Rung rung = Rung::kLandlockNotify;
  int landlock_abi = 0;
  ToolFilterOptions filter;
  // How the supervisor decides the notified syscalls (approvals etc.).
  EmulatorOptions emulator;
  // Where the supervisor reads what it decides (supervisor/rules.h): made
  // from `policy` and started by Launch; null: Launch makes its own. The
  // caller keeps it to reload the policy while the tool runs.
  std::shared_ptr<LiveRules> rules;
  // The preload's report channel. When set, a SOCK_SEQPACKET pair is made,
  // the tool's end survives exec and is named by CORDON_REPORT_FD in its
  // environment, and every record the tool sends is handed here (untrusted
  // hints, never decisions).
  std::function<void(const void* data, size_t len)> on_report;
  // Called once the tool has exec'd, before the supervisor waits for it:
  // work of the caller's that may run in the tool's shadow (run retention).
  std::function<void()> on_started;
  // With on_report: every exec the supervisor sees is recorded here, after
  // the records queued on the channel have been handed to on_report (whose
  // owner records the check-ins: preload_checkin.h). The filter must notify
  // exec (ToolFilterOptions::notify_exec).
  std::shared_ptr<PreloadCheckins> checkins;
  // Where refusals are said to the user, once each with a hint: the
  // supervisor's own and the preload's (tools/run_preload.cc).
  std::shared_ptr<RefusalLog> refusals = std::make_shared<RefusalLog>();
  // CLOCK_REALTIME ns when the run began (0: when Launch is called). Files
  // born after it, or created by the supervisor, are the run's own.
  int64_t run_start_ns = 0;
  // Directories the host shares where the tool may make files and use only
  // those (WriteRoot::own_entries_only): SharedDirs().
  std::vector<std::string> shared_dirs;
  // public-web and hosts: the web proxy's URL, set in the tool's
  // environment (SetWebProxyEnv); req.emulator.web_proxy lets it connect.
  std::string web_proxy_url;
  // Becomes the tool's standard output (-1: cordon's own).
  int stdout_fd = -1;
  // The run has a log: Landlock (ABI 7) logs the tool's denials to the
  // kernel's audit subsystem (LOG_NEW_EXEC_ON), where `landlock_audit`,
  // when set, reads them back for the run (told the tool's pid here).
  bool log_landlock_denials = false;
  LandlockAuditReader* landlock_audit = nullptr;
};

// /dev/shm, where glibc makes POSIX semaphores and shared memory (Python's
// multiprocessing, concurrent.futures), when the supervisor decides every
// change (so it can tell the run's files from the host's) and no rule of
// the policy names /dev/shm or a directory above it. Empty otherwise.
std::vector<std::string> SharedDirs(const policy::Policy& p, const ToolFilterOptions& filter);

// CLOCK_REALTIME in ns: the clock of LaunchRequest::run_start_ns.
int64_t NowRealtimeNs();

// The Landlock plan of a run of `p` under `filter` (its private TMPDIR
// `tmp`): launch builds the ruleset from it, a reload compares against it.
// `log`: say which carved entries are skipped for their links.
std::vector<policy::Grant> PlanRunGrants(const policy::Policy& p, const ToolFilterOptions& filter,
                                         const std::string& tmp, bool log);

// Returns the exit status for cordon. Errors before the tool starts are
// logged and give kExitCordonError.
int Launch(const LaunchRequest& req);

// Finds `cmd` the way execvp does (a name with '/' is used as it is). Empty
// when not found.
std::string ResolveCommand(const std::string& cmd, const std::string& path_env);

}  // namespace cordon::supervisor
