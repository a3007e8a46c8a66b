// Per-operation bypass (seed 004: "Tools can request a bypass only when
// sandbox.allowBypass is enabled, and the permission UI records whether the
// operation ran sandboxed or bypassed"): which refusals the supervisor may
// send to the approver as "run this one operation outside the policy".
// One pure rule, decided here once; the supervisor gathers the facts, asks
// (supervisor/delete_gate.h, BypassGate) and, for an allowed-once, performs
// exactly that operation the way it performs an allowed one.
//
// Offered: a refusal by the policy's own rules of a write-open, a delete
// (unlink of a file, rmdir of an empty directory) or a mkdir of a name
// inside the workspace (a protected path such as .git/config or
// .gitmodules, a deny glob's match, a path the user denied or made
// read-only). Never offered: the built-in credential list (whatever rule
// covers the path), cordon's own places (run journals, records, audit
// logs: their rules are kOther), anything outside the workspace, a path
// written with a ".." segment (even a relative path's leading one), the kernel's attack surface
// (devices, /proc, kernel control filesystems: outside the workspace), and an entry refused for
// what it is (a symbolic link, a hard-linked or special file).
#pragma once

#include <string_view>

#include "policy/decide.h"
#include "policy/policy.h"

namespace cordon::policy {

struct BypassFacts {
  bool allow_bypass = false;  // sandbox.allowBypass
  bool can_ask = false;       // an approver who can answer (not --approvals deny)
  FileOp op = FileOp::kOpenWrite;
  // The change is to a directory: rmdir (kDelete), mkdir (kCreate). A
  // create of anything else (a symbolic link, a device) is never offered.
  bool directory = false;
  // The normalised path lies beneath the workspace (not the workspace itself).
  bool in_workspace = false;
  // The path is, or lies beneath, an entry of the built-in credential list.
  bool credential = false;
  // The path as the tool wrote it has a ".." segment (a relative path's
  // leading ones too, which the lookup resolves): never offered.
  bool dotdot = false;
  RefusedBy refused_by = RefusedBy::kOther;
};

// Whether the refusal may be sent to the approver as a bypass request.
bool BypassEligible(const BypassFacts& f);

// A rename of a file (op kRename, not a directory at either end; an
// exchange is never offered): each end is looked at as above, `refused_by`
// kOther with `allowed` for an end the policy lets the tool write. Offered
// when at least one end is refused by a rule BypassEligible offers and the
// other is that or allowed, both inside the workspace, neither a credential
// nor written with "..".
struct RenameEnds {
  BypassFacts from, to;
  bool from_allowed = false;
  bool to_allowed = false;
};
bool BypassRenameEligible(const RenameEnds& r);

// Which kind of rule CoverPath's refusal `c` came from (c.err != 0).
RefusedBy RefusedByRule(const Covered& c);

// Whether `abs` (absolute, normal) is, or lies beneath, one of `rules`
// that carries the credential source.
bool IsCredentialPath(const std::vector<PathRule>& rules, std::string_view abs);

}  // namespace cordon::policy
