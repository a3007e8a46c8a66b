// `cordon policy explain`'s report: the effective policy in words a
// newcomer can follow (PrintExplained) and as JSON (ExplainJson), each with
// the rung `cordon run` would stand on here (RungLine).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "policy/policy.h"

namespace cordon::tools {

// The rung `cordon run` would pick here, and what it enforces.
std::string RungLine();

// The policy as the one writer records it (policy/policy_json.h), plus what
// this machine makes of it: every rule in force with its source, the rung,
// and what goes to the supervisor.
nlohmann::json ExplainJson(const policy::Policy& p, const std::string& rung);

// `p` in words on stdout. `file`: the policy file explained; empty: what a
// run from here gets (`settings`: the settings file it loads, empty: none).
void PrintExplained(const std::string& file, const std::string& settings, const policy::Policy& p,
                    const std::string& rung);

}  // namespace cordon::tools
