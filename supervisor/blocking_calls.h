// BlockingCalls: system calls the supervisor makes for a tool that may wait
// as long as the tool's own would (a blocking connect to a slow or full
// peer: up to the TCP SYN timeout, about two minutes). They run on deferred
// threads (notify_loop.h), never on the receiver, and a stopping supervisor
// cuts them short: Run() unblocks a real-time signal whose handler does
// nothing and is installed without SA_RESTART, so InterruptAll() makes the
// call return EINTR. The signal is aimed at those threads only
// (pthread_kill) and stays blocked everywhere else.
//
// Thread-safe.
#pragma once

#include <pthread.h>

#include <functional>
#include <mutex>
#include <set>

namespace cordon::supervisor {

class BlockingCalls {
 public:
  BlockingCalls();

  // Runs `call` (a system call returning -1 with errno) where InterruptAll
  // can reach it. After InterruptAll it is not run: -1 with EINTR.
  int Run(const std::function<int()>& call);

  // From now on every call returns at once: those running are signalled
  // until they have returned, later ones are not run.
  void InterruptAll();

 private:
  std::mutex mu_;
  bool stopping_ = false;
  std::set<pthread_t> running_;
};

}  // namespace cordon::supervisor
