// The calls that act on another process: signals where Landlock has no
// signal scope, and on every rung the priority, scheduling and limit calls
// no Landlock ABI scopes (tool_filter.cc says which are notified). They are
// let through (CONTINUE) only when every process they reach is the tool's:
// a descendant of this supervisor, which is a child subreaper, so the
// tool's orphans stay below it. Their arguments are registers, which the
// tool cannot change after the check; a target that dies and whose pid is
// taken by another process between the check and the call would need the
// pid space to wrap within that window. pidfd_send_signal names its target
// by an fd the tool could swap, so it is performed here, on a copy.
#include <dirent.h>
#include <fcntl.h>
#include <seccomp.h>
#include <sys/syscall.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>

#include "supervisor/emulator.h"
#include "supervisor/caps.h"
#include "supervisor/notify_loop.h"
#include "supervisor/tool_creds.h"
#include "supervisor/tool_fd.h"
#include "supervisor/uapi.h"

namespace cordon::supervisor {
namespace {

struct ProcStat {
  pid_t ppid = 0;
  pid_t pgrp = 0;
};

// Fields 4 and 5 of /proc/PID/stat, after the ")" that ends the command
// name (which may itself hold spaces and parentheses).
std::optional<ProcStat> ReadStat(pid_t pid) {
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%d/stat", pid);
  int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  char buf[512];
  ssize_t n = ::read(fd, buf, sizeof buf - 1);
  ::close(fd);
  if (n <= 0) return std::nullopt;
  buf[n] = '\0';
  const char* close = std::strrchr(buf, ')');
  ProcStat st;
  char state;
  if (close == nullptr || std::sscanf(close + 1, " %c %d %d", &state, &st.ppid, &st.pgrp) != 3) {
    return std::nullopt;
  }
  return st;
}

enum class Target { kGone, kTool, kOther };

// Whether `pid` (a process or thread id) descends from this supervisor.
Target Classify(pid_t pid) {
  const pid_t self = ::getpid();
  if (pid <= 0) return Target::kGone;
  if (pid == self) return Target::kOther;
  for (int depth = 0; depth < 4096; ++depth) {
    auto st = ReadStat(pid);
    if (!st) return depth == 0 ? Target::kGone : Target::kOther;
    if (st->ppid == self) return Target::kTool;
    if (st->ppid <= 1) return Target::kOther;
    pid = st->ppid;
  }
  return Target::kOther;
}

// A process group's members share one session, and a session made by one
// of the tool's processes holds only its descendants: one member says it.
Target ClassifyGroup(pid_t pgrp) {
  DIR* d = ::opendir("/proc");
  if (d == nullptr) return Target::kOther;
  Target t = Target::kGone;
  while (dirent* e = ::readdir(d)) {
    pid_t pid = static_cast<pid_t>(std::atoi(e->d_name));
    if (pid <= 0) continue;
    auto st = ReadStat(pid);
    if (st && st->pgrp == pgrp) {
      t = Classify(pid) == Target::kTool ? Target::kTool : Target::kOther;
      break;
    }
  }
  ::closedir(d);
  return t;
}

// `nr` names the call in a refusal's reason only: most calls go through.
Reply Decide(Target t, int nr) {
  switch (t) {
    case Target::kTool: {
      Reply cont;
      cont.continue_syscall = true;
      return cont;
    }
    case Target::kGone:
      return Reply::Errno(ESRCH);
    case Target::kOther:
      break;
  }
  return Reply::Errno(EPERM, std::string(SyscallName(nr)) + ": not a process of the tool");
}

// The pid the pidfd `fd` of thread group `tgid` refers to, from its fdinfo
// ("Pid:\t-1" once gone; -2 for no pidfd, -3 for no descriptor).
pid_t PidfdPid(pid_t tgid, int fd) {
  std::string path = "/proc/" + std::to_string(tgid) + "/fdinfo/" + std::to_string(fd);
  FILE* f = std::fopen(path.c_str(), "re");
  if (f == nullptr) return -3;
  char line[128];
  pid_t pid = -2;  // not a pidfd
  while (std::fgets(line, sizeof line, f) != nullptr) {
    if (std::sscanf(line, "Pid:\t%d", &pid) == 1) break;
  }
  std::fclose(f);
  return pid;
}

}  // namespace

// A tool may make itself undumpable only where the supervisor can still read
// its memory and descriptors then (CAP_SYS_PTRACE, which the supervisor
// raises for that alone: caps.h): elsewhere every call it makes for the tool
// would fail. The refusal is the tool's to handle (ssh and ssh-agent go on
// dumpable), and said once a run.
Reply Emulator::Undumpable(const Request& req) {
  static const bool kServesUndumpable = Permits(CAP_SYS_PTRACE);
  Reply cont;
  cont.continue_syscall = true;
  if (req.args[1] != 0 || kServesUndumpable) return cont;  // dumpable again, or EINVAL's
  static std::atomic<bool> said{false};
  if (!said.exchange(true)) {
    spdlog::warn("refused a tool's prctl(PR_SET_DUMPABLE, 0) (EPERM): cordon holds no "
                 "CAP_SYS_PTRACE here (an unprivileged user, a container), and could no longer "
                 "read the calls of an undumpable tool to make them; the tool stays dumpable");
  }
  return Reply::Errno(EPERM, "prctl(PR_SET_DUMPABLE, 0): the supervisor could not serve it");
}

Reply Emulator::ProcessTarget(const Request& req) {
  const uint64_t* a = req.args;
  auto arg = [&](int k) { return static_cast<int>(a[k]); };
  const int nr = req.nr;
  switch (nr) {
    case SCMP_SYS(kill):
      if (arg(0) == -1) return Reply::Errno(EPERM, "kill(-1): every process");
      if (arg(0) < 0) return Decide(ClassifyGroup(-arg(0)), nr);
      return Decide(arg(0) == 0 ? Target::kTool : Classify(arg(0)), nr);
    case SCMP_SYS(tkill):
    case SCMP_SYS(rt_sigqueueinfo):
    case SCMP_SYS(prlimit64):
    case SCMP_SYS(sched_setaffinity):
    case SCMP_SYS(sched_setscheduler):
    case SCMP_SYS(sched_setparam):
    case SCMP_SYS(sched_setattr):
      // 0 is the caller; a negative id is the kernel's EINVAL or ESRCH.
      if (arg(0) <= 0) return Decide(Target::kTool, nr);
      return Decide(Classify(arg(0)), nr);
    case SCMP_SYS(tgkill):
    case SCMP_SYS(rt_tgsigqueueinfo):
      if (arg(1) <= 0) return Decide(Target::kTool, nr);
      return Decide(Classify(arg(1)), nr);
    case SCMP_SYS(setpriority):
    case SCMP_SYS(ioprio_set): {
      // PRIO_PROCESS, PRIO_PGRP, PRIO_USER are 0, 1, 2; IOPRIO_WHO_* 1, 2, 3.
      int which = arg(0) - (nr == SCMP_SYS(ioprio_set) ? 1 : 0);
      int who = arg(1);
      if (which == 2) {
        return Reply::Errno(EPERM, std::string(SyscallName(nr)) + ": every process of a user");
      }
      if (which == 1 && who != 0) return Decide(ClassifyGroup(who), nr);
      if (which == 0 && who > 0) return Decide(Classify(who), nr);
      return Decide(Target::kTool, nr);  // the caller, its group, or EINVAL
    }
    case SCMP_SYS(pidfd_send_signal): {
      if (a[2] != 0 || a[3] != 0) {
        return Reply::Errno(EPERM, "pidfd_send_signal with a siginfo or flags is not emulated");
      }
      auto creds = ReadToolCreds(req.tid);
      if (!creds) return Reply::Errno(ESRCH);
      auto fd = GetToolFd(creds->tgid, arg(0));
      if (!fd && fd.error().err != EPERM && fd.error().err != ENOSYS) return Reply::Errno(EBADF);
      const pid_t self = static_cast<pid_t>(::getpid());
      pid_t pid = fd ? PidfdPid(self, fd->get()) : PidfdPid(creds->tgid, arg(0));
      if (pid <= 0) return Reply::Errno(pid == -1 ? ESRCH : EBADF);  // gone, or not a pidfd
      Reply r = Decide(Classify(pid), nr);
      if (!r.continue_syscall) return r;
      if (!fd) {
        // Without pidfd_getfd (a container's seccomp profile): a pidfd of our
        // own for that pid, which is the tool's process if the tool's pidfd
        // still names it, alive, after ours was made (no pid is reused while
        // its process lives).
        fd = Fd(static_cast<int>(::syscall(uapi::kNrPidfdOpen, pid, 0)));
        if (!fd.value()) return Reply::Errno(errno == ESRCH ? ESRCH : EBADF);
        if (PidfdPid(creds->tgid, arg(0)) != pid) return Reply::Errno(ESRCH);
      }
      // The copy still refers to the process checked, or to nothing.
      long rc = ::syscall(SYS_pidfd_send_signal, fd->get(), arg(1), nullptr, 0);
      return rc == 0 ? Reply{} : Reply::Errno(errno);
    }
  }
  return Reply::Errno(ENOSYS);
}

}  // namespace cordon::supervisor
