// The facts policy::Decide takes (policy/decide.h), gathered by the
// emulator from what it holds: the located path and an lstat of the entry
// beneath its root. Deciding is policy's; looking is the supervisor's.
#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>

#include "policy/deny_glob.h"
#include "policy/protected_paths.h"
#include "supervisor/emulator.h"
#include "supervisor/tool_path.h"
#include "supervisor/walk/dir_listing.h"

namespace cordon::supervisor {

policy::PlaceFacts Emulator::Place(const Located& loc, bool leads) const {
  policy::PlaceFacts f;
  f.root = loc.rel.empty();
  f.shared = loc.root->own_entries_only;
  f.file_grant = !loc.root->only_entry.empty();
  f.disposable = loc.root->disposable;
  f.journaled = Journals(loc);
  const RepoFacts repo = RepoPlace(loc);
  f.protected_path = repo.protected_path || repo.users_config;
  f.guarded_config = repo.guarded_config;
  f.users_config = repo.users_config;
  f.new_worktree_link = repo.new_worktree_link;
  f.removable_link = repo.removable_link;
  f.git_entry = loc.root->workspace && loc.name == ".git";
  // Deny globs hold in the whole workspace, beneath a root of a grant
  // inside it (--rw WS/sub) too: matched by the workspace-relative path.
  const std::string& ws = rules().deny_globs_workspace;
  if (!rules().deny_globs.empty() && policy::IsWithin(loc.root->path, ws)) {
    std::string rel = loc.root->path.substr(std::min(ws.size() + 1, loc.root->path.size()));
    if (!rel.empty() && !loc.rel.empty()) rel += '/';
    rel += loc.rel;
    f.deny_glob = policy::MatchesDenyGlob(rules().deny_globs, rel);
    f.deny_glob_parents = rules().deny_globs_follow_parents;
  }
  if (leads && loc.root->workspace && !rules().protected_patterns.empty()) {
    f.leads_to_protected = policy::LeadsToProtected(rules().protected_patterns, loc.rel, false);
    f.leads_to_protected_any_depth = policy::LeadsToProtected(rules().protected_patterns, loc.rel, true);
  }
  return f;
}

policy::EntryKind Emulator::KindOf(mode_t mode) {
  return S_ISREG(mode)    ? policy::EntryKind::kRegular
         : S_ISDIR(mode)  ? policy::EntryKind::kDirectory
         : S_ISLNK(mode)  ? policy::EntryKind::kSymlink
         : S_ISFIFO(mode) ? policy::EntryKind::kFifo
         : S_ISSOCK(mode) ? policy::EntryKind::kSocket
                          : policy::EntryKind::kSpecial;
}

policy::EntryFacts Emulator::Facts(const struct stat& st, const Located& loc) const {
  policy::EntryFacts e;
  e.kind = KindOf(st.st_mode);
  e.nlink = static_cast<std::uint32_t>(st.st_nlink);
  e.pinned = rules().roots.IsPinned(st.st_dev, st.st_ino);
  e.own = !NotOwn(loc, st);
  return e;
}

bool Emulator::HasEntries(const Located& loc) {
  // O_NOATIME: looking leaves no trace; it needs the owner's fsuid, so an
  // EPERM is tried again without it.
  constexpr uint64_t kList = O_RDONLY | O_DIRECTORY | O_NOFOLLOW;
  auto fd = WriteRoots::OpenBeneath(*loc.root, loc.rel, kList | O_NOATIME, 0);
  if (!fd && fd.error().err == EPERM) fd = WriteRoots::OpenBeneath(*loc.root, loc.rel, kList, 0);
  if (!fd) return false;
  char buf[4096];
  bool any = false;
  (void)ListDirectory(fd->get(), false, buf, sizeof buf, [&](const dirent64&) {
    any = true;
    return false;
  });
  return any;
}

bool Emulator::HoldsWhatToolSees(const Path& p, policy::FileRequest& q) {
  auto held = WriteRoots::OpenBeneath(*p.loc.root, p.loc.rel, O_PATH | O_NOFOLLOW, 0);
  struct stat st;
  if (!held || ::fstat(held->get(), &st) != 0 || !S_ISDIR(st.st_mode)) return false;
  // Listed with the tool's file permissions (a notify thread holds
  // ToolPermissions) beneath a write root, which the kernel layer lets the
  // tool read; the tool's own lstat of its path finds the directory.
  q.entry.kind = policy::EntryKind::kDirectory;
  q.entry.has_entries = HasEntries(p.loc);
  q.tool_sees_name = q.entry.has_entries && ToolSeesEntry(p.abs);
  return q.tool_sees_name;
}

policy::Settings Emulator::DecideSettings() const {
  policy::Settings s;
  s.delete_allowed = rules().sensitive_delete_allowed;
  s.can_ask = gates().CanAsk(Ask::kDelete);
  s.recoverable = opts_.journal != nullptr;
  return s;
}

}  // namespace cordon::supervisor
