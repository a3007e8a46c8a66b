// `cordon undo`'s hands (issue 26): how each name a run changed stands now,
// and the steps of policy::PlanUndo performed beneath the workspace, each
// checked again right before it is made (the entry it removes or moves must
// still be the inode planned; nothing is ever restored over an entry).
// Runs as the user, outside any sandbox; every path is opened beneath the
// workspace with no symlink and no mount crossing on the way. An old
// attribute value is set on the entry held (O_PATH) once it is checked to
// be the file the run changed (device and inode): never on another.
#pragma once

#include <string>
#include <vector>

#include "base/result.h"
#include "policy/undo_plan.h"

namespace cordon::supervisor {

// Each of `names` (workspace-relative) beneath `workspace_fd`, as lstat
// sees it now.
policy::NameStates ObserveNames(int workspace_fd, const std::vector<std::string>& names);

// Whether every slot the plan restores from is in `slots_fd`: a run whose
// kept files are missing is damaged, and nothing is done.
Status CheckSlots(int slots_fd, const policy::UndoPlan& plan);

struct UndoOutcome {
  size_t done = 0;
  std::vector<policy::UndoConflict> failed;  // steps the filesystem refused
  // Each old attribute value set back, as undo reports it: "mode 0644 of
  // notes.txt" (policy::OldAttrText, then the path).
  std::vector<std::string> attrs;
};

UndoOutcome ApplyUndo(int workspace_fd, int slots_fd, const policy::UndoPlan& plan);

}  // namespace cordon::supervisor
