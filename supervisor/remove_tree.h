// Removes a directory tree without following symbolic links and without
// crossing into another filesystem: every step is relative to a directory
// fd opened O_NOFOLLOW, and a subdirectory on another st_dev is left alone.
// Meant for trees no process writes any more (the private TMPDIR after the
// tool and its descendants are dead, a retired workspace).
#pragma once

#include <string>

#include "policy/result.h"

namespace cordon::supervisor {

struct RemoveStats {
  size_t removed = 0;
  size_t skipped_mounts = 0;  // subdirectories on another filesystem, kept
};

Result<RemoveStats> RemoveTree(const std::string& path);

}  // namespace cordon::supervisor
