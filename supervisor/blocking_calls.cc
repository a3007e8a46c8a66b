#include "supervisor/blocking_calls.h"

#include <signal.h>

#include <cerrno>
#include <chrono>
#include <thread>

namespace cordon::supervisor {
namespace {

// glibc keeps the first real-time signals for itself; SIGRTMIN is past them.
int InterruptSignal() { return SIGRTMIN + 1; }

void Nothing(int) {}

}  // namespace

BlockingCalls::BlockingCalls() {
  static std::once_flag installed;
  std::call_once(installed, [] {
    struct sigaction sa {};
    sa.sa_handler = Nothing;  // no SA_RESTART: the call returns EINTR
    sigemptyset(&sa.sa_mask);
    ::sigaction(InterruptSignal(), &sa, nullptr);
  });
}

int BlockingCalls::Run(const std::function<int()>& call) {
  pthread_t self = ::pthread_self();
  {
    std::lock_guard<std::mutex> l(mu_);
    if (stopping_) {
      errno = EINTR;
      return -1;
    }
    running_.insert(self);
  }
  sigset_t sig, old;
  sigemptyset(&sig);
  sigaddset(&sig, InterruptSignal());
  ::pthread_sigmask(SIG_UNBLOCK, &sig, &old);
  int rc = call();
  int err = errno;
  ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
  {
    std::lock_guard<std::mutex> l(mu_);
    running_.erase(self);
  }
  errno = err;
  return rc;
}

void BlockingCalls::InterruptAll() {
  for (;;) {
    {
      std::lock_guard<std::mutex> l(mu_);
      stopping_ = true;
      if (running_.empty()) return;
      // A signal that lands before the thread enters its call is spent on
      // nothing: signal again until it has left.
      for (pthread_t t : running_) ::pthread_kill(t, InterruptSignal());
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

}  // namespace cordon::supervisor
