// `--approvals tty`: asks the person at the controlling terminal, showing
// the preview. Only "y" or "yes" allows (once); anything else, end of
// input, a timeout or a cancel refuses. One prompt at a time; type-ahead is
// flushed before each prompt so earlier keystrokes cannot answer it.
#pragma once

#include <memory>
#include <mutex>
#include <string>

#include "policy/approval.h"
#include "policy/fd.h"

namespace cordon::policy {

class TtyApprover final : public Approver {
 public:
  explicit TtyApprover(Fd tty) : tty_(std::move(tty)) {}
  // Opens /dev/tty (O_RDWR | O_CLOEXEC | O_NOCTTY); null with `error` set.
  static std::unique_ptr<TtyApprover> OpenControllingTty(std::string* error);
  const char* Name() const override { return "tty"; }

 protected:
  Outcome Decide(const ApprovalRequest& req, std::chrono::steady_clock::time_point deadline,
                 int cancel_fd, std::string* note) override;

 private:
  Fd tty_;
  std::timed_mutex prompt_;
};

// The text shown for a request (also what tests match against).
std::string PromptText(const ApprovalRequest& req);

}  // namespace cordon::policy
