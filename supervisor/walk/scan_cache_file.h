// The launch scan's cache on disk (policy/scan_cache.h has the record and
// its text): one file a workspace,
//
//   ${XDG_STATE_HOME:-~/.local/state}/cordon/scans/<SHA-256 of its path>
//
// in a directory of this user's alone (0700, no link), written whole or not
// at all (a temporary name, then rename; mode 0600), never in the
// workspace. The tool is denied the directory (NormalisePolicy). A file
// that is missing, not this user's, cut, edited or of another workspace
// or other deny globs is no cache: the scan then walks the whole tree.
// Not thread-safe.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "policy/policy.h"
#include "supervisor/walk/launch_scan.h"

namespace cordon::supervisor {

// The directory the caches live in, or "" where there is no usable state
// home (HOME=/nonexistent): then nothing is read or kept.
std::string ScanCacheDirOrEmpty();

struct CachedLaunchScan {
  LaunchScan scan;
  std::string cache_note;  // why no cache was used or kept, for the debug log; "" when it was
};

// ScanWorkspace, starting from the workspace's cache in `cache_dir` (""
// for none), and the cache rewritten when the scan is complete and saw a
// change.
CachedLaunchScan ScanWorkspaceCached(const std::string& workspace,
                                     const std::vector<std::string>& globs,
                                     std::size_t max_entries, std::size_t max_depth,
                                     const std::string& cache_dir);

// Denies the tool the caches' directory, unlisted, when it exists: a tool
// that could write a cache could hide from a later run a link it made.
void DenyScanCaches(policy::Policy& p);

}  // namespace cordon::supervisor
