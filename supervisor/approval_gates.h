// ApproverGates: the run's RunGates backed by its approver (--approvals:
// tty, rules, socket, policyd; supervisor/approvals/). Each question is
// one ApprovalRequest for the tool's request id and the preview the
// emulator made; only an allowed-once for that id and digest, given to a
// call still live, is Ok. Anything else (deny, timeout, disconnect,
// cancel, stale, shutdown) refuses. A call the kernel restarts after a
// signal joins the question already pending for it
// (supervisor/approvals/joined_asks.h). The approver is reached with the
// supervisor's rights (SupervisorPermissions), on the notify loop's
// deferred worker for that request. Thread-safe.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "supervisor/approvals/approver.h"
#include "supervisor/approvals/joined_asks.h"
#include "supervisor/run_gates.h"

namespace cordon::supervisor {

// Which questions the run may put (the policy's word, ConfigureDecisions
// in tools/run_command.cc): sensitive.delete "ask" (deletes); "ask" or
// "recoverable" (writes in place the journal cannot keep); an approver
// who can answer, not "deny" (bypasses, when sandbox.allowBypass).
struct AskFor {
  bool deletes = false;
  bool writes = false;
  bool bypasses = false;
};

class ApproverGates final : public RunGates {
 public:
  // `admit_exec`, when set, is asked before each exec the allowlist admits
  // (cordon grep's tree check: ripgrep starts only once it has passed).
  ApproverGates(std::shared_ptr<Approver> approver, std::chrono::milliseconds timeout,
                std::string tool_argv0, AskFor asks,
                std::shared_ptr<ExecAdmission> admit_exec = nullptr);

  bool CanAsk(Ask what) const override;
  Status AskDelete(const Request& req, const policy::DeletePreview& preview,
                   const std::function<bool()>& still_valid) override;
  Status AskWrite(const Request& req, const policy::DeletePreview& preview,
                  const std::function<bool()>& still_valid) override;
  Status AskBypass(const Request& req, const policy::DeletePreview& preview,
                   const std::function<bool()>& still_valid) override;
  Status AdmitExec() override;
  bool SeesExecs() const override { return false; }
  void ExecSeen(pid_t, const std::string&) override {}
  // Cancels every pending question (Approver::CancelAll).
  void Shutdown() override;

 private:
  // `op` names the operation for the joined questions and the audit
  // ("unlink", "write", "bypass-open"); `refused_as` the refusal's word.
  Status Question(const std::string& op, const char* refused_as, const Request& req,
                  const policy::DeletePreview& preview, const std::function<bool()>& still_valid);

  std::shared_ptr<Approver> approver_;
  JoinedAsks asks_;
  std::chrono::milliseconds timeout_;
  std::string argv0_;
  AskFor can_;
  std::shared_ptr<ExecAdmission> admit_exec_;
};

}  // namespace cordon::supervisor
