#include "supervisor/probe.h"

#include <gnu/libc-version.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

#include "supervisor/caps.h"
#include "supervisor/landlock.h"
#include "supervisor/seccomp_filter.h"
#include "supervisor/uapi.h"

namespace cordon::supervisor {
namespace {

using namespace cordon::uapi;

// Runs fn in a forked child and returns its exit code (or -1).
template <class Fn>
int InChild(Fn fn) {
  pid_t pid = ::fork();
  if (pid < 0) return -1;
  if (pid == 0) _exit(fn());
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// A filter that notifies getppid; bits of the exit code say what worked.
int ProbeNotify() {
  SeccompBuilder b;
  b.Notify(SCMP_SYS(getppid));
  auto prog = b.Build();
  if (!prog) return 0;
  ::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
  int fd = InstallFilter(*prog);
  if (fd <= 0) return 1;  // filters work, notification does not
  int code = 3;
  // ADDFD on a stale id: ENOENT means the ioctl exists, EINVAL/ENOTTY not.
  SeccompNotifAddfd add{12345, 0, 0, 0, 0};
  if (::ioctl(fd, kIoctlNotifAddfd, &add) < 0 && errno == ENOENT) code |= 4;
  add.flags = kAddfdFlagSend;
  if (::ioctl(fd, kIoctlNotifAddfd, &add) < 0 && errno == ENOENT) code |= 8;
  if (::ioctl(fd, kIoctlNotifSetFlags, kUserNotifFdSyncWakeUp) == 0) code |= 16;
  return code;
}

}  // namespace

const char* RungName(Rung r) {
  switch (r) {
    case Rung::kLandlockNotify: return "landlock+notify";
    case Rung::kNotifyAll: return "notify-all";
    case Rung::kPreloadOnly: return "preload-only (advisory)";
  }
  return "?";
}

KernelProbe ProbeKernel() {
  KernelProbe k;
  utsname u{};
  if (::uname(&u) == 0) k.kernel = std::string(u.release);
  k.landlock_abi = ProbeLandlockAbi();
  int n = InChild(ProbeNotify);
  k.seccomp_filter = n > 0 && (n & 1);
  k.user_notif = n > 0 && (n & 2);
  k.addfd = n > 0 && (n & 4);
  k.addfd_send = n > 0 && (n & 8);
  k.sync_wakeup = n > 0 && (n & 16);
  long ring = ::syscall(SYS_io_uring_setup, 0, nullptr);
  k.io_uring = !(ring < 0 && errno == ENOSYS);
  k.user_namespaces = InChild([] { return ::unshare(CLONE_NEWUSER) == 0 ? 0 : 1; }) == 0;
  k.glibc = gnu_get_libc_version() != nullptr;
  {
    Fd self(static_cast<int>(::syscall(uapi::kNrPidfdOpen, ::getpid(), 0)));
    Fd copy(self ? static_cast<int>(::syscall(uapi::kNrPidfdGetfd, self.get(), 0, 0)) : -1);
    k.pidfd_getfd = copy.valid();
  }
  k.serves_undumpable = Permits(CAP_SYS_PTRACE);
  return k;
}

Rung ChooseRung(const KernelProbe& k, bool force_notify_all) {
  bool notify = k.user_notif && k.addfd && k.addfd_send;
  if (notify && k.landlock_abi > 0 && !force_notify_all) return Rung::kLandlockNotify;
  if (notify) return Rung::kNotifyAll;
  return Rung::kPreloadOnly;
}

}  // namespace cordon::supervisor
