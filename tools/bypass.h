// A bypassed run: the policy has sandbox.allowBypass and this run asked for
// --no-sandbox (or the policy disables the sandbox). The tool runs with no
// confinement at all, so it is said loudly: one line on stderr, always, and
// a record in the audit log (RecordBypass).
#pragma once

#include <string>
#include <vector>

#include "policy/policy.h"

namespace cordon::tools {

// Announces the bypass, then execs `argv` in place, in the workspace, with
// cordon's environment. Returns only on failure: 127 not found, 126 not
// executable, 125 for cordon's own errors.
int RunUnconfined(const policy::Policy& p, std::vector<std::string> argv);

// Writes what a bypass must leave behind before the tool starts: the stderr
// line. The audit log (issue 6) appends its "sandbox bypassed" record here,
// so every bypassed run is in the log before anything unconfined runs.
void RecordBypass(const policy::Policy& p, const std::vector<std::string>& argv);

}  // namespace cordon::tools
