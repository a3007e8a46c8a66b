#include "supervisor/tool_fd.h"

#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

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

Result<Fd> GetToolFile(pid_t tgid, int fd, bool* opath) {
  auto copy = GetToolFd(tgid, fd);
  if (copy) *opath = (::fcntl(copy->get(), F_GETFL) & O_PATH) != 0;
  return copy;
}

int ToolFdAlias(const std::string& p) {
  if (p == "/dev/stdin") return 0;
  if (p == "/dev/stdout") return 1;
  if (p == "/dev/stderr") return 2;
  for (const char* prefix : {"/dev/fd/", "/proc/self/fd/"}) {
    size_t n = std::strlen(prefix);
    if (p.compare(0, n, prefix) == 0 && p.size() > n &&
        p.find_first_not_of("0123456789", n) == std::string::npos) {
      return std::atoi(p.c_str() + n);
    }
  }
  return -1;
}

std::string ProcPath(int fd) { return "/proc/self/fd/" + std::to_string(fd); }

}  // namespace cordon::supervisor
