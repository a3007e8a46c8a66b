#include "supervisor/approvals/tty_approver.h"

#include <fcntl.h>
#include <termios.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>

namespace cordon::supervisor {

std::unique_ptr<TtyApprover> TtyApprover::OpenControllingTty(std::string* error) {
  Fd fd(::open("/dev/tty", O_RDWR | O_CLOEXEC | O_NOCTTY));
  if (!fd) {
    *error = std::string("/dev/tty: ") + std::strerror(errno);
    return nullptr;
  }
  return std::make_unique<TtyApprover>(std::move(fd));
}

std::string Printable(std::string_view s) {
  std::string out;
  for (unsigned char c : s) {
    if (c >= 0x20 && c < 0x7f && c != '\\') {
      out += static_cast<char>(c);
    } else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    }
  }
  return out;
}

std::string ConfirmationWord(const ApprovalRequest& req) {
  const std::string& rel = req.preview.rel_path;
  return Printable(rel.substr(rel.rfind('/') + 1));
}

std::string PromptText(const ApprovalRequest& req) {
  const DeletePreview& p = req.preview;
  if (p.directory) {
    return "\ncordon: " + Printable(req.tool_argv0) + " (pid " + std::to_string(req.tool_pid) +
           ") wants to remove an empty directory that existed before the run:\n" +
           "  path    " + Printable(p.rel_path) + "/\n" + "  inode   " + std::to_string(p.dev) +
           ":" + std::to_string(p.ino) + "\n" + "  request " + std::to_string(req.request_id) +
           "  preview " + req.preview_digest + "\n" +
           "To remove it this once, type its name (" + ConfirmationWord(req) +
           "); anything else keeps it: ";
  }
  if (!p.bypass.empty()) {
    const std::string op = policy::BypassOperation(p);
    return "\ncordon: " + Printable(req.tool_argv0) + " (pid " + std::to_string(req.tool_pid) +
           ") asks to run ONE operation OUTSIDE the sandbox policy (sandbox.allowBypass):\n" +
           "  op      " + op + "\n" + "  refused " + Printable(p.bypass_rule) + "\n" +
           "  path    " + Printable(p.rel_path) + "\n" +
           (p.ino == 0 ? std::string("  (does not exist yet)\n")
                       : "  size    " + std::to_string(p.size) + " bytes\n" + "  inode   " +
                             std::to_string(p.dev) + ":" + std::to_string(p.ino) + "\n") +
           "  request " + std::to_string(req.request_id) + "  preview " + req.preview_digest +
           "\n" + "To run it this once, bypassed, type its name (" + ConfirmationWord(req) +
           "); anything else keeps it refused: ";
  }
  if (p.write_in_place) {
    return "\ncordon: " + Printable(req.tool_argv0) + " (pid " + std::to_string(req.tool_pid) +
           ") wants to write in place to a file that existed before the run, too large for the "
           "run's journal to keep a copy of (limits.journalCopyBytes):\n" +
           "  path    " + Printable(p.rel_path) + "\n" + "  size    " + std::to_string(p.size) +
           " bytes\n" + "  inode   " + std::to_string(p.dev) + ":" + std::to_string(p.ino) + "\n" +
           "  request " + std::to_string(req.request_id) + "  preview " + req.preview_digest +
           "\n" + "To let it write this once (undo cannot take it back), type its name (" +
           ConfirmationWord(req) + "); anything else refuses: ";
  }
  return "\ncordon: " + Printable(req.tool_argv0) + " (pid " + std::to_string(req.tool_pid) +
         ") wants to delete a file that existed before the run:\n" + "  path    " +
         Printable(p.rel_path) + "\n" + "  size    " + std::to_string(p.size) + " bytes\n" +
         "  sha256  " + p.sha256 + "\n" + "  inode   " + std::to_string(p.dev) + ":" +
         std::to_string(p.ino) + "\n" + "  request " + std::to_string(req.request_id) +
         "  preview " + req.preview_digest + "\n" + "To delete it this once, type its name (" +
         ConfirmationWord(req) + "); anything else keeps it: ";
}

Outcome TtyApprover::Decide(const ApprovalRequest& req,
                            std::chrono::steady_clock::time_point deadline, int cancel_fd,
                            std::string* note) {
  // Wait for our turn at the terminal without ignoring cancel or deadline.
  for (;;) {
    if (prompt_.try_lock_for(std::chrono::milliseconds(50))) break;
    int w = WaitReadable(-1, cancel_fd, std::chrono::steady_clock::now());
    if (w == 2) return Outcome::kCancelled;
    if (std::chrono::steady_clock::now() >= deadline) {
      *note = "no answer before the deadline";
      return Outcome::kTimeout;
    }
  }
  std::unique_lock<std::timed_mutex> turn(prompt_, std::adopt_lock);
  (void)::tcflush(tty_.get(), TCIFLUSH);
  std::string text = PromptText(req);
  if (::write(tty_.get(), text.data(), text.size()) < 0) {
    *note = "cannot write to the terminal";
    return Outcome::kDisconnected;
  }
  std::string line;
  while (line.find('\n') == std::string::npos && line.size() < 2048) {
    int w = WaitReadable(tty_.get(), cancel_fd, deadline);
    if (w == 0 || w == 2) {
      const char* msg = w == 0 ? "\n(timed out: not deleted)\n" : "\n(withdrawn: not deleted)\n";
      (void)!::write(tty_.get(), msg, std::strlen(msg));
      if (w == 0) *note = "no answer before the deadline";
      return w == 0 ? Outcome::kTimeout : Outcome::kCancelled;
    }
    char buf[64];
    ssize_t n = w == 1 ? ::read(tty_.get(), buf, sizeof buf) : -1;
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      *note = "terminal closed";
      return Outcome::kDisconnected;
    }
    line.append(buf, static_cast<size_t>(n));
  }
  line = line.substr(0, line.find('\n'));
  if (!line.empty() && line.back() == '\r') line.pop_back();
  if (line == ConfirmationWord(req)) {
    *note = "allowed at the terminal";
    return Outcome::kAllowedOnce;
  }
  *note = "refused at the terminal";
  return Outcome::kDenied;
}

}  // namespace cordon::supervisor
