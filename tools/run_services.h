// What a run keeps beside the sandbox: the audit log (--audit FILE) and the
// approver for sensitive deletes (--approvals, --approval-timeout). Opened
// before the tool starts, so a bad spec or an unwritable log stops the run
// with 125 before anything happens.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "supervisor/approvals/approver.h"
#include "supervisor/audit/audit_log.h"
#include "policy/policy.h"

namespace cordon::tools {

struct RunOptions;

struct RunServices {
  std::shared_ptr<supervisor::AuditLog> audit;     // null without --audit
  std::shared_ptr<supervisor::Approver> approver;  // never null once opened
  std::chrono::milliseconds approval_timeout{60000};
};

// Opens the log (writing the session header) and makes the approver (which
// records to the log). Logs every problem and returns false on error.
bool OpenRunServices(const RunOptions& o, const policy::Policy& p, const std::string& rung,
                     const std::vector<std::string>& argv, RunServices& out);

// Refuses whatever is still pending, records the run's end and fsyncs the
// log. Returns false when the log could not be completed.
bool CloseRunServices(RunServices& s, int exit_status);

}  // namespace cordon::tools
