// Per-operation bypass (seed 004: "Tools can request a bypass only when
// sandbox.allowBypass is enabled, and the permission UI records whether the
// operation ran sandboxed or bypassed"): which refusals the supervisor may
// send to the approver as "run this one operation outside the policy".
// One pure rule, decided here once; the supervisor gathers the facts, asks
// (supervisor/delete_gate.h, BypassGate) and, for an allowed-once, performs
// exactly that operation the way it performs an allowed one.
//
// Offered: a refusal by the policy's own rules of a write-open, a delete
// (unlink of a file, rmdir of an empty directory), a mkdir, a metadata
// change (mode, owner, times, an xattr) or a rename or link of a name
// inside the workspace (a protected path such as .git/config or
// .gitmodules, a deny glob's match, a path the user denied or made
// read-only). Never offered: the built-in credential list (whatever rule
// covers the path), cordon's own places (run journals, records, audit
// logs: their rules are kOther), anything outside the workspace, a path
// written with a ".." segment (even a relative path's leading one), the kernel's attack surface
// (devices, /proc, kernel control filesystems: outside the workspace), and an entry refused for
// what it is (a symbolic link, a hard-linked or special file).
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "policy/decide.h"
#include "policy/policy.h"

namespace cordon::policy {

// Which metadata change a kMetadata bypass makes. kOther (a truncate,
// inode flags) is never offered.
enum class AttrOp : std::uint8_t { kNone, kMode, kOwner, kTimes, kXattr, kOther };

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
  // kMetadata: which change. Offered for kMode, kOwner, kTimes, kXattr.
  AttrOp attr = AttrOp::kNone;
  // What lstat found at the name (kMetadata: what the change acts on;
  // a rename's or link's ends), and its link count. kUnknown: not looked.
  EntryKind entry = EntryKind::kUnknown;
  uint64_t nlink = 0;
  // Another name of a denied or protected file (its inode is pinned).
  bool pinned = false;
  // A directory beneath which the policy has a rule of its own (a
  // carve-out, a credential, cordon's own places, a deny glob's match):
  // moving it would carry them off under a name no rule names. Never offered.
  bool holds_rules = false;
};

// Whether the refusal may be sent to the approver as a bypass request.
bool BypassEligible(const BypassFacts& f);

// A rename (op kRename; an exchange is never offered): each end is
// looked at as above, `refused_by` kOther with `allowed` for an end the
// policy lets the tool write. Offered when at least one end is refused by
// a rule BypassEligible offers and the other is that or allowed, both
// inside the workspace, neither a credential nor written with "..". A file
// (`from.directory` false) may replace a file, never a directory
// (`to.directory`: the destination is one). A directory moves only to a
// free name (`to.entry` kAbsent), and only when no rule lies beneath it
// (`from.holds_rules`).
struct RenameEnds {
  BypassFacts from, to;
  bool from_allowed = false;
  bool to_allowed = false;
};
bool BypassRenameEligible(const RenameEnds& r);

// A link (op kLink): a new name `to` for the file at `from`. Offered when
// the new name is free (`to.entry` kAbsent) and refused by a rule
// BypassEligible offers, and the source is one the policy lets the tool
// write (`from_allowed`): a regular file with one link (`from.entry`,
// `from.nlink`), not another name of a denied file (`from.pinned`); both
// inside the workspace, neither a credential nor written with "..". A
// denied file is never given a second, readable name: only the new name's
// refusal is bypassed.
struct LinkEnds {
  BypassFacts from, to;
  bool from_allowed = false;
};
bool BypassLinkEligible(const LinkEnds& l);

// Whether a rule of `rules` lies strictly beneath `abs` (BypassFacts::holds_rules).
bool HoldsRuleBeneath(const std::vector<PathRule>& rules, std::string_view abs);

// Which kind of rule CoverPath's refusal `c` came from (c.err != 0).
RefusedBy RefusedByRule(const Covered& c);

// Which of Decide's own rules a place's facts refuse it by: a deny glob's
// match, a protected path; else kOther (the rule lookup says the rest).
RefusedBy RefusedByPlace(const PlaceFacts& place);

// Whether `abs` (absolute, normal) is, or lies beneath, one of `rules`
// that carries the credential source.
bool IsCredentialPath(const std::vector<PathRule>& rules, std::string_view abs);

}  // namespace cordon::policy
