// The interface between the launcher's event loop and whatever answers the
// tool's seccomp notifications (notify_loop.h implements it).
#pragma once

namespace cordon::supervisor {

class NotifyServer {
 public:
  virtual ~NotifyServer() = default;
  // The fd the launcher polls for readability (the seccomp listener).
  virtual int PollFd() const = 0;
  // Receives and answers what is ready; never blocks on a slow decision.
  virtual void OnReadable() = 0;
  // The tool is gone or cordon is stopping: answer everything pending with
  // EACCES and stop.
  virtual void Shutdown() = 0;
};

}  // namespace cordon::supervisor
