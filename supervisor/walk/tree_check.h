// The bounded tree check that runs before a recursive search (seed 002):
// walk the tree by directory fds (getdents64, openat with O_NOFOLLOW,
// fstatat where the entry type is not enough), never following a link, and
// refuse it whole when it holds a symbolic link, a
// hard-linked regular file (nlink > 1), a special file (device, fifo,
// socket), more than `max_entries` entries or anything deeper than
// `max_depth` levels. The walk stops at the first problem: an oversized tree
// is refused, never half-validated. It does not remove the race with a
// hostile concurrent writer outside the sandbox (see DESIGN.md); inside the
// sandbox Landlock still bounds what the search can reach.
// A tree of more than a few directories is walked by two threads (the
// caller's and one more), which take subtrees from a shared queue of open
// directory fds; the limits and the verdict are the same as one thread's.
// Not async-signal-safe (allocates, may start a thread).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace cordon::supervisor {

struct TreeLimits {
  std::size_t max_entries = 10000;  // entries below the roots, all roots together
  std::size_t max_depth = 64;       // an entry's depth = path components below its root
};

struct TreeVerdict {
  bool ok = false;
  std::size_t entries = 0;  // entries seen (all of them when ok)
  std::string path;         // the offending entry, relative to the base (when !ok)
  std::string reason;       // one line naming the path and the limit or kind (when !ok)
  std::size_t walkers = 1;  // threads that walked the tree (for logs and tests)
};

// Checks each root (a relative path from `base_fd`, "." for the base
// itself, already admitted: no ".." segment, not absolute). Every component
// of a root is opened with O_NOFOLLOW, so a link on the way is refused too.
// A root may be a regular file (one entry) or a directory.
TreeVerdict CheckTrees(int base_fd, const std::vector<std::string>& roots,
                       const TreeLimits& limits);

}  // namespace cordon::supervisor
