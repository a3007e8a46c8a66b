#include "policy/change_watch.h"

#include <stdio.h>
#include <sys/inotify.h>

#include <cerrno>

#include "policy/local_fs.h"

namespace cordon::policy {
namespace {

constexpr uint32_t kChangeMask =
    IN_MODIFY | IN_ATTRIB | IN_CLOSE_WRITE | IN_MOVE_SELF | IN_DELETE_SELF;

}  // namespace

std::shared_ptr<ChangeWatch> ChangeWatch::Start(int fd) {
  if (!OnKnownLocalFilesystem(fd)) return nullptr;
  Fd in(::inotify_init1(IN_NONBLOCK | IN_CLOEXEC));
  if (!in) return nullptr;
  // The magic link names the inode open at `fd`, whatever its path is now.
  char self[40];
  std::snprintf(self, sizeof self, "/proc/self/fd/%d", fd);
  if (::inotify_add_watch(in.get(), self, kChangeMask) < 0) return nullptr;
  return std::shared_ptr<ChangeWatch>(new ChangeWatch(std::move(in)));
}

bool ChangeWatch::Quiet() {
  std::lock_guard lock(mu_);
  if (changed_) return false;
  // Any event at all: only one file is watched, with the change mask (an
  // overflow or a dropped watch is an event too).
  alignas(struct inotify_event) char buf[4096];
  ssize_t n;
  do {
    n = ::read(inotify_.get(), buf, sizeof buf);
  } while (n < 0 && errno == EINTR);
  if (n > 0 || (n < 0 && errno != EAGAIN)) {
    changed_ = true;
    inotify_.reset();
  }
  return !changed_;
}

}  // namespace cordon::policy
