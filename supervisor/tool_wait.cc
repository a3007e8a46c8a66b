#include "supervisor/tool_wait.h"

#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>

namespace cordon::supervisor {

namespace {

sigset_t Forwarded() {
  sigset_t forward;
  sigemptyset(&forward);
  for (int s : {SIGINT, SIGTERM, SIGHUP, SIGQUIT}) sigaddset(&forward, s);
  return forward;
}

}  // namespace

void BlockForwardedSignals() {
  const sigset_t forward = Forwarded();
  ::pthread_sigmask(SIG_BLOCK, &forward, nullptr);
}

ForwardedSignals::ForwardedSignals() {
  const sigset_t forward = Forwarded();
  ::sigprocmask(SIG_BLOCK, &forward, &old_mask_);
  fd_ = Fd(::signalfd(-1, &forward, SFD_CLOEXEC | SFD_NONBLOCK));
  ::prctl(PR_SET_CHILD_SUBREAPER, 1);
}

ForwardedSignals::~ForwardedSignals() { ::sigprocmask(SIG_SETMASK, &old_mask_, nullptr); }

Waited Supervise(pid_t pid, int pidfd, int sigfd, Fd status_read, ReportChannel& reports,
                 const std::function<void(const void*, size_t)>& on_report) {
  Waited w;
  ChildFailure& failure = w.failure;
  bool& failed = w.failed;
  bool status_open = true;
  bool report_hup = false;
  int& exit_code = w.exit_code;
  for (;;) {
    pollfd fds[4] = {{pidfd, POLLIN, 0},
                     {sigfd, POLLIN, 0},
                     {status_open ? status_read.get() : -1, POLLIN, 0},
                     {report_hup ? -1 : reports.poll_fd(), POLLIN, 0}};
    int n = ::poll(fds, 4, -1);
    if (n < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (fds[3].revents & POLLIN) reports.Drain(on_report);
    // Every holder of the tool's end has gone: drained, and nothing more
    // can come (polling it would report POLLHUP until the pidfd fires).
    if (fds[3].revents & (POLLHUP | POLLERR)) report_hup = true;
    if (fds[2].revents) {
      ssize_t r = ::read(status_read.get(), &failure, sizeof(failure));
      if (r == static_cast<ssize_t>(sizeof(failure))) failed = true;
      status_open = false;
    }
    if (fds[1].revents & POLLIN) {
      signalfd_siginfo si;
      while (::read(sigfd, &si, sizeof(si)) == sizeof(si)) {
        ::kill(-pid, static_cast<int>(si.ssi_signo));
      }
    }
    if (fds[0].revents & POLLIN) {
      siginfo_t info{};
      if (::waitid(P_PID, pid, &info, WEXITED) != 0) break;
      if (info.si_code == CLD_EXITED)
        exit_code = info.si_status;
      else
        exit_code = 128 + info.si_status;
      break;
    }
  }
  if (status_open) {
    ssize_t r = ::read(status_read.get(), &failure, sizeof(failure));
    if (r == static_cast<ssize_t>(sizeof(failure))) failed = true;
  }
  return w;
}

namespace {

// The session of `pid` (field 6 of /proc/PID/stat, a zombie's too), or -1.
pid_t SessionOf(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return -1;
  const std::size_t close = line.rfind(')');
  if (close == std::string::npos) return -1;
  std::istringstream rest(line.substr(close + 2));
  std::string state;
  long ppid = 0, pgrp = 0, session = -1;
  rest >> state >> ppid >> pgrp >> session;
  return static_cast<pid_t>(session);
}

}  // namespace

int KillRemaining(pid_t pgid) {
  ::kill(-pgid, SIGKILL);
  // The tool's processes are those outside cordon's own session (the tool
  // runs in one of its own, setsid): cordon's helpers (the loopback
  // namespace's) are reaped here too, and not counted.
  const pid_t own = ::getsid(0);
  int reaped = 0;
  for (;;) {
    std::ifstream children("/proc/self/task/" + std::to_string(::getpid()) + "/children");
    std::string pid;
    bool any = false;
    while (children >> pid) {
      ::kill(std::stoi(pid), SIGKILL);
      any = true;
    }
    siginfo_t info{};
    if (::waitid(P_ALL, 0, &info, WEXITED | WNOWAIT | (any ? 0 : WNOHANG)) != 0) {
      if (errno == ECHILD) return reaped;
      if (errno == EINTR) continue;
      return reaped;
    }
    if (info.si_pid == 0) {
      if (!any) return reaped;
      continue;
    }
    if (SessionOf(info.si_pid) != own) ++reaped;
    int status;
    ::waitpid(info.si_pid, &status, 0);
  }
}

}  // namespace cordon::supervisor
