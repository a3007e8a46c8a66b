#include "supervisor/approvals/make_approver.h"

#include <unistd.h>

#include "supervisor/approvals/rules_approver.h"
#include "supervisor/approvals/socket_approver.h"
#include "supervisor/approvals/tty_approver.h"

namespace cordon::supervisor {

std::string DefaultApprovalSpec() { return ::isatty(0) ? "tty" : "deny"; }

std::unique_ptr<Approver> MakeApprover(const std::string& spec_in, std::string* error) {
  std::string spec = spec_in.empty() ? DefaultApprovalSpec() : spec_in;
  if (spec == "deny") return std::make_unique<DenyApprover>();
  if (spec == "tty") {
    auto a = TtyApprover::OpenControllingTty(error);
    if (!a) *error = "--approvals tty: " + *error;
    return a;
  }
  if (spec.rfind("rules:", 0) == 0) {
    auto a = RulesApprover::FromFile(spec.substr(6), error);
    if (!a) *error = "--approvals rules: " + *error;
    return a;
  }
  if (spec.rfind("socket:", 0) == 0 && spec.size() > 7) {
    return std::make_unique<SocketApprover>(spec.substr(7));
  }
  *error = "--approvals " + spec + ": expected deny, tty, rules:FILE or socket:PATH";
  return nullptr;
}

}  // namespace cordon::supervisor
