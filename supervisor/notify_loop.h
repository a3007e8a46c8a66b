// NotifyLoop: answers the tool's seccomp user notifications on a thread of
// its own that blocks in SECCOMP_IOCTL_NOTIF_RECV: no poll(2) per request,
// and with SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP the tool's thread and this one
// hand the CPU to each other. Fast decisions are made and answered inline;
// a decision that may wait (a sensitive delete waiting for a person, a
// blocking Unix connect) runs on a thread of its own so it never blocks the
// other threads or processes of the tool (the emulator hands back the
// checked rest of the call, Reply::later; nothing is decided twice);
// finished ones are joined as new ones start, so a tool making many such
// calls does not pile threads up.
// Network connect and bind go to threads without capabilities kept for the
// run (CaplessPool).
// Answers: an errno, a result, an fd installed with SECCOMP_IOCTL_NOTIF_ADDFD
// + SECCOMP_ADDFD_FLAG_SEND, or (for execve and umask only) CONTINUE.
// SECCOMP_IOCTL_NOTIF_ID_VALID is checked after every read of the tool's
// memory. After Shutdown() every notification is answered with EACCES,
// the run's questions pending are ended (RunGates::Shutdown) and blocking
// calls made for the tool are interrupted. The thread ends when no
// task uses the filter any more; the destructor waits for that.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "base/fd.h"
#include "supervisor/refusal_log.h"
#include "supervisor/capless_pool.h"
#include "supervisor/emulator.h"
#include "supervisor/notify_server.h"

namespace cordon::supervisor {

// "openat", "unlinkat"... for logs and the audit trail.
const char* SyscallName(int nr);

class NotifyLoop : public NotifyServer {
 public:
  // Starts serving `listener` at once, on a thread cloned from the caller's
  // (so it carries the caller's seccomp filters and signal mask: none and
  // all blocked, in the launcher).
  // `refusals` (may be null) is told each refused call.
  NotifyLoop(Fd listener, std::shared_ptr<Emulator> emulator,
             std::shared_ptr<RefusalLog> refusals = nullptr);
  ~NotifyLoop() override;

  void Shutdown() override;

  uint64_t answered() const { return answered_.load(); }

 private:
  void Run();
  void Answer(const Request& req, Reply reply);
  // NOTIF_SEND: the value, the errno, or CONTINUE.
  void SendResponse(const Request& req, const Reply& reply);
  // Runs the rest of a decision (Reply::later) on a thread of its own
  // that acts as the tool; false once stopping.
  bool Defer(const Request& req, std::function<Reply()> later);

  struct Deferred {
    std::thread thread;
    std::shared_ptr<std::atomic<bool>> done;
  };

  Fd listener_;
  std::shared_ptr<Emulator> emulator_;
  std::shared_ptr<RefusalLog> refusals_;
  size_t notif_size_;
  std::atomic<bool> stopping_{false};
  std::atomic<uint64_t> answered_{0};
  std::mutex threads_mu_;
  std::vector<Deferred> deferred_;
  // Network connect and bind (Reply::later): threads kept for the run.
  CaplessPool capless_;
  std::thread receiver_;
};

}  // namespace cordon::supervisor
