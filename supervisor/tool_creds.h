// What the supervisor needs to know about the tool thread behind a
// notification: its thread group, fs ids and umask. They live in
// /proc/TID/status, whose generation alone costs tens of µs (more than the
// rest of a round trip), so:
//   - ReadToolCreds reads it once, with one read(2) and no stdio, and only
//     the requests that need the ids call it (metadata changes, /proc/self);
//   - UmaskCache keeps each thread's umask for creations. umask(2) is itself
//     notified (UmaskCache::OnUmask), so the cache is dropped before a new
//     value can take effect; a thread's entry holds a pidfd on that very
//     thread (PIDFD_THREAD), so a reused thread id is never mistaken for
//     the old one. Where the kernel lacks PIDFD_THREAD nothing is cached.
// Thread-safe.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <functional>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "base/fd.h"
#include "base/result.h"

namespace cordon::supervisor {

struct ToolCreds {
  pid_t tgid = 0;
  uid_t fsuid = 0;
  gid_t fsgid = 0;
  mode_t umask = 022;
};

Result<ToolCreds> ReadToolCreds(pid_t tid);

class UmaskCache {
 public:
  // The umask of thread `tid` now. A value read from /proc is checked with
  // `still_valid` (the notification's ID_VALID) after the read: false means
  // the thread is gone and its id may name another one (ESRCH).
  Result<mode_t> Get(pid_t tid, const std::function<bool()>& still_valid);

  // Thread `tid` is about to run umask(`mask`) (answered with CONTINUE):
  // every entry goes (threads may share the umask), and nothing is cached
  // until the new value shows in `tid`'s status or `tid` moves on.
  void OnUmask(pid_t tid, mode_t mask);

  // Any notification from `tid`: its earlier syscalls have all completed.
  void Seen(pid_t tid);

 private:
  struct Entry {
    Fd pidfd;
    mode_t umask;
  };
  struct Pending {
    pid_t tid;
    Fd pidfd;
    mode_t mask;
  };
  bool NonePending();  // mu_ held

  std::mutex mu_;
  std::unordered_map<pid_t, Entry> threads_;  // guarded by mu_
  std::vector<Pending> pending_;              // guarded by mu_
  std::atomic<bool> has_pending_{false};      // !pending_.empty(), read without mu_
  bool can_cache_ = true;                     // false once PIDFD_THREAD is refused
};

}  // namespace cordon::supervisor
