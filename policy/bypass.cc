#include "policy/bypass.h"

namespace cordon::policy {
namespace {

// A rule the user wrote: a command-line flag, or a policy file's pointer.
bool UsersRule(const PathRule& r) {
  return r.source == "--deny" || r.source == "--ro" || r.source.rfind("policy ", 0) == 0;
}

// Where anything may be asked at all: allowBypass, someone to ask, inside
// the workspace, no credential, no "..".
bool Askable(const BypassFacts& f) {
  return f.allow_bypass && f.can_ask && f.in_workspace && !f.credential && !f.dotdot;
}

}  // namespace

bool BypassEligible(const BypassFacts& f) {
  if (!Askable(f)) return false;
  switch (f.op) {
    case FileOp::kOpenWrite:
      if (f.directory) return false;  // a file is opened for writing, never a directory
      break;
    case FileOp::kDelete:
      break;  // unlink, or rmdir of an empty directory
    case FileOp::kCreate:
      if (!f.directory) return false;  // mkdir only: no symbolic link, no device
      break;
    case FileOp::kMetadata:
      // chmod, chown, utimes, an xattr: of a regular file with one name, or
      // a directory (a link, a hard-linked or special file is refused for
      // what it is); never a truncate or inode flags.
      if (f.attr != AttrOp::kMode && f.attr != AttrOp::kOwner && f.attr != AttrOp::kTimes &&
          f.attr != AttrOp::kXattr) {
        return false;
      }
      if (!(f.entry == EntryKind::kRegular && f.nlink == 1) && f.entry != EntryKind::kDirectory) {
        return false;
      }
      break;
    default:
      return false;
  }
  switch (f.refused_by) {
    case RefusedBy::kProtectedPath:
    case RefusedBy::kDenyGlob:
    case RefusedBy::kDeniedPath:
    case RefusedBy::kReadOnlyPath:
      return true;
    case RefusedBy::kOther:
    case RefusedBy::kCredential:
    case RefusedBy::kOutside:
      return false;
  }
  return false;
}

bool BypassRenameEligible(const RenameEnds& r) {
  if (r.from_allowed && r.to_allowed) return false;  // nothing refused: nothing to bypass
  auto end = [](BypassFacts f, bool allowed) {
    if (f.op != FileOp::kRename) return false;
    if (allowed) return Askable(f);
    // A refused end is judged as a write-open of a file there would be:
    // the same rules offered.
    f.op = FileOp::kOpenWrite;
    f.directory = false;
    return BypassEligible(f);
  };
  if (r.to.directory) return false;  // nothing replaces a directory
  if (r.from.directory && (r.to.entry != EntryKind::kAbsent || r.from.holds_rules)) return false;
  return end(r.from, r.from_allowed) && end(r.to, r.to_allowed);
}

bool BypassLinkEligible(const LinkEnds& l) {
  const BypassFacts& from = l.from;
  if (from.op != FileOp::kLink || l.to.op != FileOp::kLink) return false;
  if (!l.from_allowed || !Askable(from)) return false;
  if (from.entry != EntryKind::kRegular || from.nlink != 1 || from.pinned) return false;
  if (l.to.entry != EntryKind::kAbsent) return false;
  BypassFacts to = l.to;  // the new name, judged as a new file there would be
  to.op = FileOp::kOpenWrite;
  to.directory = false;
  return BypassEligible(to);
}

bool HoldsRuleBeneath(const std::vector<PathRule>& rules, std::string_view abs) {
  for (const PathRule& r : rules) {
    if (r.path != abs && PathWithin(r.path, abs)) return true;
  }
  return false;
}

RefusedBy RefusedByPlace(const PlaceFacts& place) {
  if (place.deny_glob) return RefusedBy::kDenyGlob;
  return place.protected_path ? RefusedBy::kProtectedPath : RefusedBy::kOther;
}

RefusedBy RefusedByRule(const Covered& c) {
  if (c.err == 0) return RefusedBy::kOther;
  if (c.rule == nullptr) return RefusedBy::kOutside;  // no rule, a raw "..", not absolute
  const PathRule& r = *c.rule;
  if (r.source == kCredentialSource) return RefusedBy::kCredential;
  if (r.source == kProtectedPathSource) return RefusedBy::kProtectedPath;
  if (r.source == kDenyGlobSource) return RefusedBy::kDenyGlob;
  if (r.access == Access::kDenied) return UsersRule(r) ? RefusedBy::kDeniedPath : RefusedBy::kOther;
  if (r.access == Access::kReadOnly) {
    // The read-only profile's workspace rule; the system set's rules
    // (/usr, /proc) carry no source, and lie outside the workspace
    // (BypassFacts::in_workspace).
    return UsersRule(r) || r.source.empty() || r.source == kWorkspaceSource
               ? RefusedBy::kReadOnlyPath
               : RefusedBy::kOther;
  }
  return RefusedBy::kOther;
}

bool IsCredentialPath(const std::vector<PathRule>& rules, std::string_view abs) {
  for (const PathRule& r : rules) {
    if (r.source == kCredentialSource && PathWithin(abs, r.path)) return true;
  }
  return false;
}

}  // namespace cordon::policy
