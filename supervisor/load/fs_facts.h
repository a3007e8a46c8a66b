// Gathering the filesystem facts Validate judges a policy by (policy/
// fs_facts.h): statfs(2) and stat(2) of the workspace and of every rule's
// path, once, at load.
#pragma once

#include "policy/fs_facts.h"
#include "policy/policy.h"

namespace cordon::supervisor {

// Facts about p.workspace and each of p.paths; a path neither call can
// reach (gone, unreadable) has no entry.
policy::FsFacts GatherFsFacts(const policy::Policy& p);

}  // namespace cordon::supervisor
