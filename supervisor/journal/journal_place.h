// Where the journals of a workspace's recoverable runs live (issue 26). A
// journaled file is moved, not copied, so the journal must be on the
// workspace's own mount (rename(2) does not cross mounts, even of one
// filesystem), outside the workspace, and out of the tool's reach:
//
//   1. ${XDG_STATE_HOME:-~/.local/state}/cordon/journal, when that is on
//      the workspace's mount and not inside the workspace;
//   2. else .cordon-journal-<uid> at the top of the workspace's mount, when
//      that top is not the workspace itself.
//
// Each is a real directory owned by us, mode 0700 (owned_dir.h); a run's
// journal is runs/<run id>/ in it. The tool is denied the whole place
// (the launch adds it to the run's denied paths). Not thread-safe.
#pragma once

#include <string>
#include <vector>

#include "base/fd.h"
#include "base/result.h"

namespace cordon::supervisor {

struct JournalPlace {
  std::string root;  // realpath of the journal directory
  Fd runs;           // root/runs, O_RDONLY | O_DIRECTORY
};

// The candidates for `workspace` (a realpath), in order of preference,
// whether they exist or not.
std::vector<std::string> JournalCandidates(const std::string& workspace);

// The first candidate that can hold journals for `workspace`, created if
// missing. An error says why none could (for the launch's one line).
Result<JournalPlace> OpenJournalPlace(const std::string& workspace);

// The candidates that exist and pass the ownership checks, to read from.
std::vector<JournalPlace> ExistingJournalPlaces(const std::string& workspace);

// Whether the filesystem at `path` shares extents (btrfs, XFS, bcachefs):
// a kept copy of a file written in place is then a reflink, O(1).
bool HasReflinks(const std::string& path);

// The mount id of `fd` (statx STATX_MNT_ID), 0 when the kernel gives none.
uint64_t MountId(int fd);

}  // namespace cordon::supervisor
