// Paths as the tool names them, resolved by the supervisor: relative to the
// tool's cwd or dirfd, "/proc/self" meaning the tool, and canonical beneath
// a set of held roots.
#pragma once

#include <sys/types.h>

#include <string>

#include "base/result.h"
#include "supervisor/write_roots.h"

namespace cordon::supervisor {

// `path` as the tool names it, made absolute: a relative (or empty) one
// starts from the tool's cwd (AT_FDCWD) or dirfd as /proc/TID names it, a
// physical path, and its leading ".." climb it (policy::NormalizePath); a
// ".." after a name is refused (EACCES).
Result<std::string> Absolute(pid_t tid, int dirfd, const std::string& path);

// Whether the tool's own lstat of `abs` would find an entry: looked up with
// the supervisor's effective capabilities lowered (ToolPermissions), so a
// directory the tool may not search hides what it holds. False for /proc,
// whose "self" would be the supervisor's.
bool ToolSeesEntry(const std::string& abs);

// The supervisor resolves "self" for the tool, not for itself. The thread
// group is read only for such a path (ReadToolCreds is not cheap).
std::string ForTool(const std::string& abs, pid_t tid);

// realpath, then Locate: the canonical path has no symlink left, so the
// open beneath the root with RESOLVE_NO_SYMLINKS is exact, and a symlink
// swapped in meanwhile makes it fail (closed), never escape.
Result<Located> Canonical(const WriteRoots& roots, const std::string& abs);

}  // namespace cordon::supervisor
