#include "supervisor/exec/change_watch.h"

#include <stdio.h>
#include <sys/inotify.h>

#include <cerrno>
#include <cstdint>
#include <map>
#include <mutex>
#include <utility>

#include "base/fd.h"
#include "supervisor/walk/local_fs.h"

namespace cordon::supervisor {
namespace {

constexpr uint32_t kChangeMask =
    IN_MODIFY | IN_ATTRIB | IN_CLOSE_WRITE | IN_MOVE_SELF | IN_DELETE_SELF;

// The process's one inotify instance and what its events said so far.
class Watches {
 public:
  static Watches& Get() {
    static Watches* w = new Watches;  // never destroyed: watches outlive main
    return *w;
  }

  // The watch descriptor and its event count at this moment; -1 if none.
  std::pair<int, uint64_t> Add(int fd) {
    std::lock_guard lock(mu_);
    if (!inotify_) inotify_.reset(::inotify_init1(IN_NONBLOCK | IN_CLOEXEC));
    if (!inotify_) return {-1, 0};
    Drain();  // what happened before this moment is no change since it
    // The magic link names the inode open at `fd`, whatever its path is now.
    char self[40];
    std::snprintf(self, sizeof self, "/proc/self/fd/%d", fd);
    // The same inode watched again gets its old descriptor, and each watch
    // compares the count with its own starting point.
    int wd = ::inotify_add_watch(inotify_.get(), self, kChangeMask);
    if (wd < 0) return {-1, 0};
    return {wd, events_[wd]};
  }

  bool Quiet(int wd, uint64_t since) {
    std::lock_guard lock(mu_);
    Drain();
    auto it = events_.find(wd);
    return !overflowed_ && (it == events_.end() ? 0 : it->second) == since;
  }

 private:
  void Drain() {
    alignas(struct inotify_event) char buf[4096];
    for (;;) {
      ssize_t n = ::read(inotify_.get(), buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && errno == EAGAIN) return;
      if (n <= 0) {  // the instance is broken: nothing can be vouched for
        overflowed_ = true;
        return;
      }
      for (char* p = buf; p < buf + n;) {
        auto* ev = reinterpret_cast<struct inotify_event*>(p);
        if (ev->mask & IN_Q_OVERFLOW) overflowed_ = true;
        ++events_[ev->wd];  // any event, IN_IGNORED (a dropped watch) too
        p += sizeof(struct inotify_event) + ev->len;
      }
    }
  }

  std::mutex mu_;
  Fd inotify_;                      // guarded by mu_
  std::map<int, uint64_t> events_;  // per watch descriptor; guarded by mu_
  bool overflowed_ = false;         // guarded by mu_; every watch has changed
};

}  // namespace

std::shared_ptr<ChangeWatch> ChangeWatch::Start(int fd) {
  if (!OnKnownLocalFilesystem(fd)) return nullptr;
  auto [wd, since] = Watches::Get().Add(fd);
  if (wd < 0) return nullptr;
  return std::shared_ptr<ChangeWatch>(new ChangeWatch(wd, since));
}

bool ChangeWatch::Quiet() const { return Watches::Get().Quiet(wd_, since_); }

}  // namespace cordon::supervisor
