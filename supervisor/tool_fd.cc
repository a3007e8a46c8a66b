#include "supervisor/tool_fd.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

#include "supervisor/caps.h"
#include "supervisor/uapi.h"

namespace cordon::supervisor {

Result<Fd> GetToolFd(pid_t tgid, int fd) {
  Fd pidfd(static_cast<int>(::syscall(uapi::kNrPidfdOpen, tgid, 0)));
  if (!pidfd) return Errno("pidfd_open");
  Fd ours(static_cast<int>(
      RetryAsSupervisor([&] { return ::syscall(uapi::kNrPidfdGetfd, pidfd.get(), fd, 0); })));
  if (!ours) return SysError{errno == EBADF ? EBADF : errno, "pidfd_getfd"};
  return ours;
}

std::string ProcPath(int fd) { return "/proc/self/fd/" + std::to_string(fd); }

}  // namespace cordon::supervisor
