// The deny-glob scan (policy/deny_glob.h has the patterns and their
// matching): a bounded walk of the whole workspace at load that lists the
// existing matches, which the kernel grant then leaves out.
//
// Unlike the protected-path scan it enters every directory, .git included,
// and it must not be cut short: a match past the bound would stay
// readable, so a scan that stops there says so and the run is refused.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace cordon::supervisor {

struct GlobScan {
  std::vector<std::string> matches;  // absolute, existing, no symlink on the way; sorted
  std::string problem;               // why the scan is incomplete; empty when it is not
};

// Walks `workspace` (absolute realpath) without following links, at most
// `max_entries` entries and `max_depth` levels. A directory that matches is
// listed, not entered (its match denies what lies beneath). A directory
// that cannot be opened or listed is a problem too: what is in it is not
// known. A regular match with more than one name has its other names in the
// workspace listed too (a second pass, made only then): they read the same
// file.
GlobScan FindDenyGlobMatches(const std::string& workspace, const std::vector<std::string>& globs,
                             std::size_t max_entries, std::size_t max_depth);

}  // namespace cordon::supervisor
