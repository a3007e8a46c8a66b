// The gate a sensitive delete passes: preview from a held fd, one
// allowed-once answer from the approver for that request id and preview
// digest, then a recheck of identity and content and unlinkat with nothing
// in between. Anything else (deny, timeout, disconnect, cancel, stale,
// shutdown, a changed file) refuses. An empty directory (rmdir) is asked
// about the same way, with a preview of its path and identity. A call the
// kernel restarts after a signal joins the question already pending for it
// (supervisor/approvals/joined_asks.h). Runs on the notify loop's worker
// thread for that request; thread-safe.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "supervisor/approvals/approver.h"
#include "supervisor/emulator.h"

namespace cordon::supervisor {

// The gates of one run share its questions (a restarted call joins the
// one pending), so they are made together.
struct ApprovalGates {
  DeleteGate del;
  // A write in place a recoverable run's journal cannot keep: a preview of
  // path, size and identity, one allowed-once answer, then a recheck of
  // the identity on the fd the tool is to get.
  WriteGate write;
  // A bypass request (policy/bypass.h): one allowed-once answer for the
  // preview the emulator made; the emulator rechecks and performs.
  BypassGate bypass;
};

ApprovalGates MakeApprovalGates(std::shared_ptr<supervisor::Approver> approver,
                                std::chrono::milliseconds timeout, std::string tool_argv0);

}  // namespace cordon::supervisor
