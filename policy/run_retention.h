// How many of a workspace's runs cordon keeps (run retention). Every run
// leaves a record and its default audit log (supervisor/audit/run_records.h);
// without a bound an agent that runs thousands of commands a day fills the
// user's home with them. The user's settings file bounds them by age and by
// count (`runs.keepDays`, `runs.keepRuns`, docs/policy.md); `cordon runs
// prune --older-than AGE` is the same decision with an age alone.
//
// Pure: the runs come in as facts (an id and when it began), the decision
// goes out; the records are removed by the supervisor
// (supervisor/audit/run_index.h), the journals by tools/run_retention.cc.
// Also here: the text of the per-workspace index of run ids that lets a
// run's end decide without reading every record.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cordon::policy {

// The `runs` section of a settings (policy) file. 0 turns that bound off;
// both 0: no run is ever removed automatically.
struct RunRetention {
  std::size_t keep_days = 30;    // runs.keepDays: runs older than this go
  std::size_t keep_runs = 1000;  // runs.keepRuns: only the newest this many stay
  bool operator==(const RunRetention&) const = default;
  bool off() const { return keep_days == 0 && keep_runs == 0; }
};
inline constexpr std::size_t kMaxKeepDays = 36500;
inline constexpr std::size_t kMaxKeepRuns = 1000000;  // an index of ~23 MB

// What a decision keeps: runs that began within `max_age_s` of now, and of
// those the newest `max_runs`; none: that bound is off.
struct RetentionBound {
  std::optional<int64_t> max_age_s;
  std::optional<std::size_t> max_runs;
};

// The bound `r` sets (0 → none).
RetentionBound BoundOf(const RunRetention& r);

// A run of the workspace, as the caller found it. `id` views the caller's
// string, which must outlive the decision (no copy: an index of thousands
// of runs is read at every run's end).
struct RunFact {
  std::string_view id;
  int64_t started_s = 0;
};

struct RunToRemove {
  std::string id;
  bool past_age = false;    // began at or before now - max_age_s
  bool past_count = false;  // not among the newest max_runs
  bool operator==(const RunToRemove&) const = default;
};

// The runs of `runs` that `b` lets go, oldest first, at most `at_most` (the
// oldest go first, so a backlog shrinks run by run). `current` (the run
// that is ending) is never chosen and is always one of the newest
// max_runs, whenever it began. The newest are by start, then id; an id
// listed twice (with the one start its name or record says) is one run.
std::vector<RunToRemove> ChooseRunsToRemove(std::vector<RunFact> runs, const RetentionBound& b,
                                            int64_t now_s, std::string_view current,
                                            std::size_t at_most);

// The run named `id` when it is a run id that says when it began
// (policy::RunIdStartedS), as a fact viewing `id`; none otherwise.
std::optional<RunFact> FactOfId(std::string_view id);

// The index of one workspace's runs: its file's name (hex, from the
// workspace's realpath), and its text: a header line naming the workspace
// by digest, then one run id a line.
std::string RunIndexKey(std::string_view workspace);
std::string RunIndexText(std::string_view workspace, const std::vector<RunFact>& runs);

// The runs of an index's text, in order, viewing `text`: each whole line
// that is a run id with a time (a torn last line is dropped). None when
// the header names another workspace or is not one.
std::optional<std::vector<RunFact>> ParseRunIndex(std::string_view text,
                                                  std::string_view workspace);
// The same whatever workspace the header names (for a reconcile: every
// run an index holds).
std::vector<RunFact> RunIndexRuns(std::string_view text);

}  // namespace cordon::policy
