// Capability drop with libcap: effective, permitted, inheritable, ambient
// and the bounding set, plus the securebits that stop a uid-0 tool from
// regaining them at exec. Runs in the child between fork and exec (the
// parent is single-threaded there, so libcap's allocations are safe).
#pragma once

namespace cordon::supervisor {

// Returns 0 or -errno. Dropping the bounding set needs CAP_SETPCAP; without
// it (an unprivileged caller) the bounding set cannot grant anything at exec
// anyway because no_new_privs is set right after.
int DropAllCapabilities();

// True when the calling process holds no capability in any set.
bool HoldsNoCapabilities();

}  // namespace cordon::supervisor
