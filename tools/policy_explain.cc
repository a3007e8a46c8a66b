#include "tools/policy_explain.h"

#include <cstdio>
#include <string>
#include <vector>

#include "policy/env_scrub.h"
#include "policy/hard_links.h"
#include "policy/kernel_interfaces.h"
#include "policy/network_mode.h"
#include "policy/policy.h"
#include "policy/policy_json.h"
#include "supervisor/journal/journal_place.h"
#include "supervisor/landlock.h"
#include "supervisor/launcher.h"
#include "supervisor/load/credentials.h"
#include "supervisor/notify_loop.h"
#include "supervisor/probe.h"
#include "supervisor/tool_filter.h"
#include "tools/policy_reload_command.h"

extern char** environ;

namespace cordon::tools {
namespace {

// What `cordon run` would probe here (same probe as RunTool).
supervisor::KernelProbe Probed() {
  supervisor::KernelProbe k;
  k.landlock_abi = supervisor::ProbeLandlockAbi();
  k.user_notif = k.addfd = k.addfd_send = true;
  return k;
}

}  // namespace

std::string RungLine() {
  using namespace cordon::supervisor;
  KernelProbe k = Probed();
  Rung r = ChooseRung(k, false);
  std::string s = RungName(r);
  if (r == Rung::kLandlockNotify) {
    s += " (Landlock ABI " + std::to_string(k.landlock_abi) +
         " fences every path below; seccomp user notification answers each mutation)";
  } else if (r == Rung::kNotifyAll) {
    s += " (no Landlock: every path syscall is notified and checked by the supervisor)";
  }
  return s;
}

namespace {

std::string WorkspaceLine(const policy::Policy& p) {
  if (p.profile == policy::Profile::kWorkspaceWrite) {
    return "read-write: the tool may create, change, rename and delete files here";
  }
  return "read-only: the tool may read here and change nothing";
}

std::string DeleteLine(policy::SensitiveDelete d) {
  switch (d) {
    case policy::SensitiveDelete::kAsk:
      return "ask: each one needs an allowed-once approval";
    case policy::SensitiveDelete::kDeny:
      return "deny: always refused";
    case policy::SensitiveDelete::kAllow:
      return "allow: no approval asked";
    case policy::SensitiveDelete::kRecoverable:
      return "recoverable: kept in the run's journal first, and `cordon undo` brings them back (a "
             "file written in place: a copy kept first, a reflink where the filesystem has them, "
             "else copied up to limits.journalCopyBytes, larger ones asked about); where no "
             "journal can be kept beside the workspace: ask";
  }
  return "?";
}

// How a recoverable run keeps a file of the user's written in place: a
// reflink, a copy up to the bound, else an approval.
std::string InPlaceLine(const policy::Policy& p) {
  const std::string bound =
      std::to_string(p.limits.max_journal_copy_bytes) + " bytes (limits.journalCopyBytes)";
  const std::string ask = "an approval (--approvals; under deny: refused)";
  if (supervisor::HasReflinks(p.workspace)) {
    return "a reflink copy, any size (this filesystem shares extents); where a reflink fails, a "
           "copy up to " +
           bound + ", larger ones " + ask;
  }
  return "a copy up to " + bound + " (no reflinks on this filesystem), larger ones " + ask;
}

// What the supervisor decides under this policy (the same mapping RunTool
// uses: approvals off and links: kernel need fewer round trips).
supervisor::ToolFilterOptions Decided(const policy::Policy& p) {
  supervisor::ToolFilterOptions o;
  supervisor::KernelProbe k = Probed();
  supervisor::NotifyWhatPolicyNeeds(p, supervisor::ChooseRung(k, false), k.landlock_abi, &o);
  return o;
}

// The syscalls sent to the supervisor under this policy.
std::vector<std::string> Notified(const policy::Policy& p) {
  std::vector<std::string> names;
  for (int nr : supervisor::NotifiedSyscalls(Decided(p))) {
    std::string n = supervisor::SyscallName(nr);
    if (std::find(names.begin(), names.end(), n) == names.end()) names.push_back(n);
  }
  return names;
}

// What the enforced rules add to the policy's own paths: /dev out of a
// grant of its parent (policy/kernel_interfaces.h).
std::vector<policy::PathRule> CarveOuts(const policy::Policy& p) {
  std::vector<policy::PathRule> out;
  for (auto& r : policy::EffectiveRules(p, "")) {
    if (r.source == policy::kDeviceCarveOut) out.push_back(std::move(r));
  }
  return out;
}

// What the preload is and is not, and when a run follows its check-ins
// (tools/run_preload.h).
constexpr char kPreloadLine[] =
    "glibc dynamic programs take libcordon_preload.so: early refusals and untrusted reports, "
    "never a grant. With --audit or --log-level info each image checks in, execve and "
    "execveat are notified too, and the run ends by naming every exec'd image that ran "
    "without it (static or musl binaries, LD_PRELOAD cleared): the kernel layers held there "
    "alone";

// The shared directories where a run may use its own files (/dev/shm).
std::vector<std::string> SharedDirs(const policy::Policy& p) {
  return supervisor::SharedDirs(p, Decided(p));
}

// /dev/shm (POSIX semaphores and shared memory), as SharedDirs decides it.
std::string SharedMemoryLine(const policy::Policy& p) {
  const supervisor::ToolFilterOptions o = Decided(p);
  if (!supervisor::SharedDirs(p, o).empty()) {
    return "/dev/shm: files the run makes there, and only those (removed when the run ends)";
  }
  for (const auto& r : p.paths) {
    if (policy::IsWithin(policy::kSharedMemoryDir, r.path))
      return "/dev/shm: as the paths below say";
  }
  if (!supervisor::DecidesEveryChange(o)) {
    return "none: the kernel takes writes under this policy, and could not tell the run's files "
           "in /dev/shm from the host's (process pools fail)";
  }
  return "none: no /dev/shm here";
}

// The names of this environment a run from here would leave out.
std::vector<std::string> RemovedHere(const policy::Policy& p) {
  std::vector<std::string> env, removed;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) env.emplace_back(*e);
  (void)policy::ScrubEnv(env, p.env_keep, &removed);
  return removed;
}

}  // namespace

// The policy as the one writer records it (policy/policy_json.h), plus what
// this machine makes of it: every rule in force with its source, the rung,
// and what goes to the supervisor.
nlohmann::json ExplainJson(const policy::Policy& p, const std::string& rung) {
  using nlohmann::json;
  auto rule = [](const policy::PathRule& r) {
    return json{{"path", policy::JsonText(r.path)},
                {"access", policy::AccessName(r.access)},
                {"source", r.source}};
  };
  json paths = json::array();
  for (const auto& r : policy::SystemPaths()) {
    paths.push_back(
        {{"path", r.path}, {"access", policy::AccessName(r.access)}, {"source", "system"}});
  }
  paths.push_back(
      {{"path", policy::JsonText(p.workspace)},
       {"access", p.profile == policy::Profile::kWorkspaceWrite ? "read-write" : "read-only"},
       {"source", "workspace"}});
  for (const auto& r : policy::BaseRulesInForce(p)) paths.push_back(rule(r));
  for (const auto& r : p.paths) paths.push_back(rule(r));
  for (const auto& r : CarveOuts(p)) paths.push_back(rule(r));
  if (p.profile == policy::Profile::kWorkspaceWrite) {
    for (const auto& f : p.protected_paths) {
      paths.push_back({{"path", policy::JsonText(f)},
                       {"access", "read-only"},
                       {"source", policy::kProtectedPathSource}});
    }
  }
  for (const auto& f : p.deny_glob_matches) {
    paths.push_back(
        {{"path", policy::JsonText(f)}, {"access", "denied"}, {"source", policy::kDenyGlobSource}});
  }
  for (const auto& e : p.refused_entries) {
    paths.push_back(
        {{"path", policy::JsonText(e.path)}, {"access", "denied"}, {"source", e.Source()}});
  }
  json j = policy::PolicyToJson(p, policy::PolicyJsonView::kRecord);
  j["effective_paths"] = std::move(paths);
  json denied = json::array();
  for (const auto& r : policy::BaseRulesInForce(p)) {
    if (r.source == supervisor::kCredentialSource) denied.push_back(policy::JsonText(r.path));
  }
  j["credentials_denied"] = std::move(denied);
  json patterns = json::array();
  for (const char* s : policy::SecretEnvPatterns()) patterns.push_back(s);
  json removed = json::array();
  for (const auto& n : RemovedHere(p)) removed.push_back(policy::JsonText(n));
  json kept = json::array();
  for (const auto& n : p.env_keep) kept.push_back(policy::JsonText(n));
  j["environment"] = {{"removed_patterns", std::move(patterns)},
                      {"kept", std::move(kept)},
                      {"removed_here", std::move(removed)}};
  j["rung"] = rung;
  j["notified_syscalls"] = Notified(p);
  j["preload"] = kPreloadLine;
  j["reload"] = ReloadLine(Decided(p));
  j["own_files_only"] = SharedDirs(p);
  return j;
}

void PrintExplained(const std::string& file, const std::string& settings, const policy::Policy& p,
                    const std::string& rung) {
  auto line = [](const char* k, const std::string& v) { std::printf("%-12s %s\n", k, v.c_str()); };
  if (file.empty() && !settings.empty()) {
    std::printf("Effective policy of a run from here: the settings file %s\n\n", settings.c_str());
  } else if (file.empty()) {
    std::printf("Effective policy of a run from here, with no policy file (the base policy)\n\n");
  } else {
    std::printf("Effective policy of %s\n\n", file.c_str());
  }
  line("Profile", policy::ProfileName(p.profile));
  line("  why", p.profile_reason);
  line("Workspace", p.workspace);
  line("", WorkspaceLine(p));
  line("Network", policy::DescribeNetwork(p));
  line("Sandbox", std::string(p.sandbox_enabled ? "enabled" : "DISABLED (bypassed)") +
                      (p.allow_bypass ? "; --no-sandbox is allowed for one run"
                                      : "; --no-sandbox is refused"));
  line("Bypass",
       p.allow_bypass
           ? "per operation: a write-open, delete, rmdir or mkdir the policy refuses "
             "inside the workspace (a protected path, a deny glob or --deny, a read-only rule), "
             "and so a rename, a link or a metadata change (mode, owner, times, xattr), is "
             "asked of the approver as one bypass, never a credential path; only "
             "allowed-once runs it, recorded \"bypassed\" (not under --approvals deny)"
           : "none: no refusal is ever offered to the approver (sandbox.allowBypass)");
  line("Temp files", p.private_tmp ? "a private TMPDIR, removed when the run ends" : "none");
  line("Shared mem", SharedMemoryLine(p));
  line("Deleting", std::string("files that existed before the run: ") +
                       DeleteLine(p.sensitive_delete) + "; files the run created: freely");
  if (p.sensitive_delete == policy::SensitiveDelete::kRecoverable && !p.workspace.empty() &&
      p.profile == policy::Profile::kWorkspaceWrite) {
    line(
        "Journal", "beside the workspace, the first of " +
                       [&] {
                         std::string c;
                         for (const auto& d : supervisor::JournalCandidates(p.workspace)) {
                           c += (c.empty() ? "" : ", ") + d;
                         }
                         return c;
                       }() +
                       " on its mount; files written in place: " + InPlaceLine(p));
  }
  line("Links", p.links == policy::LinkMode::kStrict
                    ? "strict: writes and deletes through symlinks, on hard-linked files and "
                      "on devices/FIFOs/sockets are refused"
                    : "kernel: only the kernel fence; devices/FIFOs/sockets still refused");
  line("Limits", "recursive checks stop at " + std::to_string(p.limits.max_tree_entries) +
                     " entries or " + std::to_string(p.limits.max_tree_depth) +
                     " levels; deletes up to " + std::to_string(p.limits.max_delete_bytes >> 20) +
                     " MiB");
  line("Enforced by", rung);
  std::string notified;
  for (const auto& n : Notified(p)) notified += (notified.empty() ? "" : " ") + n;
  line("Decided by",
       "the supervisor, one round trip each (reads stay at kernel speed): " + notified);
  line("Preload", kPreloadLine);
  line("Reload", ReloadLine(Decided(p)));

  std::printf("\nPaths from the policy and the command line:\n");
  if (p.paths.empty()) std::printf("  (none)\n");
  for (const auto& r : p.paths) {
    std::printf("  %-10s  %s\n  %-10s  (from %s)\n", policy::AccessName(r.access), r.path.c_str(),
                "", r.source.c_str());
  }
  for (const auto& r : CarveOuts(p)) {
    std::printf("  %-10s  %s\n  %-10s  (%s)\n", policy::AccessName(r.access), r.path.c_str(), "",
                r.source.c_str());
  }
  if (!p.base_paths.empty())
    std::printf("\nFrom this machine, by default (seed 004's base policy):\n");
  for (const auto& r : p.base_paths) {
    const bool replaced = std::any_of(p.paths.begin(), p.paths.end(),
                                      [&](const policy::PathRule& u) { return u.path == r.path; });
    std::printf("  %-10s  %s\n  %-10s  (%s%s)\n", policy::AccessName(r.access), r.path.c_str(), "",
                r.source.c_str(),
                replaced ? "; replaced by the policy's own rule of this path" : "");
  }
  std::printf(
      "\nEnvironment: variables whose names say they hold a secret are left out\n"
      "(--env-keep NAME keeps one):\n ");
  for (const char* s : policy::SecretEnvPatterns()) std::printf(" %s", s);
  std::printf(
      "\n  and any variable whose value is a URL with a password (scheme://user:pw@host)\n");
  std::string names;
  for (const auto& n : RemovedHere(p)) names += " " + n;
  std::printf("  left out of this environment:%s\n", names.empty() ? " (none)" : names.c_str());
  if (!p.env_keep.empty()) {
    std::string kept;
    for (const auto& n : p.env_keep) kept += " " + n;
    std::printf("  kept:%s\n", kept.c_str());
  }
  std::printf("\nProtected paths (read-only even when the workspace is read-write):\n");
  std::string pats;
  for (const auto& s : p.protected_patterns) pats += (pats.empty() ? "" : " ") + s;
  std::printf("  patterns, at any depth: %s\n", pats.empty() ? "(none)" : pats.c_str());
  for (const auto& f : p.protected_paths) std::printf("  found now: %s\n", f.c_str());
  if (p.profile != policy::Profile::kWorkspaceWrite) {
    std::printf("  (the workspace is read-only anyway under this profile)\n");
  } else if (p.links == policy::LinkMode::kKernel && !p.protected_scan_truncated) {
    std::printf(
        "  links: kernel: only those found now are fenced (by Landlock, which sees no names);\n"
        "  one the run creates (a new .envrc, a new repository's hooks) is NOT refused\n");
  }
  if (!p.deny_globs.empty()) {
    std::printf(
        "\nDeny globs (neither read nor written: every match now, and any the run makes):\n");
    std::string globs;
    for (const auto& g : p.deny_globs) globs += (globs.empty() ? "" : " ") + g;
    std::printf("  patterns: %s\n", globs.c_str());
    for (const auto& f : p.deny_glob_matches) std::printf("  found now: %s\n", f.c_str());
  }
  std::printf("\nHard-linked and special files (neither read nor written; hardLinks: %s):\n",
              policy::HardLinksName(p.hard_links));
  std::printf("  %s; devices and FIFOs always\n",
              p.hard_links == policy::HardLinks::kRefuse
                  ? "every regular file with more than one name"
                  : "a regular file with a name outside the workspace (its names found here < "
                    "its link count)");
  if (p.workspace.empty())
    std::printf("  (no workspace: nothing looked for)\n");
  else if (p.refused_entries.empty())
    std::printf("  found now: none\n");
  for (const auto& e : p.refused_entries) {
    std::printf("  found now: %s (%s)\n", e.path.c_str(), e.why.c_str());
  }
  if (!p.dropped.empty()) {
    std::printf("\nDropped (they do not exist, so nothing is granted for them):\n");
    for (const auto& d : p.dropped) std::printf("  %s: %s\n", d.path.c_str(), d.reason.c_str());
  }
  std::printf("\nAlways granted: the system set read-only (");
  bool first = true;
  for (const auto& r : policy::SystemPaths()) {
    if (r.access != policy::Access::kReadOnly) continue;
    std::printf("%s%s", first ? "" : " ", r.path.c_str());
    first = false;
  }
  std::printf("), minus secrets such as /etc/shadow; /dev/null, /dev/zero, /dev/full.\n");
  std::printf("Everything else is out of reach.\n");
  for (const auto& n : p.notes) std::printf("\nNote: %s\n", n.c_str());
}

}  // namespace cordon::tools
