// Run retention at a run's end (policy/run_retention.h): which of the
// workspace's run records go, decided from a small index instead of every
// record (7,000 records took ~170 ms to read, a run of `true` ~6 ms):
//
//   RunsRoot()/.index/<key>        one workspace's run ids, a line each
//   RunsRoot()/.index/reconciled   when every record was last indexed
//
// A run adds its own id at its end. Records no index holds (made before
// the index was, by an older cordon, or by a run whose cordon was killed
// before its end) are indexed by a reconcile: at most once a day, reading
// at most kReconcileReads records a run until it is through. Beneath the
// runs root, so the tool is denied it with the records (run_records.h).
// Each index is changed under its flock only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "policy/run_retention.h"

namespace cordon::supervisor {

// Records a reconcile reads in one run at most (each 25-60 us).
inline constexpr std::size_t kReconcileReads = 250;
// Once a pass has removed two records (so that a backlog shrinks, each run
// adding one), it stops when it has spent this long removing: where a
// freed block costs a synchronous discard (ext4 mounted -o discard, no
// journal) one record costs ~10 ms, elsewhere ~0.1 ms.
inline constexpr int64_t kRemovalBudgetNs = 5'000'000;

struct RetainedRecords {
  std::vector<policy::RunToRemove> removed;  // records removed by this pass
  std::size_t still_going = 0;               // chosen, kept: their run holds its lock
  std::size_t failed = 0;                    // chosen, kept: removing failed
  std::string first_failure;                 // why, for the first of them
  std::size_t indexed = 0;                   // records a reconcile added to an index
  std::string skipped;                       // non-empty: nothing was done, and why
};

// At the end of run `run_id` of `workspace` (a realpath), its record
// written: adds it to the workspace's index in `runs_root` (an open
// RunsRoot()), reconciles when due, and removes the records of the
// workspace's runs that `bound` lets go (policy::ChooseRunsToRemove), at
// most `at_most` and within kRemovalBudgetNs, never `run_id`'s nor one
// whose run still holds it.
// Removing a record is RemoveRunRecordAt: cordon's own files only.
RetainedRecords RetainRunRecords(int runs_root, const std::string& workspace,
                                 const std::string& run_id, const policy::RetentionBound& bound,
                                 int64_t now_s, std::size_t at_most);

}  // namespace cordon::supervisor
