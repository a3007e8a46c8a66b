#include "tools/run_retention.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <ctime>
#include <string>
#include <system_error>
#include <vector>

#include "policy/run_retention.h"
#include "supervisor/audit/run_index.h"
#include "supervisor/journal/journal_place.h"
#include "supervisor/journal/run_reader.h"
#include "tools/settings_file.h"

namespace cordon::tools {
namespace {

// Removes run `id`'s journal in `place`, naming it (what it kept of the
// user's files can no longer be brought back). False when it has none.
bool RemoveJournal(const supervisor::JournalPlace& place, const std::string& id,
                   const std::string& why, RetentionLines& say) {
  Status s = supervisor::RemoveRun(place, id);
  if (s) {
    say.Say(spdlog::level::warn, "removed the journal of run {} ({}): it can no longer be undone",
            id, why);
    return true;
  }
  if (s.error().err == ENOENT) return false;
  if (s.error().err == EBUSY) {
    say.Say(spdlog::level::debug, "{}", Describe(s.error()));
  } else {
    say.Say(spdlog::level::warn, "run {}: its journal is {} but could not be removed: {}", id, why,
            Describe(s.error()));
  }
  return true;
}

// limits.journalDays: this workspace's journals in `place` older than that.
// A journal whose name says it began after the cutoff is not opened, so the
// cost is a listing, not a read of every run's meta.json.
void RemoveOldJournals(const supervisor::JournalPlace& place, const std::string& workspace,
                       std::size_t days, const std::string& current, int64_t now,
                       RetentionLines& say) {
  const int64_t max_age = static_cast<int64_t>(days) * 86400;
  const std::vector<supervisor::RunSummary> listed = supervisor::ListRuns(place, now - max_age + 1);
  std::vector<policy::RunFact> facts;  // viewing `listed`
  for (const supervisor::RunSummary& r : listed) {
    if (r.meta && r.meta->workspace == workspace) facts.push_back({r.id, r.meta->started_s});
  }
  for (const policy::RunToRemove& r : policy::ChooseRunsToRemove(
           std::move(facts), {max_age, std::nullopt}, now, current, kMaxRemovedPerRun)) {
    const auto started = policy::RunIdStartedS(r.id);
    const int64_t age_days = started ? (now - *started) / 86400 : static_cast<int64_t>(days);
    RemoveJournal(
        place, r.id,
        std::to_string(age_days) + " days old, limits.journalDays = " + std::to_string(days), say);
  }
}

// runs.keepDays, runs.keepRuns: the workspace's run records (and, past the
// count, their journals).
void RetainRecords(const policy::Policy& p, const policy::RunRetention& runs, const RunServices& s,
                   int64_t now, RetentionLines& say) {
  if (!s.run_dir || runs.off()) return;
  supervisor::RetainedRecords kept = supervisor::RetainRunRecords(
      s.run_dir->root.get(), p.workspace, s.run_id, policy::BoundOf(runs), now, kMaxRemovedPerRun);
  if (!kept.skipped.empty()) {
    say.Say(spdlog::level::info, "run retention skipped this time: {}", kept.skipped);
    return;
  }
  say.Say(spdlog::level::debug,
          "run retention: {} record(s) removed, {} kept while their runs go, {} indexed",
          kept.removed.size(), kept.still_going, kept.indexed);
  std::vector<std::string> beyond;  // past runs.keepRuns: the journal goes too
  for (const policy::RunToRemove& r : kept.removed) {
    if (r.past_count) beyond.push_back(r.id);
  }
  if (!beyond.empty()) {
    const std::string why =
        "past the newest runs.keepRuns = " + std::to_string(runs.keep_runs) + " runs";
    for (const supervisor::JournalPlace& place : supervisor::ExistingJournalPlaces(p.workspace)) {
      for (const std::string& id : beyond) RemoveJournal(place, id, why, say);
    }
  }
  if (!kept.removed.empty()) {
    say.Say(spdlog::level::info,
            "removed the records of {} earlier run(s) of this workspace (runs.keepDays = {}, "
            "runs.keepRuns = {})",
            kept.removed.size(), runs.keep_days, runs.keep_runs);
  }
  if (kept.failed > 0) {
    say.Say(spdlog::level::warn,
            "run retention: {} earlier run record(s) could not be removed (first: {})", kept.failed,
            kept.first_failure);
  }
}

// The bound of the workspace's run records: `p`'s runs section, and under
// --policy FILE (`policy_file` not empty) the settings file's over it:
// retention is the user's preference, not a policy of the run
// (SettingsRunRetention). None, after one warning line, when the settings
// file cannot be read or parsed: no record is removed rather than more
// than the user allows.
std::optional<policy::RunRetention> RunRetentionOf(const policy::Policy& p,
                                                   const std::string& policy_file,
                                                   RetentionLines& say) {
  policy::RunRetention runs = p.runs;
  if (policy_file.empty()) return runs;  // the settings file is the policy
  if (std::string error; !SettingsRunRetention(runs, error)) {
    say.Say(spdlog::level::warn, "run retention skipped this time: {}", error);
    return std::nullopt;
  }
  return runs;
}

// The pass, for `p`'s workspace (the policy the run was launched with),
// its records bounded by RunRetentionOf; `journal`: the run's, null when
// it keeps none.
void RetainRuns(const policy::Policy& p, const std::string& policy_file, const RunServices& s,
                const std::shared_ptr<supervisor::Journal>& journal, RetentionLines& say) {
  const auto start = std::chrono::steady_clock::now();
  const int64_t now = std::time(nullptr);
  if (journal) {
    const supervisor::JournalPlace place = journal->OpenPlace();
    if (place.runs) {
      RemoveOldJournals(place, p.workspace, p.limits.max_journal_days, s.run_id, now, say);
    }
  }
  if (const auto runs = RunRetentionOf(p, policy_file, say)) RetainRecords(p, *runs, s, now, say);
  say.Say(spdlog::level::debug, "run retention took {} us",
          std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() -
                                                                start)
              .count());
}

}  // namespace

RetentionPass::~RetentionPass() { Finish(); }

void RetentionPass::Start() {
  if (started_) return;
  try {
    thread_ = std::thread([this] { RetainRuns(p_, policy_file_, services_, journal_, lines_); });
    started_ = true;
  } catch (const std::system_error&) {
    // No thread to be had (EAGAIN): Finish runs the pass once the tool is done.
  }
}

void RetentionPass::Finish() {
  if (finished_) return;
  finished_ = true;
  if (started_) {
    thread_.join();
  } else {
    RetainRuns(p_, policy_file_, services_, journal_, lines_);
  }
  for (const auto& [level, line] : lines_.lines) spdlog::log(level, "{}", line);
}

}  // namespace cordon::tools
