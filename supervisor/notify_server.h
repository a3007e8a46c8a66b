// The interface between the launcher and whatever answers the tool's
// seccomp notifications (notify_loop.h implements it). The server runs on
// threads of its own from the moment it is made.
#pragma once

namespace cordon::supervisor {

class NotifyServer {
 public:
  // Returns once no task uses the filter any more: the launcher kills and
  // reaps the tool first.
  virtual ~NotifyServer() = default;
  // The tool is gone or cordon is stopping: pending approvals return, and
  // every notification from now on is answered with EACCES.
  virtual void Shutdown() = 0;
};

}  // namespace cordon::supervisor
