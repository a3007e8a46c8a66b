#include "supervisor/tool_creds.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include "supervisor/uapi.h"

namespace cordon::supervisor {
namespace {

// The value after "\nKEY:\t" in a status text, skipping `skip` fields.
bool Field(std::string_view text, std::string_view key, int skip, int base, unsigned long& out) {
  size_t at = text.find(key);
  if (at == std::string_view::npos) return false;
  const char* p = text.data() + at + key.size();
  const char* end = text.data() + text.size();
  for (int i = 0; i <= skip; ++i) {
    while (p < end && (*p == '\t' || *p == ' ')) ++p;
    if (p >= end || *p < '0' || *p > '9') return false;
    char* next = nullptr;
    out = std::strtoul(p, &next, base);
    p = next;
  }
  return true;
}

bool Alive(const Fd& pidfd) {
  pollfd p{pidfd.get(), POLLIN, 0};
  return ::poll(&p, 1, 0) == 0;  // a thread pidfd turns readable when the thread exits
}

Fd ThreadPidfd(pid_t tid) {
  return Fd(static_cast<int>(::syscall(uapi::kNrPidfdOpen, tid, uapi::kPidfdThread)));
}

constexpr size_t kMaxCachedThreads = 256;  // one pidfd each

}  // namespace

Result<ToolCreds> ReadToolCreds(pid_t tid) {
  char path[48];
  std::snprintf(path, sizeof path, "/proc/%d/status", tid);
  Fd fd(::open(path, O_RDONLY | O_CLOEXEC));
  if (!fd) return Errno("open", path);
  char buf[4096];
  size_t len = 0;
  while (len < sizeof buf) {
    ssize_t n = ::read(fd.get(), buf + len, sizeof buf - len);
    if (n < 0) return Errno("read", path);
    if (n == 0) break;
    len += static_cast<size_t>(n);
  }
  std::string_view text(buf, len);
  ToolCreds c;
  unsigned long v = 0;
  if (!Field(text, "\nUmask:", 0, 8, v)) return SysError{EIO, "no Umask in", path};
  c.umask = static_cast<mode_t>(v & 0777);
  if (!Field(text, "\nTgid:", 0, 10, v)) return SysError{EIO, "no Tgid in", path};
  c.tgid = static_cast<pid_t>(v);
  if (!Field(text, "\nUid:", 3, 10, v)) return SysError{EIO, "no Uid in", path};
  c.fsuid = static_cast<uid_t>(v);
  if (!Field(text, "\nGid:", 3, 10, v)) return SysError{EIO, "no Gid in", path};
  c.fsgid = static_cast<gid_t>(v);
  return c;
}

bool UmaskCache::NonePending() {
  std::erase_if(pending_, [](const Pending& p) {
    if (p.pidfd && !Alive(p.pidfd)) return true;  // gone: its umask ran or never will
    auto c = ReadToolCreds(p.tid);
    return !c || c->umask == p.mask;  // the new value is in force
  });
  has_pending_ = !pending_.empty();
  return pending_.empty();
}

Result<mode_t> UmaskCache::Get(pid_t tid, const std::function<bool()>& still_valid) {
  std::lock_guard<std::mutex> l(mu_);
  if (auto it = threads_.find(tid); it != threads_.end()) {
    if (Alive(it->second.pidfd)) return it->second.umask;
    threads_.erase(it);  // the id now names another thread
  }
  // Pending umask calls first: a value read while one may still be running
  // could be the old one.
  bool cacheable = can_cache_ && NonePending();
  Fd pidfd;
  if (cacheable) {
    pidfd = ThreadPidfd(tid);
    if (!pidfd && errno == EINVAL) can_cache_ = false;  // no PIDFD_THREAD
  }
  auto creds = ReadToolCreds(tid);
  if (!still_valid()) return SysError{ESRCH, "tool thread gone"};
  if (!creds) return creds.error();
  // The pidfd was taken before the read: alive now means it was this thread.
  if (pidfd && Alive(pidfd)) {
    if (threads_.size() >= kMaxCachedThreads) {
      std::erase_if(threads_, [](const auto& kv) { return !Alive(kv.second.pidfd); });
      if (threads_.size() >= kMaxCachedThreads) threads_.clear();
    }
    threads_.insert_or_assign(tid, Entry{std::move(pidfd), creds->umask});
  }
  return creds->umask;
}

void UmaskCache::OnUmask(pid_t tid, mode_t mask) {
  std::lock_guard<std::mutex> l(mu_);
  threads_.clear();
  pending_.push_back({tid, ThreadPidfd(tid), static_cast<mode_t>(mask & 0777)});
  has_pending_ = true;
}

void UmaskCache::Seen(pid_t tid) {
  if (!has_pending_.load(std::memory_order_relaxed)) return;
  std::lock_guard<std::mutex> l(mu_);
  std::erase_if(pending_, [tid](const Pending& p) { return p.tid == tid; });
  has_pending_ = !pending_.empty();
}

}  // namespace cordon::supervisor
