// Loading a policy file for `cordon run --policy` and `cordon policy`:
// the bytes are read once, checked against the receipt (when one is given)
// and parsed from that same buffer, so what was verified is what is used.
#pragma once

#include <string>
#include <vector>

#include "policy/policy.h"

namespace cordon::tools {

// The whole file, or false when it cannot be read. Policies are small; a
// bound (1 MiB) keeps a hostile path (/dev/zero) from eating memory.
bool ReadSmallFile(const std::string& path, std::string& out);

// Fills `p` from `file` (defaults first). `receipt` empty: no receipt check.
// Every problem goes to `errors` as one line; `p` must not be used then.
// `label`: the name the messages give the file (empty: `file`).
void LoadPolicyFile(const std::string& file, const std::string& receipt, policy::Policy& p,
                    std::vector<std::string>& errors, const std::string& label = "");

}  // namespace cordon::tools
