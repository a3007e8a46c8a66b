// RunGates: what a run's decisions may ask of someone outside the tool, and
// what the run is told of the tool's execs. One interface the emulator asks
// (the seam a test fakes: tests/supervisor/emulator_gates_test.cc), beside
// the RunObserver it tells (audit, reports). What is decided stays the
// policy's (policy::Decide, supervisor/rules.h); a gate only answers the
// question the emulator puts, with the preview the emulator made from what
// it holds, and the emulator rechecks and performs.
//
// The implementations: ApproverGates (supervisor/approval_gates.h: the
// run's approver, one allowed-once per request id and preview digest) and
// DenyGates (nobody to ask: every question refused, every exec admitted).
//
// Errors, one dialect: a refused question is an error whose `op` and
// `detail`, read together (GateRefusal), are what the refusal says after
// the operation ("approval denied", "bypass timeout", "the tool is gone
// (stale request)"); `err` is EACCES for an answer other than allowed-once
// and ESRCH for a call that is gone.
//
// Thread-safe: the Ask methods block (a person may be asked) and run on the
// notify loop's deferred workers, several at once.
#pragma once

#include <sys/types.h>

#include <functional>
#include <memory>
#include <string>

#include "base/result.h"
#include "policy/approval.h"

namespace cordon::supervisor {

struct Request;

// What an exec waits for before the allowlist's admission stands: cordon
// grep's tree check (tools/grep_command.cc), whose verdict ripgrep may not
// start before. Admit may block until the verdict is in; an error refuses
// the exec (EACCES), and the refusal is the admission's owner to report.
class ExecAdmission {
 public:
  virtual ~ExecAdmission() = default;
  virtual Status Admit() = 0;
};

// What a run may be asked about.
enum class Ask {
  kDelete,  // a sensitive delete (sensitive.delete "ask")
  kWrite,   // a write in place a recoverable run's journal cannot keep
  kBypass,  // one operation outside the policy (sandbox.allowBypass, policy/bypass.h)
  kExec,    // an exec waits for AdmitExec (cordon grep's tree check)
};

class RunGates {
 public:
  virtual ~RunGates() = default;

  // Whether this run has someone to ask `what`. Without it no question is
  // put and the refusal stands (the emulator tests this before it offers
  // anything: policy::Settings::can_ask, policy::BypassFacts::can_ask).
  virtual bool CanAsk(Ask what) const = 0;

  // One allowed-once answer for `preview` (made by the emulator from the fd
  // it holds) for the call `req` while `still_valid` (its
  // SECCOMP_IOCTL_NOTIF_ID_VALID) holds. Ok only then: the caller rechecks
  // the identity on what it holds, with nothing in between, and performs.
  // A restarted call joins the question pending for its first try
  // (supervisor/approvals/joined_asks.h).
  virtual Status AskDelete(const Request& req, const policy::DeletePreview& preview,
                           const std::function<bool()>& still_valid) = 0;
  virtual Status AskWrite(const Request& req, const policy::DeletePreview& preview,
                          const std::function<bool()>& still_valid) = 0;
  virtual Status AskBypass(const Request& req, const policy::DeletePreview& preview,
                           const std::function<bool()>& still_valid) = 0;

  // With CanAsk(kExec): asked after the allowlist admits an exec (may
  // block); an error refuses it with EACCES.
  virtual Status AdmitExec() = 0;
  // Whether ExecSeen wants to hear of execs (the exec is then notified).
  virtual bool SeesExecs() const = 0;
  // An exec let through whose file exists as an executable regular file
  // (one expected to succeed): the caller's pid (its thread group) and the
  // path as resolved. Told before the reply, so it sees the exec before the
  // new image can run (preload_checkin.h).
  virtual void ExecSeen(pid_t pid, const std::string& path) = 0;

  // The supervisor stops: questions pending must return now (kShutdown).
  virtual void Shutdown() = 0;
};

// Nobody to ask: CanAsk is false but for nothing, a question put anyway is
// refused, every exec is admitted and none is heard of. The emulator's
// default.
class DenyGates : public RunGates {
 public:
  bool CanAsk(Ask) const override { return false; }
  Status AskDelete(const Request&, const policy::DeletePreview&,
                   const std::function<bool()>&) override {
    return Refused();
  }
  Status AskWrite(const Request&, const policy::DeletePreview&,
                  const std::function<bool()>&) override {
    return Refused();
  }
  Status AskBypass(const Request&, const policy::DeletePreview&,
                   const std::function<bool()>&) override {
    return Refused();
  }
  Status AdmitExec() override { return Ok(); }
  bool SeesExecs() const override { return false; }
  void ExecSeen(pid_t, const std::string&) override {}
  void Shutdown() override {}

 private:
  static SysError Refused() { return SysError{EACCES, "nobody to ask", ""}; }
};

// `inner` (null: DenyGates), with `seen` told of each exec as well, after
// inner's ExecSeen: the launcher's preload check-ins (preload_checkin.h).
std::shared_ptr<RunGates> AlsoSeeingExecs(std::shared_ptr<RunGates> inner,
                                          std::function<void(pid_t, const std::string&)> seen);

// The words a refused question adds to its refusal: "approval denied".
inline std::string GateRefusal(const SysError& e) {
  return e.detail.empty() ? std::string(e.op) : std::string(e.op) + " " + e.detail;
}

}  // namespace cordon::supervisor
