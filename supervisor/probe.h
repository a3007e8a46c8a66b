// What the running kernel offers cordon, probed without side effects on the
// caller, and the enforcement rung that follows (DESIGN.md, "walks down an
// explicit ladder and says which rung it stands on").
#pragma once

#include <string>

namespace cordon::supervisor {

enum class Rung {
  kLandlockNotify,  // Landlock + seccomp user notification: full confinement
  kNotifyAll,       // no Landlock: every path syscall notified and emulated
  kPreloadOnly,     // advisory only; needs --allow-degraded
};

const char* RungName(Rung r);

struct KernelProbe {
  int landlock_abi = 0;
  bool seccomp_filter = false;
  bool user_notif = false;
  bool addfd = false;          // SECCOMP_IOCTL_NOTIF_ADDFD (5.9+)
  bool addfd_send = false;     // SECCOMP_ADDFD_FLAG_SEND (5.14+)
  bool sync_wakeup = false;    // SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP (6.6+)
  bool io_uring = false;       // present on the host (cordon refuses it to tools)
  bool user_namespaces = false;
  bool glibc = false;          // the preload can apply to glibc tools
  // pidfd_getfd(2) works here (5.6+, and not refused by a container's
  // seccomp profile: Docker's default allows it only with CAP_SYS_PTRACE).
  // Without it the supervisor reaches a tool's files through
  // /proc/PID/fd, and cannot take its sockets or inotify instances.
  bool pidfd_getfd = false;
  // CAP_SYS_PTRACE is permitted to cordon: it can still serve a tool that
  // made itself undumpable (emulator_process.cc), else that prctl is refused.
  bool serves_undumpable = false;
  std::string kernel;
};

// Forks short-lived children to try seccomp for real (a filter is forever).
KernelProbe ProbeKernel();

// The rung this machine supports; `force_notify_all` is the test switch that
// pretends Landlock is missing.
Rung ChooseRung(const KernelProbe& k, bool force_notify_all);

}  // namespace cordon::supervisor
