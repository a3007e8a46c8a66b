// A bypassed run: the policy has sandbox.allowBypass and this run asked for
// --no-sandbox (or the policy disables the sandbox). The tool runs with no
// confinement at all, so it is said loudly: one line on stderr, always, and
// a record in the audit log (RecordBypass).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "policy/policy.h"

namespace cordon::tools {

// Announces the bypass, then execs `argv` in place, in the workspace, with
// `env` (null: cordon's environment). `audit` (may be empty) is the --audit
// log, `header` what the caller adds to its session header (cordon grep's
// template). Returns only on failure: 127 not found, 126 not executable,
// 125 for cordon's own errors (among them an audit log that cannot take the
// record).
int RunUnconfined(const policy::Policy& p, std::vector<std::string> argv, const std::string& audit,
                  const nlohmann::json& header, const std::vector<std::string>* env);

// Leaves what a bypass must leave behind before anything unconfined runs:
// the stderr line, and with an audit log a session header (rung
// "bypassed") and a "bypass" record. No "end" record follows: cordon is
// replaced by the tool, so nothing of cordon's sees it exit. False when
// the log cannot be written; the tool must not start then.
bool RecordBypass(const policy::Policy& p, const std::vector<std::string>& argv,
                  const std::string& audit, const nlohmann::json& header);

}  // namespace cordon::tools
