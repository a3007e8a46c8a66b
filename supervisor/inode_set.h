// A set of inodes, by device and number, that the notify threads share
// (the emulator's record of what the run made and what it laundered).
// Thread-safe.
#pragma once

#include <sys/types.h>

#include <mutex>
#include <set>
#include <utility>

namespace cordon::supervisor {

class InodeSet {
 public:
  bool Contains(dev_t dev, ino_t ino) const {
    std::lock_guard<std::mutex> l(mu_);
    return set_.count({dev, ino}) > 0;
  }
  void Insert(dev_t dev, ino_t ino) {
    std::lock_guard<std::mutex> l(mu_);
    set_.insert({dev, ino});
  }
  void Erase(dev_t dev, ino_t ino) {
    std::lock_guard<std::mutex> l(mu_);
    set_.erase({dev, ino});
  }

 private:
  mutable std::mutex mu_;
  std::set<std::pair<dev_t, ino_t>> set_;
};

}  // namespace cordon::supervisor
