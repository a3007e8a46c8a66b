// The launch scan: one bounded walk of the whole workspace at load that
// lists what the kernel grant must leave out:
// - the existing matches of the deny globs (policy/deny_glob.h has the
//   patterns and their matching);
// - every regular file with more than one name and every device node, FIFO
//   and socket (policy/hard_links.h decides which are refused).
//
// Unlike the protected-path scan it enters every directory, .git included,
// and it must not be cut short: an entry past the bound would stay
// readable, so a scan that stops there says so and the run is refused.
//
// A scan may start from what an earlier one learnt (policy/scan_cache.h):
// a directory whose dev, inode, mtime and ctime match its cached record is
// not listed; only its flagged entries are stat'ed again and its cached
// subdirectories walked, by index (a leaf with nothing flagged on a stat
// through its parent, not opened). supervisor/walk/scan_cache_file.h keeps
// the file.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "policy/hard_links.h"
#include "policy/scan_cache.h"

namespace cordon::supervisor {

struct LaunchScan {
  std::vector<std::string> matches;           // absolute, existing, no symlink on the way; sorted
  std::vector<policy::ScannedEntry> entries;  // linked regular files and special files; sorted
  std::string problem;                        // why the scan is incomplete; empty when it is not
  // Whether what the next scan may start from differs from the cache this
  // one started from, and then (complete only without a problem) that:
  // every directory walked, in the order walked.
  bool changed = true;
  policy::ScanCache next;
  // How many directories were listed and how many taken from the cache
  // (tests, and --log-level debug).
  std::size_t dirs_listed = 0, dirs_reused = 0;
};

struct ScanFrom {
  const policy::ScanCache* cache = nullptr;  // none: list every directory
  std::int64_t start_s = 0;                  // the scan's start (CLOCK_REALTIME seconds); 0: now
};

// Walks `workspace` (absolute realpath) without following links, at most
// `max_entries` entries and `max_depth` levels. A directory that matches a
// glob is listed, not entered (its match denies what lies beneath). A
// directory that cannot be opened or listed is a problem too: what is in it
// is not known. A regular match with more than one name has its other names
// in the workspace listed with the matches (policy::OtherNamesOfMatches).
LaunchScan ScanWorkspace(const std::string& workspace, const std::vector<std::string>& globs,
                         std::size_t max_entries, std::size_t max_depth, ScanFrom from = {});

}  // namespace cordon::supervisor
