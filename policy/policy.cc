#include "policy/policy.h"

#include <cerrno>
#include <string_view>

#include "policy/deny_glob.h"
#include "policy/path_admission.h"
#include "policy/kernel_interfaces.h"

namespace cordon::policy {

const char* ProfileName(Profile p) {
  return p == Profile::kWorkspaceWrite ? "workspace-write" : "read-only";
}
const char* NetworkName(Network n) {
  switch (n) {
    case Network::kNone: return "none";
    case Network::kAllow: return "allow";
    case Network::kPublicWeb: return "public-web";
    case Network::kHosts: return "hosts";
  }
  return "?";
}
const char* SensitiveDeleteName(SensitiveDelete d) {
  switch (d) {
    case SensitiveDelete::kAsk: return "ask";
    case SensitiveDelete::kDeny: return "deny";
    case SensitiveDelete::kAllow: return "allow";
    case SensitiveDelete::kRecoverable: return "recoverable";
  }
  return "?";
}
const char* LinkModeName(LinkMode m) { return m == LinkMode::kStrict ? "strict" : "kernel"; }
const char* AccessName(Access a) {
  switch (a) {
    case Access::kReadOnly: return "read-only";
    case Access::kReadWrite: return "read-write";
    case Access::kDenied: return "denied";
  }
  return "?";
}

bool IsWritableDevice(std::string_view path) {
  for (const char* d : kWritableDevices) {
    if (path == d) return true;
  }
  return false;
}

bool IsReadableDevice(std::string_view path) {
  if (IsWritableDevice(path)) return true;
  for (const char* d : kReadOnlyDevices) {
    if (path == d) return true;
  }
  return false;
}

std::vector<PathRule> SystemPaths() {
  std::vector<PathRule> v;
  for (const char* p : {"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc"}) {
    v.push_back(PathRule::ReadOnly(p));
  }
  // Secrets under /etc: a root tool must not read them (Landlock allows
  // only, so the supervisor grants /etc's other entries one by one). And
  // the lock file of lckpwdf(3): a read lock on it, which a readable fd
  // allows, would hold up useradd, passwd and systemd-sysusers on the host
  // for the whole run.
  for (const char* p :
       {"/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-", "/etc/sudoers",
        "/etc/sudoers.d", "/etc/ssh/ssh_host_rsa_key", "/etc/ssh/ssh_host_ecdsa_key",
        "/etc/ssh/ssh_host_ed25519_key", "/etc/ssh/ssh_host_dsa_key", "/etc/.pwd.lock"}) {
    v.push_back(PathRule::Denied(p));
  }
  for (const char* p : kWritableDevices) v.push_back({p, Access::kReadWrite, false});
  // The CPU and memory a tool may use, read by language runtimes to size
  // their thread pools and heaps (glibc's nprocs, Rust's and Go's cgroup
  // quota, the JVM's container support): without them a tool in a
  // container with a CPU quota starts a thread per host CPU.
  for (const char* p : kReadOnlyDevices) v.push_back(PathRule::ReadOnlyNoExec(p));
  // And the page sizes they map their heaps with (the JVM, Go's runtime,
  // glibc's malloc tunables read transparent huge pages' mode and size).
  for (const char* p : {"/proc", "/sys/fs/cgroup", "/sys/devices/system/cpu",
                        "/sys/kernel/mm/transparent_hugepage", "/sys/kernel/mm/hugepages"}) {
    v.push_back(PathRule::ReadOnlyNoExec(p));
  }
  return v;
}

std::vector<PathRule> BaseRulesInForce(const Policy& p) {
  std::vector<PathRule> out;
  for (const PathRule& b : p.base_paths) {
    bool named = false;
    for (const PathRule& u : p.paths) named = named || u.path == b.path;
    if (!named) out.push_back(b);
  }
  return out;
}

std::vector<PathRule> EffectiveRules(const Policy& p, const std::string& private_tmp) {
  std::vector<PathRule> rules = SystemPaths();
  rules.push_back(p.profile == Profile::kWorkspaceWrite ? PathRule::ReadWrite(p.workspace)
                                                        : PathRule::ReadOnly(p.workspace));
  rules.back().source = kWorkspaceSource;
  if (!private_tmp.empty()) rules.push_back(PathRule::ReadWrite(private_tmp));
  for (PathRule& r : BaseRulesInForce(p)) rules.push_back(std::move(r));
  rules.insert(rules.end(), p.paths.begin(), p.paths.end());
  // A grant of /dev's parent (`--ro /`) leaves /dev out; the system set's
  // devices are deeper rules and stay (kernel_interfaces.h).
  for (const PathRule& r : p.paths) {
    if (r.access != Access::kDenied && r.path != kDeviceDir && IsWithin(kDeviceDir, r.path)) {
      rules.push_back({kDeviceDir, Access::kDenied, false, kDeviceCarveOut});
      break;
    }
  }
  if (p.profile == Profile::kWorkspaceWrite) {
    // Read-only holes in the read-write workspace (PlanGrants carves them).
    for (const std::string& f : p.protected_paths) {
      rules.push_back({f, Access::kReadOnly, true, kProtectedPathSource});
    }
  }
  for (const std::string& f : p.deny_glob_matches) {
    rules.push_back({f, Access::kDenied, false, kDenyGlobSource});
  }
  for (const RefusedEntry& e : p.refused_entries) {
    rules.push_back({e.path, Access::kDenied, false, e.Source()});
  }
  if (!p.tools.empty()) {
    // Landlock rules add up, so EXECUTE must go from every broad rule for the
    // per-file rules below to be the only way to exec.
    for (PathRule& r : rules) r.executable = false;
    for (std::string& f : ExecFiles(p.tools)) rules.push_back(PathRule::ReadOnly(std::move(f)));
  }
  return rules;
}

const PathRule* CoveringRule(const std::vector<PathRule>& rules, std::string_view path) {
  long i = policy::CoveringRule(
      rules.size(), path, [&](std::size_t k) { return std::string_view(rules[k].path); },
      [&](std::size_t k) { return rules[k].access; });
  return i < 0 ? nullptr : &rules[static_cast<std::size_t>(i)];
}

Covered CoverPath(const std::vector<PathRule>& rules, std::string_view abs, bool reads) {
  Covered c;
  char buf[kAdmissionMaxPath];
  long n = abs.empty() || abs[0] != '/' ? -EINVAL : NormalizePath(abs, nullptr, buf);
  if (n < 0) {
    c.err = n == -ENAMETOOLONG ? ENAMETOOLONG : EACCES;
    c.why = n == -EACCES ? "raw .. segment" : n == -ENAMETOOLONG ? "path too long" : "not an absolute path";
    return c;
  }
  c.path.assign(buf, static_cast<std::size_t>(n));
  c.rule = CoveringRule(rules, c.path);
  if (c.rule == nullptr) {
    c.err = EACCES;
    c.why = "outside every allowed path";
  } else if (c.rule->access == Access::kDenied) {
    c.err = EACCES;
    // No grant loosens a refused hard-linked or special file: say which it is.
    const std::string& src = c.rule->source;
    c.why = src == kRefusedEntrySource ? kRefusedEntrySource
            : src == kInsideLinkSource ? kInsideLinkSource
                                       : "denied path";
  } else if (c.rule->access == Access::kReadOnly && !reads) {
    c.err = EACCES;
    c.why = c.rule->source == kProtectedPathSource ? kProtectedPathSource
            : c.rule->source == kWorkspaceSource   ? kReadOnlyWorkspace
                                                   : "read-only path";
  }
  return c;
}

bool ReadableUnder(const std::vector<PathRule>& rules, const std::string& path) {
  const PathRule* r = CoveringRule(rules, path);
  return r != nullptr && r->access != Access::kDenied;
}

bool IsWithin(const std::string& path, const std::string& dir) { return PathWithin(path, dir); }

std::vector<std::string> Validate(const Policy& p, const FsFacts& facts) {
  std::vector<std::string> errors;
  if (!IsAbsoluteNormal(p.workspace)) {
    errors.push_back("workspace must be an absolute normalised path: '" + p.workspace + "'");
  } else if (p.workspace == "/") {
    errors.push_back("workspace must not be the root directory");
  }
  for (std::size_t i = 0; i < p.paths.size(); ++i) {
    const PathRule& r = p.paths[i];
    if (!IsAbsoluteNormal(r.path)) {
      errors.push_back("path '" + r.path + "' must be absolute and normalised");
      continue;
    }
    if (r.access == Access::kReadWrite && r.path == "/") {
      errors.push_back("the root directory cannot be read-write");
    }
  }
  for (const std::string& g : p.deny_globs) {
    if (std::string why = CheckDenyGlob(g); !why.empty()) {
      errors.push_back("deny glob '" + g + "': " + why);
    }
  }
  for (const std::string& e : p.scan_problems) errors.push_back(e);
  for (std::string& e : KernelInterfaceProblems(p, facts)) errors.push_back(std::move(e));
  return errors;
}

}  // namespace cordon::policy
