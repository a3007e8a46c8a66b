#include "supervisor/delete_gate.h"

#include <fcntl.h>
#include <unistd.h>

#include <optional>

#include "supervisor/caps.h"
#include "supervisor/delete_preview.h"

namespace cordon::supervisor {

DeleteGate MakeApprovalGate(std::shared_ptr<supervisor::Approver> approver,
                            std::chrono::milliseconds timeout, std::string tool_argv0) {
  return [approver = std::move(approver), timeout, argv0 = std::move(tool_argv0)](
             const Request& req, int parent_fd, const std::string& name,
             const std::string& rel_path, const std::function<bool()>& still_valid,
             std::string& why) -> bool {
    // The preview and the question are the supervisor's: a file the tool
    // may delete but not read is shown too, and the approver is reached
    // with the supervisor's rights. The unlink below is the tool's (the
    // gate runs inside Emulator::Handle). O_NONBLOCK: a FIFO swapped in
    // cannot stall us; MakePreview refuses it.
    std::optional<SupervisorPermissions> raised;
    raised.emplace();
    Fd fd(::openat(parent_fd, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
    if (!fd) {
      why = "delete " + rel_path + ": cannot hold the file for a preview";
      return false;
    }
    auto preview = MakePreview(fd.get(), rel_path);
    if (!preview) {
      why = "delete " + rel_path + ": " + Describe(preview.error()) + " (refused without asking)";
      return false;
    }
    policy::ApprovalRequest ask;
    ask.request_id = req.id;
    ask.preview = preview.value();
    ask.preview_digest = ask.preview.Digest();
    ask.tool_pid = req.tid;
    ask.tool_argv0 = argv0;
    policy::Outcome outcome = approver->Ask(ask, timeout);
    raised.reset();
    if (outcome != policy::Outcome::kAllowedOnce) {
      why = "delete " + rel_path + ": approval " + policy::OutcomeName(outcome);
      return false;
    }
    if (!still_valid()) {
      why = "delete " + rel_path + ": the tool is gone (stale request)";
      return false;
    }
    // No await between this recheck and the unlink.
    if (Status s = Recheck(fd.get(), parent_fd, name.c_str(), ask.preview); !s) {
      why = "delete " + rel_path + ": the file changed after the preview (" + Describe(s.error()) + ")";
      return false;
    }
    if (::unlinkat(parent_fd, name.c_str(), 0) != 0) {
      why = "delete " + rel_path + ": " + Describe(Errno("unlinkat"));
      return false;
    }
    return true;
  };
}

}  // namespace cordon::supervisor
