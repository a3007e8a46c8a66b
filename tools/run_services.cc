#include "tools/run_services.h"

#include <spdlog/spdlog.h>

#include <cmath>

#include "supervisor/approvals/make_approver.h"
#include "tools/run_command.h"

namespace cordon::tools {

bool OpenRunServices(const RunOptions& o, const policy::Policy& p, const std::string& rung,
                     const std::vector<std::string>& argv, RunServices& out) {
  if (!(o.approval_timeout_s > 0) || o.approval_timeout_s > 86400 ||
      !std::isfinite(o.approval_timeout_s)) {
    spdlog::error("--approval-timeout must be between 0 and 86400 seconds");
    return false;
  }
  // Rounded to the nearest millisecond (the value is positive and bounded
  // above); no libm call, so the binary does not load libm at every launch.
  out.approval_timeout =
      std::chrono::milliseconds(static_cast<int64_t>(o.approval_timeout_s * 1000 + 0.5));
  std::string error;
  std::unique_ptr<supervisor::Approver> approver = supervisor::MakeApprover(o.approvals, &error);
  if (!approver) {
    spdlog::error("{}", error);
    return false;
  }
  out.approver = std::move(approver);
  if (!o.audit.empty()) {
    auto log = supervisor::AuditLog::Open(o.audit);
    if (!log) {
      spdlog::error("--audit {}: {}", o.audit, Describe(log.error()));
      return false;
    }
    out.audit = std::move(log.value());
    nlohmann::json header = policy::SessionHeader(p, rung, argv);
    header.update(o.audit_header);
    header["approvals"] = out.approver->Name();
    header["approval_timeout_ms"] = out.approval_timeout.count();
    if (!out.audit->Append("header", std::move(header)).ok()) {
      spdlog::error("--audit {}: cannot write the session header", o.audit);
      return false;
    }
    out.approver->SetAuditLog(out.audit);
  }
  return true;
}

bool CloseRunServices(RunServices& s, int exit_status) {
  if (s.approver) s.approver->CancelAll();
  if (!s.audit) return true;
  bool ok = s.audit->Append("end", {{"exit_status", exit_status}}).ok();
  Status closed = s.audit->Close();
  if (!ok || !closed.ok()) {
    spdlog::error("--audit {}: the log could not be completed", s.audit->path());
    return false;
  }
  return true;
}

}  // namespace cordon::tools
