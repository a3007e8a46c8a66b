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

// The file fd `fd` of thread group `tgid` names, and the open flags the
// tool holds it with.
struct ToolFile {
  Fd fd;
  bool copy = false;        // fd is the tool's own open file (pidfd_getfd)
  unsigned long flags = 0;  // the tool's descriptor's flags (O_ACCMODE, O_PATH, ...)
};

// A copy of the descriptor (GetToolFd) where pidfd_getfd works, else an
// O_PATH fd opened through /proc/TGID/fd/FD (a container's seccomp profile
// refuses pidfd_getfd): the same inode, not the same open file, so for calls
// that change the inode only (times, modes, owners, xattrs) or that reopen
// it. The flags are read from fdinfo together with the inode they belong to,
// which must be the one opened: a descriptor swapped in between is EAGAIN,
// never another file's flags. EBADF when it has none.
Result<ToolFile> GetToolFile(pid_t tgid, int fd);

// The open flags of the tool's descriptor `fd` (O_NONBLOCK, O_PATH, and
// O_CLOEXEC for its close-on-exec flag), from /proc/TGID/fdinfo/FD; EBADF
// when it has none.
Result<unsigned long> ToolFdFlags(pid_t tgid, int fd);

// "/proc/self/fd/N".
std::string ProcPath(int fd);

}  // namespace cordon::supervisor
