// Reading recoverable runs back (issue 26), for `cordon undo` and `cordon
// runs`: a run's directory in a journal place (journal_place.h), checked
// before anything is done with it. A run whose record does not parse, whose
// changes do not match the digest the run sealed them with, or whose
// workspace is no longer the directory it ran in, is refused whole, with
// one line that says why.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "base/fd.h"
#include "base/result.h"
#include "policy/journal_change.h"
#include "policy/journal_run.h"
#include "supervisor/journal/journal_place.h"

namespace cordon::supervisor {

struct LoadedRun {
  std::string dir;
  Fd run;    // the run's directory
  Fd slots;  // its slots/
  policy::RunMeta meta;
  std::vector<policy::Change> changes;
  std::optional<policy::RunEnd> end;  // absent: the run did not end cleanly
  bool undone = false;
};

// The run `id` in `place`, read and checked (the digest, every record).
Result<LoadedRun> LoadRun(const JournalPlace& place, const std::string& id);

struct RunSummary {
  std::string id;
  std::string place;
  std::optional<policy::RunMeta> meta;  // absent: meta.json unreadable
  bool sealed = false;
  bool undone = false;
};

// Every run directory in `place`, oldest first; with `named_before`, only
// those whose name (policy::RunIdStartedS) says they began before it, or
// does not say: the others are not opened.
std::vector<RunSummary> ListRuns(const JournalPlace& place,
                                 std::optional<int64_t> named_before = std::nullopt);

// Marks the run taken back (undone.json), and empties its slots when
// nothing of it is left to restore.
Status MarkUndone(LoadedRun& run, bool complete);

// Removes the run's directory (no link followed, no mount crossed); EBUSY,
// nothing removed, while the run is still going or being undone.
Status RemoveRun(const JournalPlace& place, const std::string& id);

}  // namespace cordon::supervisor
