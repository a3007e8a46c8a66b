// WalkQueue: the directories a parallel walk of one tree has opened but not
// yet listed, shared by the threads that walk it, and the walk's stop flag.
//
// A directory is handed over as the fd its finder opened beneath the parent
// without following a link (OpenSubdir), never as a path to resolve again:
// the thread that lists it lists exactly the directory that was checked when
// it was found. Walkers share a subdirectory only while the queue is short
// (Hungry), so at most about kTarget directories wait here open, whatever the
// width of the tree. The walk is over when nothing is queued and nobody is
// walking a directory it took (it might still share more), or once stopped.
// Thread-safe; not async-signal-safe (mutex, allocation).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "base/fd.h"

namespace cordon::supervisor {

struct PendingDir {
  Fd fd;                         // O_RDONLY | O_DIRECTORY, opened without following a link
  bool short_read_ends = false;  // for its listing (dir_listing.h)
  std::size_t depth = 0;         // of the directory itself; its entries are one deeper
  std::string path;              // as the walk names it (tree check: relative; scan: absolute)
};

class WalkQueue {
 public:
  // Enough queued subtrees to keep two walkers busy and even out their sizes.
  static constexpr std::size_t kTarget = 8;

  // Whether a walker should share the subdirectory it found rather than
  // walk it itself. A hint read without the lock.
  bool Hungry() const { return size_.load(std::memory_order_relaxed) < kTarget; }

  // Queues `dir`; returns how many directories are queued now.
  std::size_t Push(PendingDir dir);

  // The next directory to walk (the one queued first, the biggest subtree
  // as a rule). Waits while the queue is empty and another walker may still
  // share one; nullopt when the walk is over or stopped. Every directory
  // taken is answered with Done().
  std::optional<PendingDir> Take();
  void Done();

  // Ends the walk: Take() answers nullopt from now on, waiting walkers wake.
  void Stop();
  bool stopped() const { return stop_.load(std::memory_order_relaxed); }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<PendingDir> dirs_;  // guarded by mu_
  std::size_t walking_ = 0;      // taken and not Done; guarded by mu_
  std::atomic<std::size_t> size_{0};
  std::atomic<bool> stop_{false};
};

// The second thread of a parallel walk: started by the caller's walker once
// it has queued WalkQueue::kTarget directories, so a small tree does not
// pay for a thread; joined by its owner. Not thread-safe: only the caller's
// walker starts it.
class SecondWalker {
 public:
  SecondWalker() = default;
  SecondWalker(const SecondWalker&) = delete;
  SecondWalker& operator=(const SecondWalker&) = delete;
  ~SecondWalker() { Join(); }

  // After a Push that left `queued` directories waiting: runs `work` on a
  // new thread the first time there are enough. Without a thread to spare
  // the caller walks alone.
  void MaybeStart(std::size_t queued, const std::function<void()>& work);
  void Join() {
    if (thread_.joinable()) thread_.join();
  }
  std::size_t walkers() const { return started_ ? 2 : 1; }

 private:
  bool started_ = false;
  std::thread thread_;
};

}  // namespace cordon::supervisor
