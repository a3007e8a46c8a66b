// A run's record (issue 27 item 5): what ran, where, how it ended, where
// its audit log is and which stretch of that log is its own (the anchor,
// policy/audit_record.h). Written when the run starts and again when it
// ends, outside the log and out of the tool's reach
// (${XDG_STATE_HOME:-~/.local/state}/cordon/runs/RUN/run.json), so that
// `cordon audit verify` can tell a log cut short or written again whole,
// and `cordon runs list|show` can find every run. Pure: text in, records out.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "policy/audit_record.h"
#include "policy/journal_run.h"

namespace cordon::policy {

struct RunRecord {
  RunMeta meta;
  std::string audit_path;             // absolute; empty: --audit none
  std::optional<AuditAnchor> anchor;  // set when the run ended with its log whole
  std::optional<int64_t> ended_s;     // absent: the run has not ended (or cordon was killed)
  int exit_status = 0;
  bool recoverable = false;           // its changes went to a journal (cordon undo)
};

std::string RunRecordJson(const RunRecord& r);
std::optional<RunRecord> ParseRunRecord(std::string_view text, std::string* error);

}  // namespace cordon::policy
