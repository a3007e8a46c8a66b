// `--approvals socket:PATH`: a host program (`cordon policyd`, an IDE's
// approval bridge) answers over a Unix SOCK_SEQPACKET socket. One connection
// per request, so a request's fate never depends on another's: connect,
// hello, request, then wait for the answer, a cancel or the deadline.
#pragma once

#include <string>

#include "supervisor/approvals/approver.h"

namespace cordon::supervisor {

class SocketApprover final : public Approver {
 public:
  explicit SocketApprover(std::string socket_path) : path_(std::move(socket_path)) {}
  const char* Name() const override { return "socket"; }

 protected:
  Outcome Decide(const ApprovalRequest& req, std::chrono::steady_clock::time_point deadline,
                 int cancel_fd, std::string* note) override;

 private:
  std::string path_;
};

}  // namespace cordon::supervisor
