// The resolved Policy as JSON: what the audit log's session header records
// and what `cordon policy explain` can print. Output only; the policy file
// parser lives elsewhere and never reads this shape back.
#pragma once

#include <nlohmann/json.hpp>

#include "policy/policy.h"

namespace cordon::policy {

nlohmann::json PolicyToJson(const Policy& p);

// The limits object both PolicyToJson and the policy digest carry.
nlohmann::json LimitsToJson(const Limits& l);

}  // namespace cordon::policy
