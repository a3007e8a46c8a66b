// Run retention at the end of `cordon run` (policy/run_retention.h): once
// the tool has exited and the run's own record, log and journal are
// written, the workspace's older runs are removed as the policy bounds
// them; never before the tool starts (a launch's time is measured), never
// the run that is ending, a run still going, a log the user named with
// --audit FILE, or anything outside cordon's state directories. A removal
// that fails is one warning line; the run's exit status stays the tool's.
//
//   run records and their default logs   runs.keepDays, runs.keepRuns
//                                        (the settings file's, also
//                                        under --policy FILE)
//   a recoverable run's journal          limits.journalDays, and
//                                        runs.keepRuns (past it, it goes
//                                        with its record)
//
// `cordon runs prune` takes the same decision (policy::ChooseRunsToRemove).
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>

#include "policy/policy.h"
#include "supervisor/journal/journal.h"
#include "tools/run_services.h"

namespace cordon::tools {

// Runs one end's pass removes at most, of each kind: a backlog (runs made
// before retention, a lowered bound) goes over the next runs, each paying
// a bounded cost.
inline constexpr std::size_t kMaxRemovedPerRun = 16;

// The bound of the workspace's run records: `p`'s runs section, and under
// --policy FILE (`policy_file` not empty) the settings file's over it:
// retention is the user's preference, not a policy of the run
// (SettingsRunRetention). None, after one warning line, when the settings
// file cannot be read or parsed: no record is removed rather than more
// than the user allows.
std::optional<policy::RunRetention> RunRetentionOf(const policy::Policy& p,
                                                   const std::string& policy_file);

// The pass, for `p`'s workspace (the policy the run was launched with),
// its records bounded by `runs` (none: left alone); `journal`: the run's,
// null when it kept none.
void RetainRuns(const policy::Policy& p, const std::optional<policy::RunRetention>& runs,
                const RunServices& s, const std::shared_ptr<supervisor::Journal>& journal);

}  // namespace cordon::tools
