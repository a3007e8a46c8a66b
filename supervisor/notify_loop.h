// NotifyLoop: answers the tool's seccomp user notifications. One notification
// is received per readable event on the listener; fast decisions are made and
// answered inline, a decision that may wait for a person (a sensitive delete
// with an approver) runs on its own thread so it never blocks the other
// threads or processes of the tool. Answers: an errno, a result, an fd
// installed with SECCOMP_IOCTL_NOTIF_ADDFD + SECCOMP_ADDFD_FLAG_SEND, or (for
// execve only) CONTINUE. SECCOMP_IOCTL_NOTIF_ID_VALID is checked after every
// read of the tool's memory. Shutdown() answers everything pending with EACCES.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "supervisor/emulator.h"
#include "supervisor/notify_server.h"

namespace cordon::supervisor {

// "openat", "unlinkat"... for logs and the audit trail.
const char* SyscallName(int nr);

class NotifyLoop : public NotifyServer {
 public:
  NotifyLoop(int listener, std::shared_ptr<Emulator> emulator, bool threaded_blocking);
  ~NotifyLoop() override;

  int PollFd() const override { return listener_; }
  void OnReadable() override;
  void Shutdown() override;

  uint64_t answered() const { return answered_.load(); }

 private:
  void Answer(const Request& req, Reply reply);

  int listener_;
  std::shared_ptr<Emulator> emulator_;
  bool threaded_blocking_;
  size_t notif_size_;
  std::atomic<uint64_t> answered_{0};
  std::mutex threads_mu_;
  std::vector<std::thread> threads_;
};

}  // namespace cordon::supervisor
