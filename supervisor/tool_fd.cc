#include "supervisor/tool_fd.h"

#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <sys/stat.h>

#include <cerrno>
#include <cstdint>
#include <optional>
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

namespace {

// What fdinfo says of a descriptor: its flags ("flags:", octal) and the
// mount and inode of its file ("mnt_id:", "ino:").
struct FdInfo {
  unsigned long flags = 0;
  uint64_t mnt_id = 0;
  uint64_t ino = 0;
};

Result<FdInfo> ReadFdInfo(pid_t tgid, int fd) {
  const std::string info = "/proc/" + std::to_string(tgid) + "/fdinfo/" + std::to_string(fd);
  Fd fi(RetryAsSupervisor([&] { return ::open(info.c_str(), O_RDONLY | O_CLOEXEC); }));
  char buf[512] = {};
  if (!fi || ::read(fi.get(), buf, sizeof buf - 1) <= 0) return SysError{EBADF, "fdinfo"};
  auto field = [&](const char* name, int base) -> std::optional<uint64_t> {
    const char* at = std::strstr(buf, name);
    if (at == nullptr) return std::nullopt;
    return std::strtoull(at + std::strlen(name), nullptr, base);
  };
  auto flags = field("flags:", 8);
  auto mnt = field("mnt_id:", 10);
  auto ino = field("ino:", 10);
  if (!flags || !mnt || !ino) return SysError{EBADF, "fdinfo"};
  return FdInfo{*flags, *mnt, *ino};
}

}  // namespace

Result<ToolFile> GetToolFile(pid_t tgid, int fd) {
  auto copy = GetToolFd(tgid, fd);
  if (copy) {
    const int flags = ::fcntl(copy->get(), F_GETFL);
    return ToolFile{std::move(copy.value()), true, static_cast<unsigned long>(flags)};
  }
  if (copy.error().err == EBADF || copy.error().err == ESRCH) return copy.error();
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
  auto info = ReadFdInfo(tgid, fd);
  if (!info) return info.error();
  struct statx sx = {};
  if (::statx(file.get(), "", AT_EMPTY_PATH, STATX_INO | STATX_MNT_ID, &sx) != 0 ||
      !(sx.stx_mask & STATX_MNT_ID) || sx.stx_ino != info->ino || sx.stx_mnt_id != info->mnt_id) {
    return SysError{EAGAIN, "the descriptor changed while it was read"};
  }
  if (::syscall(uapi::kNrPidfdSendSignal, pidfd.get(), 0, nullptr, 0) != 0) {
    return SysError{ESRCH, "the tool is gone"};
  }
  return ToolFile{std::move(file), false, info->flags};
}

Result<unsigned long> ToolFdFlags(pid_t tgid, int fd) {
  auto info = ReadFdInfo(tgid, fd);
  if (!info) return info.error();
  return info->flags;
}

std::string ProcPath(int fd) { return "/proc/self/fd/" + std::to_string(fd); }

}  // namespace cordon::supervisor
