#include "supervisor/tool_wait.h"

#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
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

void KillRemaining(pid_t pgid) {
  ::kill(-pgid, SIGKILL);
  for (;;) {
    std::ifstream children("/proc/self/task/" + std::to_string(::getpid()) + "/children");
    std::string pid;
    bool any = false;
    while (children >> pid) {
      ::kill(std::stoi(pid), SIGKILL);
      any = true;
    }
    int status;
    pid_t r = ::waitpid(-1, &status, any ? 0 : WNOHANG);
    if (r < 0 && errno == ECHILD) return;
    if (r == 0 && !any) return;
  }
}

}  // namespace cordon::supervisor
