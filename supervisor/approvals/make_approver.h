// The `--approvals` spec: deny | tty | rules:FILE | socket:PATH.
#pragma once

#include <memory>
#include <string>

#include "supervisor/approvals/approver.h"

namespace cordon::supervisor {

// Empty spec: "tty" when stdin is a terminal, else "deny" (the CI default).
std::string DefaultApprovalSpec();

// Null with a one-line `error` for an unknown spec, an unreadable or
// malformed rules file, or no terminal for tty. socket:PATH is not
// contacted here: an unreachable service refuses each request instead.
std::unique_ptr<Approver> MakeApprover(const std::string& spec, std::string* error);

}  // namespace cordon::supervisor
