// Filesystem admission for writes and deletes, on what the supervisor
// already holds: a directory fd plus one entry name (fstatat with
// AT_SYMLINK_NOFOLLOW), or an open fd (fstat). Checking the object through
// the handle it will act on, never a path re-resolved later, leaves no
// window for a swap between the check and the act (seed 002: "Symbolic
// links, hard-linked files, special files ... are rejected").
//
//   - a symbolic link is refused (writing through it would act on its
//     target; deleting it is refused too, since LinkMode::kStrict treats
//     links as foreign objects in the workspace);
//   - a regular file with more than one link is refused: another name,
//     possibly outside the workspace, shares the inode, so a write there
//     lands outside and a delete is not the delete of "the" file;
//   - device nodes, FIFOs and sockets are refused always.
//
// LinkMode::kKernel skips the first two (the kernel's Landlock rules are
// then the only wall), never the third. Directories pass: what may happen
// to them is the caller's decision. Async-signal-safe (fstat/fstatat only).
#pragma once

#include <sys/stat.h>

#include "policy/policy.h"

namespace cordon::supervisor {

using policy::LinkMode;

enum class FsOp { kWrite, kDelete };

struct FsAdmission {
  int err = 0;              // 0: admitted; else the errno to answer with
  const char* reason = "";  // static, for the one-line refusal
  bool exists = false;      // false: a write would create the entry
  struct stat st = {};      // valid when exists
};

// `name` must be one path component (no '/', not "." or "..").
FsAdmission CheckEntry(int dirfd, const char* name, FsOp op, LinkMode mode);

// The same checks on an fd already open on the object (O_PATH|O_NOFOLLOW
// opens of a link show it as a link).
FsAdmission CheckOpenFd(int fd, FsOp op, LinkMode mode);

}  // namespace cordon::supervisor
