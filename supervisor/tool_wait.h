// Waiting for the tool (supervisor/launcher.cc): the signals cordon is
// sent meanwhile go to the tool's process group, the tool's first process
// is awaited with the preload's reports drained, and what the tool leaves
// behind is killed. Not thread-safe: the launching thread's.
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <cstddef>
#include <functional>

#include "base/fd.h"
#include "supervisor/child.h"
#include "supervisor/launcher.h"
#include "supervisor/report_channel.h"

namespace cordon::supervisor {

// While the tool runs, the signals that would end cordon go to the tool's
// process group instead (Supervise reads them from fd()); cordon is the
// subreaper of what the tool leaves behind. The mask is restored when this
// goes.
// Blocks the signals cordon forwards to the tool (SIGINT, SIGTERM, SIGHUP,
// SIGQUIT) in the calling thread, and so in every thread it starts from
// then on. Called before a run starts its first thread: a signal is
// process-directed, and one that lands on a thread without the block takes
// its default action, killing cordon and leaving the tool running.
void BlockForwardedSignals();

class ForwardedSignals {
 public:
  ForwardedSignals();
  ForwardedSignals(const ForwardedSignals&) = delete;
  ForwardedSignals& operator=(const ForwardedSignals&) = delete;
  ~ForwardedSignals();
  int fd() const { return fd_.get(); }

 private:
  sigset_t old_mask_;
  Fd fd_;
};

// How the tool's first process ended, and whether its set-up failed.
struct Waited {
  ChildFailure failure{};
  bool failed = false;
  int exit_code = kExitCordonError;
};

// Waits for the tool's first process, forwarding the signals cordon gets to
// its process group and draining the preload's reports meanwhile.
Waited Supervise(pid_t pid, int pidfd, int sigfd, Fd status_read, ReportChannel& reports,
                 const std::function<void(const void*, size_t)>& on_report);

// Kills every process left of the tool: its process group, then anything
// that escaped it with setsid (reparented to us, the subreaper), until no
// child is left. Returns how many of the tool's it reaped (not cordon's own
// helpers, which stay in its session).
int KillRemaining(pid_t pgid);

}  // namespace cordon::supervisor
