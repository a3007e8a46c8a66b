#include "supervisor/load/tool_roots.h"

#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <set>
#include <sstream>

#include "base/fd.h"
#include "policy/tool_roots.h"
#include "supervisor/load/normalise.h"
#include "supervisor/load/path_resolver.h"

namespace cordon::supervisor {
namespace {

bool IsDir(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

class Granter {
 public:
  Granter(policy::Policy& p, policy::ToolRootContext ctx, PathResolver& resolve)
      : p_(p), ctx_(std::move(ctx)), rules_(policy::EffectiveRules(p, "")), resolve_(resolve) {}

  PathResolver& resolve() { return resolve_; }

  std::vector<std::string> warnings;

  // Grants `real` (canonical) read-only, and `executable` or not, unless
  // refused or covered already: denied or read-write there, or readable
  // (and executable, when that is asked).
  void Grant(const std::string& real, const std::string& source, bool executable = true) {
    if (const char* why = policy::WideningRefusal(real, ctx_)) {
      warnings.push_back(real + " (" + source + ") is " + why + ": not granted");
      return;
    }
    const policy::PathRule* r = policy::CoveringRule(rules_, real);
    if (r != nullptr && (r->access != policy::Access::kReadOnly || r->executable || !executable)) {
      return;
    }
    policy::PathRule rule{real, policy::Access::kReadOnly, executable, source};
    rules_.push_back(rule);
    p_.base_paths.push_back(std::move(rule));
  }

  // Grants the toolchain root(s) `real` (and its name as found, `found`)
  // lies in; without one, `fallback` itself.
  void GrantRootOr(const std::string& real, const std::string& found, const std::string& what,
                   const std::string& fallback, const std::string& fallback_source) {
    policy::ToolchainRoot tr = policy::ToolchainRootOf(real, ctx_);
    if (tr.roots.empty() && found != real) tr = policy::ToolchainRootOf(found, ctx_);
    bool granted = false;
    for (const std::string& root : tr.roots) {
      std::string r = resolve_.RealOrEmpty(root);
      if (r.empty() || !IsDir(r) || policy::WideningRefusal(r, ctx_) != nullptr) continue;
      Grant(r, std::string("toolchain root (") + tr.layout + ") of " + what);
      granted = true;
    }
    if (!granted) Grant(fallback, fallback_source);
  }

 private:
  policy::Policy& p_;
  policy::ToolRootContext ctx_;
  std::vector<policy::PathRule> rules_;
  PathResolver& resolve_;
};

std::vector<std::string> SplitPath(const std::string& path_env) {
  std::vector<std::string> out;
  std::stringstream ss(path_env);
  std::string dir;
  while (std::getline(ss, dir, ':')) out.push_back(dir);
  if (!path_env.empty() && path_env.back() == ':') out.emplace_back();
  return out;
}

// The file execvp would run for `name` on the absolute entries of PATH.
std::string FindOnPath(const std::string& name, const std::vector<std::string>& dirs,
                       std::vector<std::string>& warnings) {
  for (const std::string& d : dirs) {
    if (d.empty() || d[0] != '/') continue;
    std::string full = d + "/" + name;
    struct stat st;
    if (::stat(full.c_str(), &st) != 0) {
      if (errno == ELOOP) warnings.push_back(full + " is a symlink loop: skipped");
      continue;
    }
    if (S_ISREG(st.st_mode) && ::access(full.c_str(), X_OK) == 0) return full;
  }
  return {};
}

// The first line of a script (at most 256 bytes), or empty.
std::string FirstLine(const std::string& path) {
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
  if (!fd) return {};
  char buf[256];
  ssize_t n = ::read(fd.get(), buf, sizeof buf);
  if (n <= 0) return {};
  std::string s(buf, static_cast<size_t>(n));
  return s.substr(0, s.find('\n'));
}

// The executable `file` (as found) of `what`: its toolchain root, or
// itself. Returns its canonical path (empty: none).
std::string GrantExecutable(Granter& g, const std::string& file, const std::string& what,
                            const std::string& source) {
  int err = 0;
  std::string real = g.resolve().RealOrEmpty(file, &err);
  if (real.empty()) {
    if (err == ELOOP) g.warnings.push_back(file + " (" + what + ") is a symlink loop: not granted");
    return {};
  }
  g.GrantRootOr(real, file, what, real, source);
  return real;
}

}  // namespace

std::vector<std::string> AddToolRoots(policy::Policy& p, const ToolRootsInput& in) {
  // PATH's entries and their roots share prefixes: each is resolved once.
  PathResolver resolve;
  policy::ToolRootContext ctx;
  ctx.home = CanonicalHome(in.home);
  if (ctx.home.empty() && !in.home.empty() && in.home[0] == '/') {
    ctx.home = in.home;  // unreadable: never granted all the same
  }
  if (!in.runner_tool_cache.empty() && in.runner_tool_cache[0] == '/') {
    ctx.runner_tool_cache = resolve.RealOrEmpty(in.runner_tool_cache);
  }
  for (const auto& [name, value] : in.env_dirs) {
    if (value.empty() || value[0] != '/') continue;  // relative: names nothing of its own
    if (std::string real = resolve.RealOrEmpty(value); !real.empty()) {
      ctx.env_dirs.emplace_back(name, real);
    }
  }
  Granter g(p, ctx, resolve);
  const std::vector<std::string> dirs = SplitPath(in.path_env);
  std::set<std::string> seen;
  for (const std::string& d : dirs) {
    // An empty or relative entry names the tool's cwd (the workspace):
    // nothing beyond what the workspace already gives.
    if (d.empty() || d[0] != '/') continue;
    int err = 0;
    std::string real = resolve.RealOrEmpty(d, &err);
    if (real.empty()) {
      if (err == ELOOP) g.warnings.push_back("PATH entry " + d + " is a symlink loop: not granted");
      continue;  // missing: nothing to grant, nothing to say
    }
    if (!IsDir(real)) {
      g.warnings.push_back("PATH entry " + d + " is not a directory: not granted");
      continue;
    }
    if (!seen.insert(real).second) continue;
    if (const char* why = policy::WideningRefusal(real, ctx)) {
      g.warnings.push_back("PATH entry " + d + " is " + why + ": not granted");
      continue;
    }
    g.GrantRootOr(real, d, "PATH entry " + d, real, "on PATH");
  }
  for (const auto& [var, value] : in.inputs) {
    for (const std::string& path : policy::ToolInputPaths(var, value)) {
      // A path that is not there names nothing to read (pip skips it).
      if (std::string real = resolve.RealOrEmpty(path); !real.empty()) {
        g.Grant(real, "named by $" + var, /*executable=*/false);
      }
    }
  }
  if (in.command.empty() || in.command.find('/') != std::string::npos) {
    if (in.command.empty() || in.command[0] != '/') return std::move(g.warnings);
  }
  const std::string name = in.command.substr(in.command.rfind('/') + 1);
  const std::string file =
      in.command[0] == '/' ? in.command : FindOnPath(in.command, dirs, g.warnings);
  if (file.empty()) return std::move(g.warnings);
  const std::string real = GrantExecutable(g, file, name, "the command " + name);
  if (real.empty()) return std::move(g.warnings);
  // A script: its interpreter, one level (`#!/usr/bin/env X` found on PATH).
  auto sb = policy::ParseShebang(FirstLine(real));
  if (sb) {
    std::string interp = sb->interpreter;
    if (!sb->env_program.empty()) {
      interp = sb->env_program.find('/') != std::string::npos
                   ? sb->env_program
                   : FindOnPath(sb->env_program, dirs, g.warnings);
      (void)GrantExecutable(g, sb->interpreter, name, "interpreter of " + name);
    }
    if (!interp.empty() && interp[0] == '/') {
      (void)GrantExecutable(g, interp, name, "interpreter of " + name);
    }
  }
  return std::move(g.warnings);
}

}  // namespace cordon::supervisor
