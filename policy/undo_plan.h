// What `cordon undo` does to take a recoverable run back (issue 26): the
// run's changes (journal_change.h) reversed, last first, against what is in
// the workspace now. Pure: the supervisor recorded the changes and how each
// name stood when the run ended; the undo command looks at each name now;
// this decides the steps, and the undo command performs them.
//
// A metadata change is taken back in its place among the others (the
// attribute's first old value set back on the same inode, still at that
// name).
//
// A name the user changed after the run (another inode there, or the same
// one with another size or mtime, or something where the run left nothing)
// is never clobbered: every step that would remove, replace or restore over
// it is left out and the name is listed as a conflict, with the slot that
// still holds the old version. A run's own entry that is gone already is a
// "ghost": the steps that would move or remove it are done in the plan only.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "policy/journal_change.h"

namespace cordon::policy {

// An entry as lstat sees it (beneath the workspace, no link followed).
struct Observed {
  bool present = false;
  std::uint64_t ino = 0;
  std::uint64_t size = 0;
  std::int64_t mtime_ns = 0;
  KeptType type = KeptType::kFile;
  bool operator==(const Observed&) const = default;
};

using NameStates = std::map<std::string, Observed>;

enum class UndoAct : std::uint8_t {
  kRemove,   // the run's entry `ino` at `path` (rmdir for a directory)
  kMove,     // the entry `ino` at `path` back to `to` (no replace)
  kRestore,  // slot `slot` back to `path` (no replace)
  kPutCopy,  // slot `slot` over the file `ino` at `path` (the copy kept before an in-place write)
  kSwap,     // exchange `path` (holding `other_ino`) and `to` (holding `ino`)
  kSetAttr,  // `attr` back on the entry `ino` on `dev` at `path` (a metadata change)
};

struct UndoStep {
  UndoAct act = UndoAct::kRemove;
  std::string path;
  std::string to;
  std::uint64_t ino = 0;
  std::uint64_t slot = 0;
  KeptType type = KeptType::kFile;
  std::uint64_t other_ino = 0;
  std::uint64_t dev = 0;  // kSetAttr
  OldAttr attr;           // kSetAttr
};

struct UndoConflict {
  std::string path;
  std::string why;
  std::optional<std::uint64_t> slot;  // where the old version stays
};

struct UndoPlan {
  std::vector<UndoStep> steps;
  std::vector<UndoConflict> conflicts;
};

// Where the names a run's changes mention stand at its end: a directory
// moved (or exchanged) carries every name beneath it to its new place.
// Fed the changes in order, by the journal as it writes them and by undo
// as it reads them: the one rule for both.
class NameTracker {
 public:
  void Apply(const Change& c);
  const std::set<std::string>& names() const { return names_; }

 private:
  // Every tracked name at or beneath `from` now lies at or beneath `to`.
  void Relocate(const std::string& from, const std::string& to);
  std::set<std::string> names_;
};

// The names at the end of a run with these changes, for undo to observe
// (and the run to seal).
std::vector<std::string> NamesOf(const std::vector<Change>& changes);

// Whether `path` is `dir` or lies beneath it.
bool AtOrBeneath(const std::string& path, const std::string& dir);

// The steps that take `changes` back. `at_end`: each name as the run left
// it (absent when the run did not end cleanly: no change since can then be
// told apart, and `now` is taken as the run's end). `now`: each name of
// NamesOf(changes) as it is now.
UndoPlan PlanUndo(const std::vector<Change>& changes, const std::optional<NameStates>& at_end,
                  const NameStates& now);

}  // namespace cordon::policy
