// A recoverable run's journal, opened for `cordon run` (issue 26): under
// sensitive.delete "recoverable" (the default) with the workspace-write
// profile, the run keeps the user's files it removes or replaces in a
// journal beside the workspace (supervisor/journal/journal.h), which the
// tool is denied; `cordon undo` takes the run back.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "policy/policy.h"
#include "supervisor/journal/journal.h"

namespace cordon::tools {

// The run's journal, or null when the policy keeps none. Where no place
// for it exists on the workspace's mount, says so in one line and turns
// `p` to sensitive.delete "ask" (today's approval rule). Adds the journal's
// place to `p`'s denied paths, so the tool cannot reach it. The journal's
// run is `run_id`, the id of the run's record (tools/run_services.h).
std::shared_ptr<supervisor::Journal> OpenRunJournal(policy::Policy& p,
                                                    const std::vector<std::string>& argv,
                                                    const std::string& run_id);

// The run ended with `status`: the journal is sealed (how each changed
// name stands now), or removed when the run changed nothing; one line says
// how to take the run back when it kept a file of the user's.
void CloseRunJournal(const std::shared_ptr<supervisor::Journal>& j, const policy::Policy& p,
                     int status);

}  // namespace cordon::tools
