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
  if (copy || copy.error().err == EBADF || copy.error().err == ESRCH) return copy;
  // pidfd_getfd refused (Docker's default seccomp profile allows it only
  // with CAP_SYS_PTRACE; kernels before 5.6 lack it): the file through the
  // tool's /proc/PID/fd link, which the kernel checks as it checks a
  // ptrace read (the supervisor's own capabilities for an undumpable tool).
  // The pidfd tells a recycled PID: the thread group must still be alive
  // after the open, so the link was the tool's.
  Fd pidfd(static_cast<int>(::syscall(uapi::kNrPidfdOpen, tgid, 0)));
  if (!pidfd) return Errno("pidfd_open");
  const std::string link = "/proc/" + std::to_string(tgid) + "/fd/" + std::to_string(fd);
  Fd file(RetryAsSupervisor([&] { return ::open(link.c_str(), O_PATH | O_CLOEXEC); }));
  if (!file) return SysError{errno == ENOENT ? EBADF : errno, "open /proc/PID/fd"};
  auto flags = ToolFdFlags(tgid, fd);
  if (!flags) return flags.error();
  *opath = (flags.value() & O_PATH) != 0;
  if (::syscall(uapi::kNrPidfdSendSignal, pidfd.get(), 0, nullptr, 0) != 0) {
    return SysError{ESRCH, "the tool is gone"};
  }
  return file;
}

Result<unsigned long> ToolFdFlags(pid_t tgid, int fd) {
  // Octal, on fdinfo's "flags:" line.
  const std::string info = "/proc/" + std::to_string(tgid) + "/fdinfo/" + std::to_string(fd);
  Fd fi(RetryAsSupervisor([&] { return ::open(info.c_str(), O_RDONLY | O_CLOEXEC); }));
  char buf[512] = {};
  if (!fi || ::read(fi.get(), buf, sizeof buf - 1) <= 0) return SysError{EBADF, "fdinfo"};
  const char* flags = std::strstr(buf, "flags:");
  if (flags == nullptr) return SysError{EBADF, "fdinfo"};
  return std::strtoul(flags + 6, nullptr, 8);
}

std::string ProcPath(int fd) { return "/proc/self/fd/" + std::to_string(fd); }

}  // namespace cordon::supervisor
