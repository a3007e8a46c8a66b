// `--approvals tty`: asks the person at the controlling terminal, showing
// the preview. Only the file's name, typed back, allows (once); anything
// else ("y" included), end of input, a timeout or a cancel refuses. The
// tool may share the terminal and print a look-alike prompt over the real
// one: a typed name binds the answer to the file really asked about, and
// names are shown with every control or non-ASCII byte escaped (\xNN), so
// a crafted file name cannot redraw the prompt either. One prompt at a
// time; type-ahead is flushed before each prompt so earlier keystrokes
// cannot answer it.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "supervisor/approvals/approver.h"
#include "base/fd.h"

namespace cordon::supervisor {

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

// What the person types to allow: the file's last path component, escaped
// as shown.
std::string ConfirmationWord(const ApprovalRequest& req);

// `s` with backslash, control and non-ASCII bytes written as \xNN.
std::string Printable(std::string_view s);

}  // namespace cordon::supervisor
