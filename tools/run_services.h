// What a run keeps beside the sandbox: its record and audit log (issue 27
// item 5: by default ${XDG_STATE_HOME:-~/.local/state}/cordon/runs/RUN/,
// --audit FILE elsewhere, --audit none for no log), the host's events
// stream (--events FD|FILE) and the approver for sensitive deletes
// (--approvals, --approval-timeout). Opened before the tool starts, so a
// bad spec or an unwritable log the user named stops the run with 125
// before anything happens.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/fd.h"
#include "policy/policy.h"
#include "policy/run_record.h"
#include "supervisor/approvals/approver.h"
#include "supervisor/audit/audit_log.h"
#include "supervisor/audit/landlock_reader.h"
#include "supervisor/audit/run_records.h"
#include "supervisor/run_observer.h"

namespace cordon::tools {

struct RunOptions;

struct RunServices {
  std::string run_id;                              // always set once opened
  std::shared_ptr<supervisor::AuditLog> audit;     // null with --audit none
  std::shared_ptr<supervisor::Approver> approver;  // never null once opened
  std::chrono::milliseconds approval_timeout{60000};
  std::optional<supervisor::RunDir> run_dir;  // where run.json is (none: no state home)
  policy::RunRecord record;
  Fd events;  // --events: one JSON object a line (-1: none)
  // Landlock's own records of the run's denials (with a log, on the
  // Landlock rung, where the kernel lets cordon read them); null otherwise.
  std::unique_ptr<supervisor::LandlockAuditReader> landlock;
};

// Opens the log (writing the session header), the run record and the
// events stream, and makes the approver (which records to the log). With a
// log and `landlock_abi` >= 7 (0 off the Landlock rung) it also subscribes
// to Landlock's records, and the header says whether they are attached.
// Logs every problem and returns false on error.
bool OpenRunServices(const RunOptions& o, const policy::Policy& p, const std::string& rung,
                     int landlock_abi, const std::vector<std::string>& argv, RunServices& out);

// What the tool may not reach so that the run's record stays true: the
// run records and the log (added to the policy as denied paths).
void DenyRunRecords(const RunServices& s, policy::Policy& p);

// The audit log's observer (decisions and changes become records); null
// without a log.
std::shared_ptr<supervisor::RunObserver> AuditObserver(const RunServices& s);

// Refuses whatever is still pending, records the run's end, fsyncs the log
// and anchors it in the run record and the events stream. Returns false
// when the log could not be completed.
bool CloseRunServices(RunServices& s, int exit_status, bool recoverable);

}  // namespace cordon::tools
