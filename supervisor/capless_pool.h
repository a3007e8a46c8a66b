// Threads without capabilities that make calls for the tool with no more
// privilege than the tool has: connect and bind of network sockets under
// network allow (emulator_socket.cc). Each thread drops its capabilities
// once, when it starts, and is kept for the run: a connect no longer pays
// for a new thread (~200 us a call on the reference VM).
//
// A job goes to a waiting thread, or to a new one when every thread is
// busy, so a call that blocks (a connect waiting out a SYN) holds up no
// other; past kMaxThreads jobs queue. The caller interrupts running jobs
// before Stop (BlockingCalls), which then joins every thread.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace cordon::supervisor {

class CaplessPool {
 public:
  static constexpr size_t kMaxThreads = 64;

  CaplessPool() = default;
  CaplessPool(const CaplessPool&) = delete;
  CaplessPool& operator=(const CaplessPool&) = delete;
  ~CaplessPool() { Stop(); }

  // False once stopping: the job is not run.
  bool Submit(std::function<void()> job);
  // Takes no new job; the threads finish the queued ones (whose blocking
  // calls the caller has interrupted) and are joined.
  void Stop();

  size_t threads() const;

 private:
  void Work();

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> jobs_;
  std::vector<std::thread> threads_;
  size_t waiting_ = 0;  // threads blocked for a job
  size_t woken_ = 0;    // of those, notified for one and not yet running
  bool stopping_ = false;
};

}  // namespace cordon::supervisor
