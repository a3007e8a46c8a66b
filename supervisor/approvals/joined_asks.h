// One question per operation on one file, however often the tool's call
// arrives. A call waiting for its answer is interrupted by a signal (git's
// one-second progress timer, SIGALRM with SA_RESTART); the kernel drops its
// notification and restarts the syscall, which arrives as a new
// notification with a new id. Asking again would show the person a new
// prompt every second and leave the answer to a call that is gone. Instead
// the new call joins the question already pending for the same operation
// on the same file identity and preview (no new prompt, no new "request"
// record; a "joined" one), and the answer goes to whichever call is still
// live: an allowed-once is taken by exactly one of them. An answer that
// finds no live call (the tool was in its signal handler) is kept for
// kKeepUnclaimed so the restarted call gets it instead of a new question.
//
// Thread-safe; Ask blocks (one notify-loop worker thread per call).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "supervisor/approvals/approver.h"

namespace cordon::supervisor {

class JoinedAsks {
 public:
  static constexpr std::chrono::seconds kKeepUnclaimed{10};
  // How often a joined call looks whether it is still live.
  static constexpr std::chrono::milliseconds kLivePoll{250};

  explicit JoinedAsks(std::shared_ptr<Approver> approver) : approver_(std::move(approver)) {}

  struct Answer {
    Outcome outcome = Outcome::kDenied;
    bool granted = false;  // this call holds the allowed-once: perform it
    bool joined = false;   // it joined a question asked for an earlier call
  };

  // `op` names the operation ("delete", "rmdir"); the file identity and the
  // preview come from `req`. `live` is the call's SECCOMP_IOCTL_NOTIF_ID_VALID
  // check. `granted` only for an allowed-once, to a live call, once.
  Answer Ask(const std::string& op, const ApprovalRequest& req, std::chrono::milliseconds timeout,
             const std::function<bool()>& live);

  // Questions pending or kept (for tests).
  size_t size();

 private:
  struct Question {
    bool asked = false;
    uint64_t asked_id = 0;
    bool answered = false;
    Outcome outcome = Outcome::kDenied;
    bool delivered = false;  // a live call received the answer
    int inside = 0;          // calls in Ask for it
    std::chrono::steady_clock::time_point answered_at;
  };
  void SweepLocked(std::chrono::steady_clock::time_point now);

  std::shared_ptr<Approver> approver_;
  std::mutex mu_;
  std::condition_variable answered_;
  std::map<std::string, std::shared_ptr<Question>> questions_;
};

}  // namespace cordon::supervisor
