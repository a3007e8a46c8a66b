// The credentials every run is kept from (seed 004's generated base policy;
// issue 24 item 4: "credentials stay out, whatever else is granted"): the
// caller's SSH and GnuPG keys, cloud, cluster, registry and forge logins,
// password stores, keyrings and browser profiles, denied whether or not they
// exist at launch. A broad grant (`--ro ~`, `--rw ~`) is less specific and
// does not loosen them (policy/rule_lookup.h); a user rule of that exact
// path does (`--ro ~/.ssh`: policy::BaseRulesInForce).
//
// What exists is kept out of the Landlock grant as a --deny is; what does
// not exist yet is denied by the name it would have, so the supervisor
// refuses to bring it into being (supervisor/load/normalise.h,
// RealPathOfMissing), and the run does not fail because ~/.aws is absent.
#pragma once

#include <span>
#include <string>

#include "policy/policy.h"

namespace cordon::supervisor {

// The source those rules carry, for explain and the bypass rule.
using policy::kCredentialSource;

// The list, relative to the home.
std::span<const char* const> CredentialPaths();

// Adds to p.base_paths a denial of each of CredentialPaths() under `home`
// (absolute; canonical as user_profile.cc makes it), by its canonical name:
// the realpath of what exists (through a symlink, the target, as --deny
// does), else the realpath of its deepest existing ancestor and the rest.
// Nothing when `home` is empty, relative or gone.
void AddCredentialDenials(policy::Policy& p, const std::string& home);

}  // namespace cordon::supervisor
