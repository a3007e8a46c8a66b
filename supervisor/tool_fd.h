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

// "/proc/self/fd/N".
std::string ProcPath(int fd);

}  // namespace cordon::supervisor
