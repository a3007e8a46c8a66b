#include "supervisor/delete_gate.h"

#include <fcntl.h>
#include <seccomp.h>
#include <unistd.h>

#include <optional>

#include "supervisor/approvals/joined_asks.h"
#include "supervisor/caps.h"
#include "supervisor/delete_preview.h"

namespace cordon::supervisor {
namespace {

// rmdir(2), unlinkat(2) with AT_REMOVEDIR: the policy admitted it for an
// empty directory, and only a directory is previewed and removed for it.
bool WantsDirectory(const Request& req) {
  if (req.nr == SCMP_SYS(rmdir)) return true;
  return req.nr == SCMP_SYS(unlinkat) && (req.args[2] & AT_REMOVEDIR) != 0;
}

// The question for the approver: the tool's request and what it would change.
policy::ApprovalRequest Question(const Request& req, const policy::DeletePreview& preview,
                                 const std::string& argv0) {
  policy::ApprovalRequest ask;
  ask.request_id = req.id;
  ask.preview = preview;
  ask.preview_digest = ask.preview.Digest();
  ask.tool_pid = req.tid;
  ask.tool_argv0 = argv0;
  return ask;
}

DeleteGate MakeDeleteGate(std::shared_ptr<JoinedAsks> asks, std::chrono::milliseconds timeout,
                          std::string tool_argv0) {
  return [asks, timeout, argv0 = std::move(tool_argv0)](
             const Request& req, int parent_fd, const std::string& name,
             const std::string& rel_path, const std::function<bool()>& still_valid,
             std::string& why) -> bool {
    const bool dir = WantsDirectory(req);
    // The preview and the question are the supervisor's: a file the tool
    // may delete but not read is shown too, and the approver is reached
    // with the supervisor's rights. The unlink below is the tool's (the
    // gate runs inside Emulator::Handle). O_NONBLOCK: a FIFO swapped in
    // cannot stall us; MakePreview refuses it.
    std::optional<SupervisorPermissions> raised;
    raised.emplace();
    Fd fd(::openat(parent_fd, name.c_str(),
                   O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | (dir ? O_DIRECTORY : 0)));
    if (!fd) {
      why = "delete " + rel_path + ": cannot hold the file for a preview";
      return false;
    }
    auto preview = dir ? MakeDirPreview(fd.get(), rel_path) : MakePreview(fd.get(), rel_path);
    if (!preview) {
      why = "delete " + rel_path + ": " + Describe(preview.error()) + " (refused without asking)";
      return false;
    }
    const policy::ApprovalRequest ask = Question(req, preview.value(), argv0);
    // A call restarted after a signal joins the question its first try
    // asked; the answer goes to the live one (joined_asks.h).
    JoinedAsks::Answer answer = asks->Ask(dir ? "rmdir" : "unlink", ask, timeout, still_valid);
    raised.reset();
    if (answer.outcome != policy::Outcome::kAllowedOnce) {
      // The one line the user sees for it (RefusalLog, with the hint).
      why = "delete of " + rel_path + " (existed before the run): approval " +
            policy::OutcomeName(answer.outcome);
      return false;
    }
    if (!answer.granted || !still_valid()) {
      why = "delete " + rel_path + ": the tool is gone (stale request)";
      return false;
    }
    // No await between this recheck and the unlink.
    if (Status s = Recheck(fd.get(), parent_fd, name.c_str(), ask.preview); !s) {
      why = "delete " + rel_path + ": the file changed after the preview (" + Describe(s.error()) + ")";
      return false;
    }
    if (::unlinkat(parent_fd, name.c_str(), dir ? AT_REMOVEDIR : 0) != 0) {
      why = "delete " + rel_path + ": " + Describe(Errno("unlinkat"));
      return false;
    }
    return true;
  };
}

WriteGate MakeWriteGate(std::shared_ptr<JoinedAsks> asks, std::chrono::milliseconds timeout,
                        std::string tool_argv0) {
  return [asks, timeout, argv0 = std::move(tool_argv0)](
             const Request& req, int fd, const std::string& rel_path,
             const std::function<bool()>& still_valid, std::string& why) -> bool {
    std::optional<SupervisorPermissions> raised;
    raised.emplace();
    auto preview = MakeWritePreview(fd, rel_path);
    if (!preview) {
      why += " (" + Describe(preview.error()) + ", refused without asking)";
      return false;
    }
    const policy::ApprovalRequest ask = Question(req, preview.value(), argv0);
    JoinedAsks::Answer answer = asks->Ask("write", ask, timeout, still_valid);
    raised.reset();
    if (answer.outcome != policy::Outcome::kAllowedOnce) {
      why += ": approval " + std::string(policy::OutcomeName(answer.outcome));
      return false;
    }
    if (!answer.granted || !still_valid()) {
      why += ": the tool is gone (stale request)";
      return false;
    }
    if (Status s = Recheck(fd, -1, nullptr, ask.preview); !s) {
      why += ": the file changed after the preview (" + Describe(s.error()) + ")";
      return false;
    }
    return true;
  };
}

BypassGate MakeBypassGate(std::shared_ptr<JoinedAsks> asks, std::chrono::milliseconds timeout,
                          std::string tool_argv0) {
  return [asks, timeout, argv0 = std::move(tool_argv0)](
             const Request& req, const policy::DeletePreview& preview,
             const std::function<bool()>& still_valid, std::string& why) -> bool {
    const policy::ApprovalRequest ask = Question(req, preview, argv0);
    JoinedAsks::Answer answer;
    {
      // The approver is reached with the supervisor's rights, as for a delete.
      SupervisorPermissions raised;
      answer = asks->Ask("bypass-" + preview.bypass, ask, timeout, still_valid);
    }
    if (answer.outcome != policy::Outcome::kAllowedOnce) {
      why += ": bypass " + std::string(policy::OutcomeName(answer.outcome));
      return false;
    }
    if (!answer.granted || !still_valid()) {
      why += ": the tool is gone (stale request)";
      return false;
    }
    return true;
  };
}

}  // namespace

ApprovalGates MakeApprovalGates(std::shared_ptr<supervisor::Approver> approver,
                                std::chrono::milliseconds timeout, std::string tool_argv0) {
  auto asks = std::make_shared<JoinedAsks>(std::move(approver));
  return {MakeDeleteGate(asks, timeout, tool_argv0), MakeWriteGate(asks, timeout, tool_argv0),
          MakeBypassGate(asks, timeout, tool_argv0)};
}

}  // namespace cordon::supervisor
