// The protected-path scan (policy/protected_paths.h has the patterns and
// their matching): a bounded walk of the workspace at load that lists the
// existing paths the kernel layer carves out of a read-write workspace.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace cordon::supervisor {

struct ProtectedScan {
  std::vector<std::string> paths;  // absolute, existing, no symlink on the way
  bool truncated = false;          // stopped at the entry or depth bound
  std::size_t walkers = 1;         // 2 when a second thread walked part of a big workspace
};

// Walks `workspace` (absolute realpath) without following links, at most
// `max_entries` entries and `max_depth` levels, and lists every existing path
// a pattern matches. A match reached through a symlink is skipped: Landlock
// would follow it and grant its target.
ProtectedScan FindProtectedPaths(const std::string& workspace,
                                 const std::vector<std::string>& patterns,
                                 std::size_t max_entries, std::size_t max_depth);

}  // namespace cordon::supervisor
