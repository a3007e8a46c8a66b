#include "supervisor/load/normalise.h"

#include <limits.h>
#include <sys/stat.h>

#include <cstdlib>
#include <cstring>

#include <spdlog/spdlog.h>

#include "supervisor/walk/scan_cache_file.h"
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

std::string RealPathOrEmpty(const std::string& path, int* err) {
  auto real = RealPath(path);
  if (real) return std::move(real.value());
  if (err != nullptr) *err = real.error().err;
  return {};
}

std::string CanonicalHome(const std::string& home) {
  return home.empty() || home[0] != '/' ? std::string() : RealPathOrEmpty(home);
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

Result<std::string> RealPathOfMissing(const std::string& path) {
  if (path.empty() || path[0] != '/') return SysError{EINVAL, "not an absolute path", path};
  std::string rest;
  std::string cur = path;
  while (cur.size() > 1) {
    size_t slash = cur.rfind('/');
    rest = cur.substr(slash) + rest;
    cur = slash == 0 ? "/" : cur.substr(0, slash);
    auto real = RealPath(cur);
    if (real) return (real.value() == "/" ? "" : real.value()) + rest;
    if (real.error().err != ENOENT) return real.error();
  }
  return SysError{ENOENT, "realpath", path};
}

namespace {

bool IsDirectory(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

}  // namespace

void NormalisePolicy(policy::Policy& p) {
  std::vector<PathRule> kept;
  for (PathRule& r : p.paths) {
    auto real = RealPath(r.path);
    if (!real && real.error().err == ENOENT && r.access != policy::Access::kReadOnly) {
      // A denial fails closed: what the run creates there stays denied (the
      // supervisor refuses to create, rename or link it into being). A
      // read-write file whose directory exists may be created by the run
      // (a CI step's output file); nothing beside it.
      auto missing = RealPathOfMissing(r.path);
      if (missing) {
        const std::string& m = missing.value();
        const std::string dir = m.substr(0, m.rfind('/'));
        if (r.access == policy::Access::kDenied) {
          p.notes.push_back("'" + r.path + "' does not exist yet: it stays denied if it comes "
                            "into being during the run");
          r.path = m;
          kept.push_back(std::move(r));
          continue;
        }
        if (IsDirectory(dir.empty() ? "/" : dir)) {
          p.notes.push_back("'" + r.path + "' does not exist yet: the run may create it, as a "
                            "file, and write it; nothing else in its directory");
          r.path = m;
          kept.push_back(std::move(r));
          continue;
        }
      }
    }
    if (!real) {
      p.dropped.push_back({r.path, std::strerror(real.error().err)});
      continue;
    }
    r.path = std::move(real.value());
    kept.push_back(std::move(r));
  }
  p.paths = std::move(kept);
  if (p.workspace.empty()) return;
  // One walk that must see the whole workspace (launch_scan.h): every
  // existing match of a deny glob, and the hard-linked and special files,
  // out of the kernel grant. It lists only the directories that changed
  // since the last run of this workspace (scan_cache_file.h).
  CachedLaunchScan cached = ScanWorkspaceCached(p.workspace, p.deny_globs,
                                                p.limits.max_scan_entries,
                                                p.limits.max_tree_depth, ScanCacheDirOrEmpty());
  LaunchScan& scan = cached.scan;
  spdlog::debug("launch scan: {} directories listed, {} unchanged since the last run{}{}",
                scan.dirs_listed, scan.dirs_reused, cached.cache_note.empty() ? "" : "; cache: ",
                cached.cache_note);
  p.deny_glob_matches = std::move(scan.matches);
  p.refused_entries = policy::RefusedEntries(p.hard_links, scan.entries);
  if (!scan.problem.empty()) {
    p.scan_problems.push_back(
        "the launch scan of the workspace is incomplete: " + scan.problem +
        " (hard-linked and special files" + (p.deny_globs.empty() ? "" : " and deny globs' matches") +
        " are looked for in the whole tree or the run is refused)");
  }
  // When the supervisor decides every write-open, create, rename and unlink
  // it matches the patterns itself, at any depth and for files created
  // later, so the (costly, bounded) walk of the workspace is only needed
  // for the kernel carve-outs of links: kernel or sensitive.delete: allow.
  if (p.links == LinkMode::kStrict && p.sensitive_delete != SensitiveDelete::kAllow) return;
  ProtectedScan prot = FindProtectedPaths(p.workspace, p.protected_patterns,
                                          p.limits.max_scan_entries, p.limits.max_tree_depth);
  p.protected_paths = std::move(prot.paths);
  p.protected_scan_truncated = prot.truncated;
  if (prot.truncated) {
    // Fail closed: a match past the bound has no kernel carve-out.
    p.notes.push_back("the protected-path scan stopped at its bound (" +
                      std::to_string(p.limits.max_scan_entries) + " entries, " +
                      std::to_string(p.limits.max_tree_depth) +
                      " levels): write opens, deletes and renames go to the supervisor as "
                      "under the strict default, which refuses protected paths by name at any "
                      "depth; raise limits.scanEntries or limits.treeDepth, or narrow the workspace, to relax it");
  }
}

}  // namespace cordon::supervisor
