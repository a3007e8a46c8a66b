#include "supervisor/approval_gates.h"

#include "supervisor/caps.h"
#include "supervisor/emulator.h"

namespace cordon::supervisor {

ApproverGates::ApproverGates(std::shared_ptr<Approver> approver, std::chrono::milliseconds timeout,
                             std::string tool_argv0, AskFor asks,
                             std::shared_ptr<ExecAdmission> admit_exec)
    : approver_(std::move(approver)),
      asks_(approver_),
      timeout_(timeout),
      argv0_(std::move(tool_argv0)),
      can_(asks),
      admit_exec_(std::move(admit_exec)) {}

bool ApproverGates::CanAsk(Ask what) const {
  switch (what) {
    case Ask::kDelete:
      return can_.deletes;
    case Ask::kWrite:
      return can_.writes;
    case Ask::kBypass:
      return can_.bypasses;
    case Ask::kExec:
      return static_cast<bool>(admit_exec_);
  }
  return false;
}

Status ApproverGates::Question(const std::string& op, const char* refused_as, const Request& req,
                               const policy::DeletePreview& preview,
                               const std::function<bool()>& still_valid) {
  // The question for the approver: the tool's request and what it would change.
  policy::ApprovalRequest ask;
  ask.request_id = req.id;
  ask.preview = preview;
  ask.preview_digest = ask.preview.Digest();
  ask.tool_pid = req.tid;
  ask.tool_argv0 = argv0_;
  JoinedAsks::Answer answer;
  {
    // The approver is reached with the supervisor's rights; what is done
    // after the answer is done as the tool.
    SupervisorPermissions raised;
    answer = asks_.Ask(op, ask, timeout_, still_valid);
  }
  if (answer.outcome != policy::Outcome::kAllowedOnce) {
    return SysError{EACCES, refused_as, policy::OutcomeName(answer.outcome)};
  }
  if (!answer.granted || !still_valid()) {
    return SysError{ESRCH, "the tool is gone", "(stale request)"};
  }
  return Ok();
}

Status ApproverGates::AskDelete(const Request& req, const policy::DeletePreview& preview,
                                const std::function<bool()>& still_valid) {
  return Question(preview.directory ? "rmdir" : "unlink", "approval", req, preview, still_valid);
}

Status ApproverGates::AskWrite(const Request& req, const policy::DeletePreview& preview,
                               const std::function<bool()>& still_valid) {
  return Question("write", "approval", req, preview, still_valid);
}

Status ApproverGates::AskBypass(const Request& req, const policy::DeletePreview& preview,
                                const std::function<bool()>& still_valid) {
  return Question("bypass-" + preview.bypass, "bypass", req, preview, still_valid);
}

Status ApproverGates::AdmitExec() { return admit_exec_ ? admit_exec_->Admit() : Ok(); }

void ApproverGates::Shutdown() { approver_->CancelAll(); }

}  // namespace cordon::supervisor
