// Decides per command whether cordon injects libcordon_preload.so, and sets
// the launch up for it: the preload's environment, its report channel
// (records logged at debug level, tallied, and kept in the audit log), and the library added to the
// read-only set so the loader can map it under Landlock.
#pragma once

#include <memory>

#include "supervisor/audit/audit_log.h"
#include "policy/policy.h"
#include "supervisor/launcher.h"
#include "supervisor/preload_setup.h"

namespace cordon::tools {

// `req.argv[0]` must be resolved. For a glibc dynamic executable: edits
// `req.env` (caller's CORDON_* dropped, our LD_PRELOAD first) and adds the
// library to `run_policy` as read-only; when someone will read the tool's
// reports (an audit log, --log-level info or lower) it also sets
// `req.on_report` and returns the tally to summarise after the run.
// Without a reader no channel is opened: the library then only counts, and
// the tool pays for no record per call. Otherwise (static, musl, script of
// one, library missing) says at info level that kernel enforcement alone
// applies and returns null; the caller's CORDON_* are dropped all the same.
std::shared_ptr<supervisor::ReportTally> AttachPreload(policy::Policy& run_policy,
                                                       supervisor::LaunchRequest& req,
                                                       std::shared_ptr<supervisor::AuditLog> audit);

}  // namespace cordon::tools
