// Decides per command whether cordon injects libcordon_preload.so, and sets
// the launch up for it: the preload's environment, its report channel
// (records logged at debug level, tallied, and kept in the audit log), and the library added to the
// read-only set so the loader can map it under Landlock.
#pragma once

#include <memory>
#include <string>

#include "supervisor/audit/audit_log.h"
#include "policy/policy.h"
#include "supervisor/launcher.h"
#include "supervisor/preload_checkin.h"
#include "supervisor/preload_setup.h"

namespace cordon::tools {

// What the run keeps of the preload's account. Each pointer is null when
// nobody reads it.
struct PreloadAccount {
  std::shared_ptr<supervisor::ReportTally> tally;
  // Each exec'd image and whether its preload checked in.
  std::shared_ptr<supervisor::PreloadCheckins> checkins;
  // Why the tool's first image runs without the preload (empty: it runs
  // with it), when someone reads the run's account.
  std::string not_applied;
};

// `req.argv[0]` must be resolved. For a glibc dynamic executable: edits
// `req.env` (caller's CORDON_* dropped, our LD_PRELOAD first) and adds the
// library to `run_policy` as read-only; when someone will read the tool's
// reports (an audit log, --log-level info or lower) it also sets
// `req.on_report`, keeps the tally, and follows every exec (the filter
// notifies execve and execveat; `req.checkins`) to say after the run which
// images ran without the preload. Without a reader no channel is opened:
// the library then only counts, and the tool pays for no record per call
// and no round trip per exec. Otherwise (static, musl, script of one,
// library missing) says at info level that kernel enforcement alone
// applies; the caller's CORDON_* are dropped all the same.
PreloadAccount AttachPreload(policy::Policy& run_policy, supervisor::LaunchRequest& req,
                             std::shared_ptr<supervisor::AuditLog> audit);

// After the run: the tally's summary, and for each exec'd image that ran
// without the preload one info line and one audit record (`preload:
// absent`), then a summary line and record.
void ReportPreload(const PreloadAccount& account, const std::string& cmd,
                   supervisor::AuditLog* audit);

}  // namespace cordon::tools
