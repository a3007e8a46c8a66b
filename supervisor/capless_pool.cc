#include "supervisor/capless_pool.h"

#include "supervisor/caps.h"

namespace cordon::supervisor {

bool CaplessPool::Submit(std::function<void()> job) {
  std::lock_guard<std::mutex> l(mu_);
  if (stopping_) return false;
  jobs_.push_back(std::move(job));
  // A waiting thread not already woken for another job takes it; else a
  // new thread does (a thread just done with a job may take it first: then
  // one waits a little longer, never a job).
  if (waiting_ > woken_) {
    ++woken_;
    cv_.notify_one();
  } else if (threads_.size() < kMaxThreads) {
    threads_.emplace_back([this] { Work(); });
  }
  return true;
}

void CaplessPool::Stop() {
  std::vector<std::thread> threads;
  {
    std::lock_guard<std::mutex> l(mu_);
    stopping_ = true;  // queued jobs still run: their calls were interrupted
    threads.swap(threads_);
  }
  cv_.notify_all();
  for (auto& t : threads) t.join();
}

size_t CaplessPool::threads() const {
  std::lock_guard<std::mutex> l(mu_);
  return threads_.size();
}

void CaplessPool::Work() {
  // A job checks again for itself (SocketName): a thread that could not
  // drop them refuses its calls rather than make them as root.
  (void)DropThreadCapabilities();
  std::unique_lock<std::mutex> l(mu_);
  for (;;) {
    if (!jobs_.empty()) {
      std::function<void()> job = std::move(jobs_.front());
      jobs_.pop_front();
      l.unlock();
      job();
      l.lock();
      continue;
    }
    if (stopping_) return;
    ++waiting_;
    cv_.wait(l);
    --waiting_;
    if (woken_ > 0) --woken_;
  }
}

}  // namespace cordon::supervisor
