#include "supervisor/walk/walk_queue.h"

#include <system_error>
#include <utility>

namespace cordon::supervisor {

std::size_t WalkQueue::Push(PendingDir dir) {
  std::size_t n;
  {
    std::lock_guard lock(mu_);
    dirs_.push_back(std::move(dir));
    n = dirs_.size();
    size_.store(n, std::memory_order_relaxed);
  }
  cv_.notify_one();
  return n;
}

std::optional<PendingDir> WalkQueue::Take() {
  std::unique_lock lock(mu_);
  cv_.wait(lock, [this] { return stopped() || !dirs_.empty() || walking_ == 0; });
  if (stopped() || dirs_.empty()) return std::nullopt;
  PendingDir dir = std::move(dirs_.front());
  dirs_.pop_front();
  size_.store(dirs_.size(), std::memory_order_relaxed);
  ++walking_;
  return dir;
}

void WalkQueue::Done() {
  bool over;
  {
    std::lock_guard lock(mu_);
    over = --walking_ == 0 && dirs_.empty();
  }
  if (over) cv_.notify_all();
}

void WalkQueue::Stop() {
  {
    std::lock_guard lock(mu_);
    stop_.store(true, std::memory_order_relaxed);
  }
  cv_.notify_all();
}

void SecondWalker::MaybeStart(std::size_t queued, const std::function<void()>& work) {
  if (started_ || queued < WalkQueue::kTarget) return;
  try {
    thread_ = std::thread(work);
    started_ = true;
  } catch (const std::system_error&) {
    // No thread to spare: the caller walks alone.
  }
}

}  // namespace cordon::supervisor
