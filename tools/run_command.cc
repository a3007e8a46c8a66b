#include "tools/run_command.h"

#include <fcntl.h>
#include <limits.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <nlohmann/json.hpp>

#include "policy/deny_glob.h"
#include "policy/network_mode.h"
#include "policy/protected_paths.h"
#include "supervisor/approval_gates.h"
#include "supervisor/control_socket.h"
#include "supervisor/exec/tool_pin.h"
#include "supervisor/landlock.h"
#include "supervisor/launcher.h"
#include "supervisor/load/base_policy.h"
#include "supervisor/load/ci_runner.h"
#include "supervisor/load/fs_facts.h"
#include "supervisor/load/normalise.h"
#include "supervisor/load/private_cache.h"
#include "supervisor/notify_loop.h"
#include "supervisor/probe.h"
#include "supervisor/tool_wait.h"
#include "supervisor/walk/scan_cache_file.h"
#include "tools/bypass.h"
#include "tools/policy_file.h"
#include "tools/run_journal.h"
#include "tools/run_preload.h"
#include "tools/run_reload.h"
#include "tools/run_retention.h"
#include "tools/run_services.h"
#include "tools/run_web_proxy.h"
#include "tools/settings_file.h"
#include "tools/workspace_command.h"

extern char** environ;

namespace cordon::tools {
namespace {

// When cordon started (static initialization, before main): the run begins
// here for the birth-time rule (launcher.h, run_start_ns). The earlier, the
// likelier that a file the kernel creates for the tool on its own (links:
// kernel) carries a later time even from the kernel's lagging coarse clock.
const int64_t g_process_start_ns = supervisor::NowRealtimeNs();

// `--approvals socket:PATH` hands the answers to whoever can reach PATH:
// never the tool. Under either network mode the tool reaches only Unix
// socket names beneath what it may write (supervisor/emulator_socket.cc).
void CheckApprovalSocket(const std::string& path, const policy::Policy& p,
                         std::vector<std::string>& errors) {
  std::string dir = path.substr(0, path.rfind('/') + 1);
  auto real = supervisor::RealPath(dir.empty() ? "." : dir);
  if (!real) return;  // no such socket yet: the run's approvals fail closed
  std::string abs = real.value() + "/" + path.substr(path.rfind('/') + 1);
  std::vector<std::string> writable;
  if (p.profile == policy::Profile::kWorkspaceWrite) writable.push_back(p.workspace);
  for (const auto* rules : {&p.paths, &p.base_paths}) {
    for (const auto& r : *rules) {
      if (r.access == policy::Access::kReadWrite) writable.push_back(r.path);
    }
  }
  for (const auto& w : writable) {
    if (!w.empty() && policy::IsWithin(abs, w)) {
      errors.push_back("--approvals socket:" + path + " lies in " + w +
                       ", which the tool may write: it could answer its own requests there");
    }
  }
}

}  // namespace

void AddRunOptions(CLI::App* cmd, RunOptions& o) {
  // An empty value (an unset shell variable) is refused rather than taken
  // for the default: `--workspace "$WS"` must not grant the current directory.
  const CLI::Validator non_empty(
      [](const std::string& v) {
        return v.empty() ? std::string("must not be empty") : std::string();
      },
      "NONEMPTY");
  cmd->add_option("--workspace", o.workspace, "workspace directory (default: current directory)")
      ->check(non_empty);
  cmd->add_option("--session", o.session,
                  "run in this session's managed workspace (cordon workspace)")
      ->check(non_empty);
  cmd->add_option(
         "--workspaces-root", o.workspaces_root,
         "where managed workspaces live (default ${XDG_STATE_HOME:-~/.local/state}/cordon)")
      ->check(non_empty);
  cmd->add_option("--profile", o.profile, "read-only (default) or workspace-write")
      ->check(CLI::IsMember({"read-only", "workspace-write"}))
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);  // as --sensitive-delete
  cmd->add_option("--policy", o.policy_file, "policy file (docs/policy.md); flags override it")
      ->check(non_empty);
  cmd->add_option("--receipt", o.receipt, "receipt naming the policy file's SHA-256")
      ->check(non_empty)
      ->needs("--policy");
  auto* on = cmd->add_flag("--sandbox", o.sandbox, "confine this run even if the policy disables it");
  cmd->add_flag("--no-sandbox", o.no_sandbox, "run unconfined (needs sandbox.allowBypass)")
      ->excludes(on);
  cmd->add_option("--ro", o.ro, "extra read-only path (repeatable)")
      ->check(non_empty)
      ->allow_extra_args(false);
  cmd->add_option("--rw", o.rw, "extra read-write path (repeatable)")
      ->check(non_empty)
      ->allow_extra_args(false);
  cmd->add_option("--deny", o.deny, "path the tool may not reach, even inside an allowed one")
      ->check(non_empty)
      ->allow_extra_args(false);
  cmd->add_option("--deny-glob", o.deny_globs,
                  "gitignore-style pattern, relative to the workspace ('**/.env', '*.pem'): "
                  "every match, existing or made during the run, is neither read nor written "
                  "(repeatable)")
      ->check(non_empty)
      ->allow_extra_args(false);
  cmd->add_option("--env-keep", o.env_keep,
                  "keep this environment variable although its name says it holds a secret "
                  "(repeatable)")
      ->check(CLI::Validator(
          [](const std::string& v) {
            return v.empty() || v.find('=') != std::string::npos
                       ? std::string("must be a variable's name, without '='")
                       : std::string();
          },
          "NAME"))
      ->allow_extra_args(false);
  cmd->add_flag("--no-private-cache", o.no_private_cache,
                "under workspace-write, no private cache for this workspace: the cache "
                "variables (XDG_CACHE_HOME, PIP_CACHE_DIR, ...) stay as they are");
  cmd->add_option("--sensitive-delete", o.sensitive_delete,
                  "deleting or replacing a file that existed before the run: recoverable "
                  "(default: kept in the run's journal, cordon undo), ask, deny or allow")
      ->check(CLI::IsMember({"recoverable", "ask", "deny", "allow"}))
      // The last one given wins: a refusal's hint appended to the command
      // line then gets past it (policy/refusal_hint.h).
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  cmd->add_option("--hard-links", o.hard_links,
                  "regular files with more than one name in the workspace: refuse (default: "
                  "left out of the grant) or inside-workspace (read where every name lies in "
                  "the workspace: a build's hard-linked outputs)")
      ->check(CLI::IsMember({"refuse", "inside-workspace"}))
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);  // as --sensitive-delete
  cmd->add_option("--network", o.network,
                  "none (default: the tool's own loopback only), public-web (public hosts "
                  "through cordon's proxy), hosts:NAME[,*.SUFFIX]... (those hosts through it) "
                  "or allow")
      ->check(non_empty)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);  // a hint appended wins
  cmd->add_flag("--allow-degraded", o.allow_degraded,
                "run with advisory confinement when the kernel lacks seccomp notification");
  cmd->add_flag("--test-force-notify-all", o.force_notify_all)->group("");
  cmd->add_option("--tool", o.tools,
                  "NAME=PATH: pin this binary; with any pin, only pinned binaries may run")
      ->allow_extra_args(false);  // one value per --tool, so a following -- ends options
  cmd->add_option("--approvals", o.approvals,
                  "who answers sensitive deletes: deny (default without a terminal), tty, "
                  "rules:FILE or socket:PATH");
  cmd->add_option("--approval-timeout", o.approval_timeout_s,
                  "seconds to wait for an approval before refusing (default 60)");
  cmd->add_option("--audit", o.audit,
                  "the hash-chained JSON-lines audit log: FILE (appended to), or none (default: "
                  "${XDG_STATE_HOME:-~/.local/state}/cordon/runs/RUN/audit.jsonl)")
      ->check(non_empty);
  cmd->add_option("--events", o.events,
                  "FD or FILE: the run's start and end as JSON lines, with its audit log's "
                  "anchor (cordon audit verify)")
      ->check(non_empty);
}

bool BuildPolicy(const RunOptions& o, policy::Policy& p, std::vector<std::string>* errors_out,
                 const std::string& label, std::vector<std::string>* warnings_out) {
  std::vector<std::string> errors;
  // A reload's warnings are its caller's (warnings_out), not the run's.
  auto warn = [&](std::string w) {
    if (warnings_out)
      warnings_out->push_back(std::move(w));
    else
      spdlog::warn("{}", w);
  };
  auto report = [&] {
    if (errors_out) errors_out->insert(errors_out->end(), errors.begin(), errors.end());
    else for (const auto& e : errors) spdlog::error("{}", e);
    return errors.empty();
  };
  // Receipt and file first: until they check out nothing else is looked at.
  // Without --policy the user's settings file is the policy (settings_file.h).
  std::vector<std::string> settings_warnings;
  if (!o.policy_file.empty()) LoadPolicyFile(o.policy_file, o.receipt, p, errors, label);
  else LoadSettings(p, errors, settings_warnings);
  for (const auto& w : settings_warnings) warn(w);
  if (!errors.empty()) return report();
  std::string ws = o.workspace;
  std::vector<std::string> ci_warnings;
  if (!o.session.empty()) {
    // The session's files/ (checked under its lock by AcquireSession).
    if (!ws.empty()) errors.push_back("--session and --workspace cannot be combined");
    else p.workspace = SessionFilesDir(o, errors);
  } else if (ws.empty() && !(ws = supervisor::CiDefaultWorkspace(ci_warnings)).empty()) {
    // A CI step: the runner's workspace ($GITHUB_WORKSPACE, $CI_PROJECT_DIR).
  } else if (ws.empty()) {
    char cwd[PATH_MAX];
    if (::getcwd(cwd, sizeof(cwd)) == nullptr) errors.push_back("cannot read the current directory");
    else ws = cwd;
  }
  if (!ws.empty()) {
    auto real = supervisor::ResolveWorkspace(ws);
    if (real) p.workspace = std::move(real.value());
    else errors.push_back("workspace: " + Describe(real.error()));
  }
  if (o.profile == "workspace-write") {
    p.profile = policy::Profile::kWorkspaceWrite;
    p.profile_reason = "--profile workspace-write (this run only)";
  } else if (o.profile == "read-only") {
    p.profile = policy::Profile::kReadOnly;
    p.profile_reason = "--profile read-only (this run only)";
  }
  if (o.sensitive_delete == "recoverable") p.sensitive_delete = policy::SensitiveDelete::kRecoverable;
  else if (o.sensitive_delete == "ask") p.sensitive_delete = policy::SensitiveDelete::kAsk;
  else if (o.sensitive_delete == "deny") p.sensitive_delete = policy::SensitiveDelete::kDeny;
  else if (o.sensitive_delete == "allow") p.sensitive_delete = policy::SensitiveDelete::kAllow;
  if (o.hard_links == "refuse")
    p.hard_links = policy::HardLinks::kRefuse;
  else if (o.hard_links == "inside-workspace")
    p.hard_links = policy::HardLinks::kInsideWorkspace;
  if (std::string why; !o.network.empty() && !policy::ParseNetworkMode(o.network, &p, &why)) {
    errors.push_back("--network: " + why);
  }

  // A relative path on the command line is the shell's: from the caller's
  // current directory.
  char cwd[PATH_MAX];
  const bool have_cwd = ::getcwd(cwd, sizeof(cwd)) != nullptr;
  auto add = [&](const std::vector<std::string>& paths, policy::Access access, const char* flag) {
    for (const std::string& raw : paths) {
      std::string path = raw;
      if (path[0] != '/') {
        if (!have_cwd) {
          errors.push_back(std::string(flag) + " " + raw + ": a relative path, and the current "
                           "directory cannot be read");
          continue;
        }
        path = std::string(cwd) + "/" + raw;
      }
      p.paths.push_back({std::move(path), access, access != policy::Access::kDenied, flag});
    }
  };
  add(o.ro, policy::Access::kReadOnly, "--ro");
  add(o.rw, policy::Access::kReadWrite, "--rw");
  add(o.deny, policy::Access::kDenied, "--deny");
  for (const std::string& d : o.deny) {
    if (policy::IsGlobPattern(d)) {
      errors.push_back("--deny " + d + ": a path, not a pattern; use --deny-glob '" + d +
                       "' for a glob");
    }
  }
  for (const std::string& g : o.deny_globs) {
    if (std::find(p.deny_globs.begin(), p.deny_globs.end(), g) == p.deny_globs.end()) {
      p.deny_globs.push_back(g);
    }
  }
  p.env_keep = o.env_keep;
  // Seed 004's base policy: git's identity and config read-only, the
  // credentials denied, a CI runner's step files.
  supervisor::AddMachineBase(p, ci_warnings);
  for (const auto& w : ci_warnings) warn(w);
  // One-run overrides; never written back anywhere.
  if (o.sandbox) p.sandbox_enabled = true;
  if (o.no_sandbox) p.sandbox_enabled = false;
  // A confined workspace-write run's own caches (policy/private_cache.h);
  // an unconfined run uses the user's.
  if (!o.no_private_cache && p.sandbox_enabled && !p.workspace.empty()) {
    std::vector<std::string> cache_warnings;
    supervisor::AddPrivateCache(p, true, cache_warnings);
    for (const auto& w : cache_warnings) warn(w);
  }
  if (!p.sandbox_enabled && !p.allow_bypass) {
    errors.push_back(std::string(o.no_sandbox ? "--no-sandbox" : "sandbox.enabled false") +
                     " refused: the policy does not set sandbox.allowBypass");
  }
  if (!p.workspace.empty()) supervisor::NormalisePolicy(p);
  if (!p.workspace.empty() && !o.command.empty()) {
    // Tool paths, read + execute: PATH, its toolchain roots, the command
    // and its interpreter (seed 004's base policy), after the user's rules
    // are canonical so that none of theirs is loosened or narrowed.
    for (const auto& w : supervisor::AddToolPaths(p, o.command[0])) warn("tool paths: " + w);
  }
  for (const std::string& t : o.tools) {
    std::size_t eq = t.find('=');
    auto pin = supervisor::MakePin(t.substr(0, eq), eq == std::string::npos ? "" : t.substr(eq + 1));
    if (pin) p.tools.push_back(std::move(pin.value()));
    else errors.push_back("--tool " + t + ": " + Describe(pin.error()));
  }
  if (o.approvals.rfind("socket:", 0) == 0) CheckApprovalSocket(o.approvals.substr(7), p, errors);
  for (const auto& d : p.dropped) {
    warn("path " + d.path + " dropped from the policy: " + d.reason);
  }
  for (const auto& n : p.notes) {
    if (warnings_out)
      warnings_out->push_back("note: " + n);
    else
      spdlog::info("note: {}", n);
  }
  if (errors.empty()) {
    for (auto& e : policy::Validate(p, supervisor::GatherFsFacts(p))) errors.push_back(std::move(e));
  }
  return report();
}

// Wires the policy's decisions into the supervisor: approvals, protected
// paths, exec pins, audit records, and which syscalls need a round trip.
void ConfigureDecisions(const policy::Policy& p, const RunServices& services,
                        std::shared_ptr<supervisor::ExecAdmission> exec_gate,
                        supervisor::LaunchRequest& req);

// Asks the exec gate now, where no supervisor will see the exec (no sandbox,
// or preload-only); false when it refuses, which the gate's owner reports.
bool ExecGateOpen(const RunOptions& o) {
  if (!o.exec_gate) return true;
  Status g = o.exec_gate->Admit();
  if (!g) spdlog::debug("exec gate: {}", Describe(g.error()));
  return g.ok();
}

int RunTool(const RunOptions& o, const policy::Policy& p, std::vector<std::string> argv,
            const std::vector<std::string>* env) {
  using namespace cordon::supervisor;
  if (!CheckTestHooks()) return kExitCordonError;
  if (argv.empty()) {
    spdlog::error("no command given (cordon run [options] -- CMD [ARG]...)");
    return kExitCordonError;
  }
  // BuildPolicy admits a disabled sandbox only with allowBypass.
  if (!p.sandbox_enabled) {
    return ExecGateOpen(o) ? RunUnconfined(p, std::move(argv), o.audit == "none" ? std::string() : o.audit,
                                           o.audit_header, env)
                           : kExitNotExecutable;
  }
  // Before the run's first thread (the control socket's, the approver's):
  // a Ctrl-C or a SIGTERM then waits for Launch to forward it to the tool.
  BlockForwardedSignals();
  // Held until cordon exits, so a retire waits for this supervisor; taken
  // and the record re-validated before anything is granted.
  Fd session_lock;
  if (!o.session.empty() && !(session_lock = AcquireSession(o, p))) return kExitCordonError;
  KernelProbe k;
  k.landlock_abi = ProbeLandlockAbi();
  // Seccomp user notification with ADDFD is assumed (5.14+); a kernel
  // without it fails at filter install and the run stops with 125.
  k.user_notif = k.addfd = k.addfd_send = true;
  Rung rung = ChooseRung(k, o.force_notify_all);
  if (rung == Rung::kPreloadOnly && !o.allow_degraded) {
    spdlog::error("this kernel cannot confine the tool; rerun with --allow-degraded for advisory-only mode");
    return kExitCordonError;
  }
  spdlog::info("enforcement rung: {} (Landlock ABI {})", RungName(rung), k.landlock_abi);

  const char* path_env = std::getenv("PATH");
  std::string resolved = ResolveCommand(argv[0], path_env ? path_env : "");
  if (resolved.empty()) {
    spdlog::error("{}: command not found", argv[0]);
    return kExitNotFound;
  }
  argv[0] = resolved;

  // The audit log and the approver; the notify loop gets both (services.audit
  // may be null, services.approver never is).
  RunServices services;
  const int logged_abi = rung == Rung::kLandlockNotify ? k.landlock_abi : 0;
  if (!OpenRunServices(o, p, RungName(rung), logged_abi, argv, services)) return kExitCordonError;

  LaunchRequest req;
  req.run_start_ns = g_process_start_ns;
  req.policy = &p;
  req.argv = std::move(argv);
  if (env) req.env = *env;
  else for (char** e = environ; e && *e; ++e) req.env.emplace_back(*e);
  // The pins were taken when the policy was built; a binary swapped since
  // (before Landlock binds its rules to inodes) is refused here. The bytes
  // are re-hashed by the supervisor at every exec, the first one included
  // (the filter is in place before it); only without a filter are they
  // hashed here.
  for (const policy::ToolPin& pin : p.tools) {
    Fd fd(::open(pin.path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
    auto check = rung == Rung::kPreloadOnly ? supervisor::CheckIdentity : supervisor::CheckMetadata;
    Status s = fd ? check(pin, fd.get()) : Status(Errno("open", pin.path));
    if (!s) {
      spdlog::error("cannot execute: {}", Describe(s.error()));
      return kExitNotExecutable;
    }
  }
  if (rung == Rung::kPreloadOnly && !ExecGateOpen(o)) return kExitNotExecutable;
  req.stdout_fd = o.stdout_fd;
  req.rung = rung;
  req.landlock_abi = k.landlock_abi;
  req.log_landlock_denials = services.audit != nullptr;
  req.landlock_audit = services.landlock.get();
  req.filter.network = p.network;
  policy::Policy run_policy = p;
  // sensitive.delete: recoverable: the journal, denied to the tool.
  DenyRunRecords(services, run_policy);
  DenyScanCaches(run_policy);
  std::shared_ptr<Journal> journal = OpenRunJournal(run_policy, req.argv, services.run_id);
  req.emulator.journal = journal;
  ConfigureDecisions(run_policy, services, o.exec_gate, req);
  // public-web, hosts: the tool's only way out (run_web_proxy.h).
  std::unique_ptr<WebProxy> web_proxy;
  if (!StartRunProxy(run_policy, req, &web_proxy)) return kExitCordonError;
  // The preload (issue 5): glibc tools get early, precise refusals.
  // The preload's hints and check-ins (untrusted, per call and per exec)
  // go to a log the user named; the default log holds the supervisor's
  // records only, and a plain run opens no report channel and follows no
  // exec (their cost, README "Speed").
  supervisor::AuditLog* named_log = o.audit.empty() ? nullptr : services.audit.get();
  const PreloadAccount preload =
      AttachPreload(run_policy, req, named_log ? services.audit : nullptr);
  req.policy = &run_policy;
  // `cordon policy reload` (issue 27 item 2): the run's control socket, in
  // its directory (denied to the tool), while a supervisor decides.
  req.rules = std::make_shared<LiveRules>();
  std::unique_ptr<RunReloader> reloader;
  std::unique_ptr<ControlSocket> control;
  if (services.run_dir && rung != Rung::kPreloadOnly) {
    ReloadFrame frame{
        o, run_policy, {}, p.sensitive_delete, req.rules, services.audit, web_proxy.get()};
    frame.run_rules.assign(run_policy.paths.begin() + static_cast<long>(p.paths.size()),
                           run_policy.paths.end());
    reloader = std::make_unique<RunReloader>(std::move(frame));
    auto c = ControlSocket::Listen(services.run_dir->fd.get(), [r = reloader.get()](int conn, int stop) {
      r->Serve(conn, stop);
    });
    if (c) control = std::move(c.value());
    else spdlog::warn("control socket: {} (cordon policy reload cannot reach this run)", Describe(c.error()));
  }
  // The workspace's older runs go while the tool runs (run_retention.h).
  RetentionPass retention(p, o.policy_file, services, journal);
  req.on_started = [&retention] { retention.Start(); };
  int status = Launch(req);
  control.reset();  // no reload once the tool is gone; the socket is removed
  web_proxy.reset();  // its last requests end and are audited before the log closes
  CloseRunJournal(journal, run_policy, status);
  ReportPreload(preload, req.argv[0], named_log);
  const bool recoverable = journal && journal->Stats().changes > 0;
  // Joined (or run now, if the tool never started) before the run's records
  // close; its lines follow the tool's output.
  retention.Finish();
  if (!CloseRunServices(services, status, recoverable)) return kExitCordonError;
  return status;
}

void ConfigureDecisions(const policy::Policy& p, const RunServices& services,
                        std::shared_ptr<supervisor::ExecAdmission> exec_gate,
                        supervisor::LaunchRequest& req) {
  using policy::SensitiveDelete;
  supervisor::EmulatorOptions& e = req.emulator;
  supervisor::AskFor asks;
  // Under recoverable a delete is kept, never asked about; a write in
  // place too large to keep a copy of is asked about.
  asks.deletes = p.sensitive_delete == SensitiveDelete::kAsk;
  asks.writes = p.sensitive_delete == SensitiveDelete::kAsk ||
                p.sensitive_delete == SensitiveDelete::kRecoverable;
  // Per-operation bypass (policy/bypass.h): asked only with
  // sandbox.allowBypass and an approver who can answer.
  asks.bypasses = std::string_view(services.approver->Name()) != "deny";
  e.allow_bypass = p.allow_bypass;
  // The approver's questions, the exec gate (cordon grep's tree check),
  // and at the stop every pending question cancelled.
  e.gates = std::make_shared<supervisor::ApproverGates>(
      services.approver, services.approval_timeout, req.argv[0], asks, std::move(exec_gate));
  for (const policy::PathRule& r : p.base_paths) {
    if (r.source == policy::kCredentialSource) e.credentials.push_back(r);
  }
  e.observer = AuditObserver(services);
  // Notify only what the policy needs decided (DESIGN.md); an exec needs a
  // decision only against an exec allowlist (Landlock's EXECUTE rights are
  // the fence otherwise).
  supervisor::NotifyWhatPolicyNeeds(p, req.rung, req.landlock_abi, &req.filter);
  req.shared_dirs = supervisor::SharedDirs(p, req.filter);
}

void RegisterRun(CLI::App& app, int& exit_code) {
  auto* opts = new RunOptions;  // lives as long as the process
  CLI::App* run = app.add_subcommand("run", "run a command confined to its workspace");
  AddRunOptions(run, *opts);
  run->add_option("command", opts->command, "the command and its arguments, after --")
      ->required();
  run->callback([opts, &exit_code] {
    policy::Policy p;
    exit_code = BuildPolicy(*opts, p) ? RunTool(*opts, p, opts->command)
                                      : supervisor::kExitCordonError;
  });
}

}  // namespace cordon::tools
