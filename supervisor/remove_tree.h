// Removes a directory tree without following symbolic links and without
// crossing into another filesystem: every step is relative to a directory
// fd opened O_NOFOLLOW, and a mount point inside the tree (another st_dev,
// or a bind mount: STATX_ATTR_MOUNT_ROOT) is left alone with what it holds.
// Meant for trees no process writes any more (the private TMPDIR after the
// tool and its descendants are dead, a retired workspace).
#pragma once

#include <string>

#include "base/result.h"

namespace cordon::supervisor {

struct RemoveStats {
  size_t removed = 0;
  size_t skipped_mounts = 0;  // mount points inside the tree, kept
};

Result<RemoveStats> RemoveTree(const std::string& path);

}  // namespace cordon::supervisor
