// The one writer of a resolved Policy as JSON. Three readers take it:
//   - the policy digest (policy_digest.h), which a managed workspace
//     records: kDigest, what the policy grants and decides, in canonical
//     form; its bytes must never change for an unchanged policy;
//   - the audit log's session header and `cordon policy explain --json`:
//     kRecord, the digest's fields under the same names plus what says why
//     (reasons, sources, dropped paths, notes) and what the machine made of
//     the policy (protected paths found, base paths, pinned identities).
// Output only: the policy file parser never reads this shape back.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "policy/policy.h"

namespace cordon::policy {

enum class PolicyJsonView { kDigest, kRecord };

nlohmann::json PolicyToJson(const Policy& p, PolicyJsonView view);

// A path or name as a JSON string. Paths are realpaths and need not be
// UTF-8, which JSON text must be: a non-UTF-8 string is written as "hex:"
// + its bytes in hex. No absolute path starts with "hex:", so the encoding
// stays one-to-one.
nlohmann::json JsonText(const std::string& s);

}  // namespace cordon::policy
