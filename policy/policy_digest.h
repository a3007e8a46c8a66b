// The identity of a resolved policy: SHA-256 of its canonical JSON. A
// managed workspace records the digest of the policy it was created for, and
// a run restored into that workspace must present the same digest before
// anything is granted (seed 002: "a changed product default never migrates
// an existing Session").
#pragma once

#include <string>

#include "policy/policy.h"

namespace cordon::policy {

// Canonical JSON (sorted keys, no whitespace) of what the policy grants:
// profile, workspace, rules in order, network, private TMPDIR and limits.
// Explanatory fields (profile_reason, dropped paths) are left out: they say
// why, not what.
std::string CanonicalPolicyJson(const Policy& p);

// Sha256Hex(CanonicalPolicyJson(p)).
std::string PolicyDigest(const Policy& p);

}  // namespace cordon::policy
