#include "supervisor/load/normalise.h"

#include <limits.h>
#include <sys/stat.h>

#include <cstdlib>
#include <cstring>

#include "supervisor/walk/protected_scan.h"

namespace cordon::supervisor {

using policy::LinkMode;
using policy::PathRule;
using policy::SensitiveDelete;

Result<std::string> RealPath(const std::string& path) {
  char buf[PATH_MAX];
  if (::realpath(path.c_str(), buf) == nullptr) return Errno("realpath", path);
  return std::string(buf);
}

Result<std::string> ResolveWorkspace(const std::string& path) {
  auto real = RealPath(path);
  if (!real) return real;
  struct stat st;
  if (::stat(real->c_str(), &st) != 0) return Errno("stat", path);
  if (!S_ISDIR(st.st_mode)) return SysError{ENOTDIR, "stat", path};
  if (*real == "/") return SysError{EINVAL, "the root directory is refused"};
  return real;
}

void NormalisePolicy(policy::Policy& p) {
  std::vector<PathRule> kept;
  for (PathRule& r : p.paths) {
    auto real = RealPath(r.path);
    if (!real) {
      p.dropped.push_back({r.path, std::strerror(real.error().err)});
      continue;
    }
    r.path = std::move(real.value());
    kept.push_back(std::move(r));
  }
  p.paths = std::move(kept);
  if (p.workspace.empty()) return;
  // When the supervisor decides every write-open, create, rename and unlink
  // it matches the patterns itself, at any depth and for files created
  // later, so the (costly, bounded) walk of the workspace is only needed
  // for the kernel carve-outs of links: kernel or sensitive.delete: allow.
  if (p.links == LinkMode::kStrict && p.sensitive_delete != SensitiveDelete::kAllow) return;
  ProtectedScan scan = FindProtectedPaths(p.workspace, p.protected_patterns,
                                          kProtectedScanEntries, p.limits.max_tree_depth);
  p.protected_paths = std::move(scan.paths);
  p.protected_scan_truncated = scan.truncated;
  if (scan.truncated) {
    // Fail closed: a match past the bound has no kernel carve-out.
    p.notes.push_back("the protected-path scan stopped at its bound (" +
                      std::to_string(kProtectedScanEntries) + " entries, " +
                      std::to_string(p.limits.max_tree_depth) +
                      " levels): write opens, deletes and renames go to the supervisor as "
                      "under the strict default, which refuses protected paths by name at any "
                      "depth; raise limits.treeDepth or narrow the workspace to relax it");
  }
}

}  // namespace cordon::supervisor
