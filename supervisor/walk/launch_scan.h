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
// No cache is kept between runs: a hard link made to a workspace file from
// outside changes that file's link count and ctime, not its directory's
// mtime, so only a stat of every regular file sees it (docs/policy.md,
// "Hard links and special files").
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "policy/hard_links.h"

namespace cordon::supervisor {

struct LaunchScan {
  std::vector<std::string> matches;           // absolute, existing, no symlink on the way; sorted
  std::vector<policy::ScannedEntry> entries;  // linked regular files and special files
  std::string problem;                        // why the scan is incomplete; empty when it is not
};

// Walks `workspace` (absolute realpath) without following links, at most
// `max_entries` entries and `max_depth` levels. A directory that matches a
// glob is listed, not entered (its match denies what lies beneath). A
// directory that cannot be opened or listed is a problem too: what is in it
// is not known. A regular match with more than one name has its other names
// in the workspace listed with the matches (policy::OtherNamesOfMatches).
LaunchScan ScanWorkspace(const std::string& workspace, const std::vector<std::string>& globs,
                         std::size_t max_entries, std::size_t max_depth);

}  // namespace cordon::supervisor
