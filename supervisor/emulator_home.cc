// A tool's path through the private HOME's own links (tool_env.h). The
// private home reaches what the policy grants in the caller's home through
// symlinks the run made (~/.cargo -> /home/u/.cargo). The kernel follows
// them; the emulator's lookups beneath a write root follow none, so a write
// through one (cargo's lock in ~/.cargo) was refused as "symlink on the
// way", with no grant that could get past it. Read as the kernel reads it,
// the path names the granted file, which the policy then decides.
#include <fcntl.h>
#include <limits.h>
#include <unistd.h>

#include <string>

#include "policy/policy.h"
#include "supervisor/emulator.h"
#include "supervisor/tool_path.h"

namespace cordon::supervisor {
namespace {

// True while `l.link` is still the symlink the run made, reached with no
// symlink on the way: a tool that replaced it (a directory of its own, a
// link elsewhere) has its own entry looked up, as before.
bool StillTheRunsLink(const WriteRoots& roots, const HomeLink& l) {
  auto loc = roots.Locate(l.link, Change::kEntry);
  if (!loc || loc->name.empty()) return false;
  auto parent = WriteRoots::OpenParent(loc.value());
  if (!parent) return false;
  char buf[PATH_MAX];
  const ssize_t n = ::readlinkat(parent->get(), loc->name.c_str(), buf, sizeof buf);
  return n > 0 && static_cast<size_t>(n) < sizeof buf &&
         l.target.compare(0, std::string::npos, buf, static_cast<size_t>(n)) == 0;
}

}  // namespace

Result<std::string> Emulator::ToolAbsolute(pid_t tid, int dirfd, const std::string& path) const {
  auto abs = Absolute(tid, dirfd, path);
  if (!abs || opts_.home_links.empty()) return abs;
  std::string norm;
  if (!NormaliseNoDotDot(abs.value(), norm)) return abs;  // refused as it is, later
  for (const HomeLink& l : opts_.home_links) {
    // Strictly beneath: the link itself is no path through it.
    if (norm.size() <= l.link.size() || !policy::IsWithin(norm, l.link)) continue;
    if (!StillTheRunsLink(rules().roots, l)) return abs;
    return l.target + norm.substr(l.link.size());
  }
  return abs;
}

}  // namespace cordon::supervisor
