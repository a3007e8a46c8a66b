#include "supervisor/walk/scan_cache_file.h"

#include <limits.h>
#include <stdlib.h>

#include <optional>
#include <utility>

#include "policy/scan_cache.h"
#include "supervisor/owned_dir.h"
#include "supervisor/workspace_store.h"

namespace cordon::supervisor {
namespace {

// Past this a cache is not read (a tree of millions of directories).
constexpr std::size_t kMaxCacheBytes = 256u << 20;

}  // namespace

std::string ScanCacheDirOrEmpty() {
  const std::string state = DefaultStateHome();
  if (state.empty() || state[0] != '/' || !StateHomeUsable()) return "";
  return policy::ScanCacheDir(state);
}

CachedLaunchScan ScanWorkspaceCached(const std::string& workspace,
                                     const std::vector<std::string>& globs,
                                     std::size_t max_entries, std::size_t max_depth,
                                     const std::string& cache_dir) {
  CachedLaunchScan out;
  if (cache_dir.empty()) {
    out.scan = ScanWorkspace(workspace, globs, max_entries, max_depth);
    out.cache_note = "no state home";
    return out;
  }
  Result<OwnedDir> dir = OpenOwnedDirPath(cache_dir, "launch scan cache");
  if (!dir) {
    out.scan = ScanWorkspace(workspace, globs, max_entries, max_depth);
    out.cache_note = Describe(dir.error());
    return out;
  }
  const std::string name = policy::ScanCacheName(workspace);
  std::optional<policy::ScanCache> cache;
  if (Result<std::string> text = ReadOwnedFileAt(dir->fd.get(), name.c_str(), kMaxCacheBytes)) {
    std::string why;
    cache = policy::ParseScanCache(text.value(), &why);
    if (!cache) out.cache_note = name + ": " + why + ": ignored";
  } else if (text.error().err != ENOENT) {
    out.cache_note = Describe(text.error()) + ": ignored";
  }
  ScanFrom from;
  from.cache = cache ? &*cache : nullptr;
  out.scan = ScanWorkspace(workspace, globs, max_entries, max_depth, from);
  if (!out.scan.problem.empty() || !out.scan.changed) return out;
  // Not fsync'd: a cache lost in a crash is a full walk, never a wrong one.
  if (Status s = ReplaceFileAt(dir->fd.get(), name, policy::ScanCacheBytes(out.scan.next),
                               /*sync=*/false);
      !s) {
    out.cache_note = "not kept: " + Describe(s.error());
  }
  return out;
}

void DenyScanCaches(policy::Policy& p) {
  const std::string dir = ScanCacheDirOrEmpty();
  char real[PATH_MAX];
  if (dir.empty() || ::realpath(dir.c_str(), real) == nullptr) return;
  p.paths.push_back(policy::PathRule::DeniedUnlisted(real, "the launch scan caches"));
}

}  // namespace cordon::supervisor
