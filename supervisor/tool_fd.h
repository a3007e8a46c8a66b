// The tool's file descriptors as the supervisor sees them: a copy of one
// (pidfd_getfd: the same open file, so the same socket or file offset) and
// the /proc/self/fd path of one of the supervisor's own, through which
// calls that take only a path (bind, connect, setxattr) reach an inode the
// supervisor has already opened and verified.
#pragma once

#include <sys/types.h>

#include <string>

#include "base/fd.h"
#include "base/result.h"

namespace cordon::supervisor {

// A copy of fd `fd` of thread group `tgid`; EBADF when it has none.
Result<Fd> GetToolFd(pid_t tgid, int fd);

// The file fd `fd` of thread group `tgid` names: a copy of the descriptor
// (GetToolFd) where pidfd_getfd works, else an O_PATH fd opened through
// /proc/TGID/fd/FD (a container's seccomp profile refuses pidfd_getfd):
// the same inode, not the same open file, so for calls that change the
// inode only (times, modes, owners, xattrs). EBADF when it has none.
// *opath says whether the tool's descriptor is an O_PATH one.
Result<Fd> GetToolFile(pid_t tgid, int fd, bool* opath);

// The open flags of the tool's descriptor `fd` (O_NONBLOCK, O_PATH, and
// O_CLOEXEC for its close-on-exec flag), from /proc/TGID/fdinfo/FD; EBADF
// when it has none.
Result<unsigned long> ToolFdFlags(pid_t tgid, int fd);

// "/proc/self/fd/N".
std::string ProcPath(int fd);

}  // namespace cordon::supervisor
