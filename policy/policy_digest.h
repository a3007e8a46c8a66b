// The identity of a resolved policy: SHA-256 of its canonical JSON. A
// managed workspace records the digest of the policy it was created for, and
// a run restored into that workspace must present the same digest before
// anything is granted (seed 002: "a changed product default never migrates
// an existing Session").
#pragma once

#include <string>

#include "policy/policy.h"

namespace cordon::policy {

// Canonical JSON (sorted keys, no whitespace; the one writer's kDigest view,
// policy_json.h) of what the policy grants and
// decides: profile, workspace, rules in order, network, private TMPDIR,
// sandbox and bypass switches, protected patterns, the sensitive-delete and
// link modes, pinned tools (name and path) and limits. Left out: what says
// why rather than what (profile_reason, dropped paths, notes), what the
// workspace's contents make of the patterns (protected_paths), and the
// pinned binaries' identities, which are checked at every exec anyway and
// change with a package upgrade, not with the policy.
std::string CanonicalPolicyJson(const Policy& p);

// Sha256Hex(CanonicalPolicyJson(p)).
std::string PolicyDigest(const Policy& p);

}  // namespace cordon::policy
