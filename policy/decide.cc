#include "policy/decide.h"

#include <cerrno>

namespace cordon::policy {
namespace {

bool Exists(const EntryFacts& e) {
  return e.kind != EntryKind::kUnknown && e.kind != EntryKind::kAbsent;
}

// In a shared directory only what this run made is the tool's.
bool NotOwn(const PlaceFacts& p, const EntryFacts& e) { return p.shared && Exists(e) && !e.own; }

constexpr const char* kDenyGlobRule = "matches a deny glob";
constexpr const char* kGuardedConfigRule =
    "a repository's config: only git's rename of checked content writes it";

// A FIFO this run made, by one name: opened by the run's own processes at
// both ends (the other end may be the user's only if the user opens a FIFO
// the run made). One the user had may have a reader outside the sandbox.
constexpr const char* kRunsFifoRule = "a FIFO this run made";
constexpr const char* kGitEntryRule =
    "a .git made by a link or a rename would lead git to a directory no rule protects";
bool RunsFifo(const EntryFacts& e) {
  return e.kind == EntryKind::kFifo && e.born_in_run && e.nlink == 1 && !e.pinned;
}

// Refusals by the policy's own rules (Decision::by; policy/bypass.h).
Decision DenyGlob() { return Decision::RefuseBy(RefusedBy::kDenyGlob, EACCES, kDenyGlobRule); }
Decision ProtectedPath() {
  return Decision::RefuseBy(RefusedBy::kProtectedPath, EACCES, "protected path");
}

// A file of the user's that the journal keeps before a change: the run
// is recoverable there (sensitive.delete: recoverable, the workspace).
bool Journaled(const EntryFacts& e, const PlaceFacts& p, const Settings& s) {
  return s.recoverable && p.journaled && Exists(e) && !e.born_in_run && !p.disposable;
}

Decision Keeping(Decision d, Keep keep) {
  d.keep = keep;
  return d;
}

Decision OpenWrite(const FileRequest& r, const Settings& s) {
  if (r.place.deny_glob) return DenyGlob();
  if (r.place.new_worktree_link && !Exists(r.entry) && !r.tmpfile) {
    // git worktree add writes "../.." there: that content, whatever the
    // tool's bytes, so the link leads to the repository's own config.
    Decision d = Decision::Allow("a new worktree's commondir, made with the content git writes");
    d.make_link = true;
    return d;
  }
  if (r.place.protected_path) return ProtectedPath();
  if (r.place.guarded_config) return Decision::Refuse(EACCES, kGuardedConfigRule);
  if (RunsFifo(r.entry)) return Decision::Allow(kRunsFifoRule);
  if (!r.tmpfile && r.entry.kind != EntryKind::kDirectory) {
    if (const char* why = EntryRefusal(r.entry)) return Decision::Refuse(EACCES, why);
  }
  if (!r.created && NotOwn(r.place, r.entry)) {
    return Decision::Refuse(EACCES, "not made by this run (shared directory)");
  }
  if (!r.created && !r.tmpfile && r.entry.kind == EntryKind::kRegular &&
      Journaled(r.entry, r.place, s)) {
    // O_TRUNC: the old inode is moved into the journal and a new file takes
    // its name (O(1)); written in place: its bytes are copied first.
    return r.truncate ? Keeping(Decision::Allow("kept in the run's journal, then a new file"), Keep::kMove)
                      : Keeping(Decision::Allow("a copy kept in the run's journal"), Keep::kCopy);
  }
  return Decision::Allow(r.created ? "a new file in a writable path" : "a file in a writable path");
}

Decision Create(const FileRequest& r) {
  if (r.place.root) return Decision::Refuse(EEXIST, "a writable root exists");
  if (r.place.shared && r.create != EntryKind::kRegular) {
    return Decision::Refuse(EACCES, "only files in a shared directory");
  }
  if (r.place.file_grant && r.create != EntryKind::kRegular) {
    return Decision::Refuse(EACCES, "only a file where a file is granted");
  }
  if (r.place.deny_glob) return DenyGlob();
  if (r.place.protected_path) {
    // The kernel looks a name up before it asks Landlock: what exists is
    // EEXIST (mkdir -p), where the tool could see it anyway.
    return r.tool_sees_name ? Decision::Refuse(EEXIST, "protected path exists")
                            : ProtectedPath();
  }
  if (r.place.guarded_config) return Decision::Refuse(EACCES, kGuardedConfigRule);
  // A FIFO holds no content and acts on nothing: made where a file may be
  // (GNU make's jobserver, mkfifo). A device acts on hardware, and mknod
  // of a socket makes one nothing can listen on.
  if (r.place.git_entry && r.create == EntryKind::kSymlink) {
    return Decision::Refuse(EACCES, kGitEntryRule);
  }
  if (r.create == EntryKind::kFifo) return Decision::Allow("a FIFO, where a file may be made");
  if (IsSpecial(r.create)) return Decision::Refuse(EACCES, "special file");
  return Decision::Allow("a new name in a writable path");
}

Decision Delete(const FileRequest& r, const Settings& s) {
  if (r.place.root) return Decision::Refuse(EACCES, "a writable root");
  if (r.place.deny_glob) return DenyGlob();
  // A new worktree's commondir redirects nothing once it is gone (git
  // worktree remove, prune): the run's own file, as any other. Nor does a
  // gitfile or an older worktree's commondir (PlaceFacts::removable_link),
  // an unlink of a regular file; kUnknown: the place alone is asked, the
  // entry next.
  const bool removable =
      r.place.new_worktree_link ||
      (r.place.removable_link && !r.want_dir &&
       (r.entry.kind == EntryKind::kRegular || r.entry.kind == EntryKind::kUnknown));
  if (r.place.protected_path && !removable) {
    // rmdir of a protected directory the tool sees holding entries: it
    // would not be removed anyway, and git's rmdir(".git") (git stash)
    // expects ENOTEMPTY. An empty one is refused by the rule.
    const bool full = r.want_dir && r.entry.kind == EntryKind::kDirectory && r.entry.has_entries;
    return full && r.tool_sees_name ? Decision::Refuse(ENOTEMPTY, "directory not empty")
                                    : ProtectedPath();
  }
  if (r.entry.pinned) return Decision::Refuse(EACCES, "holds a denied or protected path");
  if (NotOwn(r.place, r.entry)) return Decision::Refuse(EACCES, "not made by this run (shared directory)");
  // The kernel's own error (EISDIR, ENOTDIR) follows a type mismatch.
  const bool is_dir = r.entry.kind == EntryKind::kDirectory;
  if (!Exists(r.entry) || is_dir != r.want_dir) return Decision::Allow("the kernel answers");
  if (is_dir && r.entry.has_entries) return Decision::Refuse(ENOTEMPTY, "directory not empty");
  if (s.delete_allowed) return Decision::Allow("sensitive.delete: allow");
  if (r.place.disposable) return Decision::Allow("the tool's own cache");
  if (r.entry.born_in_run) return Decision::Allow("made in this run");
  if (Journaled(r.entry, r.place, s)) return Keeping(Decision::Allow("kept in the run's journal"), Keep::kMove);
  if (is_dir) {
    // Emptied piecewise (each file under these same rules): asked like one.
    if (s.can_ask) return {Verdict::kAsk, 0, "the directory existed before the run: ask"};
    return Decision::Refuse(EACCES, "pre-existing directory");
  }
  if (const char* why = EntryRefusal(r.entry)) return Decision::Refuse(EACCES, why);
  if (s.can_ask) return {Verdict::kAsk, 0, "the file existed before the run: ask"};
  // Where no journal keeps it (outside the workspace), recoverable is no
  // answer: the rule says so, and its hint (policy/refusal_hint.h) too.
  return Decision::Refuse(EACCES, r.place.journaled ? kApprovalRule : kNoJournalApprovalRule);
}

Decision Rename(const FileRequest& r, const Settings& s) {
  if (r.place.root || r.other_place.root) return Decision::Refuse(EBUSY, "a writable root");
  if (r.place.deny_glob || r.other_place.deny_glob) return DenyGlob();
  // git's lock file renamed over the user's config: its content decides
  // (below); nothing else moves a protected path or onto one.
  const bool onto_users_config = r.other_place.users_config && r.op == FileOp::kRename;
  if (r.place.protected_path || (r.other_place.protected_path && !onto_users_config)) {
    return ProtectedPath();
  }
  // Onto a .git: only another .git (a repository's git dir moved with it).
  if (r.place.git_entry != r.other_place.git_entry &&
      (r.other_place.git_entry || r.op == FileOp::kExchange)) {
    return Decision::Refuse(EACCES, kGitEntryRule);
  }
  // Renaming a directory renames what lies beneath it: a protected path
  // moved away loses its name. EXDEV: tools copy, each file decided by name.
  if (r.place.leads_to_protected || r.other_place.leads_to_protected) {
    return Decision::Refuse(EXDEV, "a protected path could lie beneath");
  }
  // Into another root (the private TMPDIR, removed at the end) a move would
  // launder a delete.
  if (!r.same_root) return Decision::Refuse(EXDEV, "across writable roots");
  if ((r.place.leads_to_protected_any_depth || r.other_place.leads_to_protected_any_depth) &&
      r.entry.kind == EntryKind::kDirectory) {
    return Decision::Refuse(EXDEV, "a directory where a protected path could lie beneath");
  }
  // A directory moved carries its files into new names: a match of a glob
  // that looks at directory names could come of it. EXDEV: tools copy.
  if ((r.place.deny_glob_parents || r.other_place.deny_glob_parents) &&
      (r.entry.kind == EntryKind::kDirectory || r.other.kind == EntryKind::kDirectory)) {
    return Decision::Refuse(EXDEV, "a directory, where a deny glob looks at directory names");
  }
  if (Exists(r.other) && r.other.pinned) {
    return Decision::Refuse(EACCES, "over a denied or protected path");
  }
  const bool replaces = Exists(r.other) && r.op != FileOp::kExchange;
  const bool journal_other = replaces && Journaled(r.other, r.other_place, s);
  const bool replaces_users = replaces && !journal_other && !s.delete_allowed &&
                              !r.other.born_in_run && !r.other_place.disposable;
  if (replaces && r.other.kind == EntryKind::kDirectory && r.other.has_entries) {
    return Decision::Refuse(ENOTEMPTY, "over a directory not empty");
  }
  if (replaces_users && r.other.kind == EntryKind::kDirectory) {
    return Decision::Refuse(EACCES, "over a pre-existing directory");
  }
  if (r.entry.pinned) return Decision::Refuse(EACCES, "holds a denied or protected path");
  if (NotOwn(r.place, r.entry) || NotOwn(r.other_place, r.other)) {
    return Decision::Refuse(EACCES, "not made by this run (shared directory)");
  }
  if (r.other_place.guarded_config) {
    // git's lock file renamed over the config: its content decides. An
    // exchange would put the config's old bytes where the source was, and
    // the source's unchecked ones in place: refused.
    if (r.op == FileOp::kExchange) return Decision::Refuse(EACCES, kGuardedConfigRule);
    switch (r.source_content) {
      case ContentFact::kUnknown: return Decision::Allow("content not read yet");
      case ContentFact::kRunnable:
        return Decision::Refuse(EACCES, "a new repository's config may not set a key that runs a "
                                        "program (core.fsmonitor, core.hooksPath, ...)");
      case ContentFact::kChangesUsers:
        return Decision::Refuse(EACCES, "protected path: a config the user had changes only by a "
                                        "submodule's registration (git submodule init) or "
                                        "user.name/user.email");
      case ContentFact::kUnreadable:
        return Decision::Refuse(EACCES, "a new repository's config: only a regular file's content "
                                        "that can be checked takes its place");
      case ContentFact::kSafe: break;
    }
    Decision d = Decision::Allow("checked content renamed over a repository's config");
    d.copy_checked = true;
    return d;
  }
  if (journal_other) return Keeping(Decision::Allow("the file replaced is kept in the run's journal"), Keep::kMove);
  Decision d = Decision::Allow(replaces_users ? "replaces a file of the user's" : "a rename");
  d.launders = replaces_users;
  return d;
}

Decision Link(const FileRequest& r) {
  if (!r.same_root) return Decision::Refuse(EXDEV, "across writable roots");
  if (r.other_place.git_entry) return Decision::Refuse(EACCES, kGitEntryRule);
  if (r.place.root || r.other_place.root) return Decision::Refuse(EPERM, "a writable root");
  if (r.place.deny_glob || r.other_place.deny_glob) return DenyGlob();
  if (r.other_place.protected_path) return ProtectedPath();
  if (r.other_place.guarded_config) return Decision::Refuse(EACCES, kGuardedConfigRule);
  // The new name would not be protected: a writer that trusts names could
  // change the protected file through it.
  if (r.place.protected_path) return Decision::Refuse(EACCES, "from a protected path");
  if (r.entry.pinned) return Decision::Refuse(EACCES, "a denied or protected path");
  if (r.place.shared && (r.entry.kind == EntryKind::kAbsent || (Exists(r.entry) && !r.entry.own))) {
    return Decision::Refuse(EACCES, "not made by this run (shared directory)");
  }
  return Decision::Allow("a second name in one writable root");
}

Decision MetadataAllowed(const FileRequest& r, const Settings& s);

// An allowed change keeps, in a recoverable run, the old value of what it
// alters (MetadataKeep); a truncate keeps a copy instead (MetadataAllowed).
Decision Metadata(const FileRequest& r, const Settings& s) {
  Decision d = MetadataAllowed(r, s);
  if (d.allowed() && !r.truncate) d.keep = MetadataKeep(r.entry, r.place, s);
  return d;
}

Decision MetadataAllowed(const FileRequest& r, const Settings& s) {
  if (r.place.deny_glob) return DenyGlob();
  if (r.place.protected_path) return ProtectedPath();
  if (NotOwn(r.place, r.entry)) return Decision::Refuse(EACCES, "not made by this run (shared directory)");
  // The link itself, not what it points to: tar and cp -a give each link
  // they make its owner and times (lchown, utimensat NOFOLLOW).
  if (r.entry.kind == EntryKind::kSymlink && r.nofollow && r.entry.nlink == 1) {
    return Decision::Allow("the symbolic link itself");
  }
  // A FIFO or socket has no content: its mode, owner, times (Python's
  // forkserver chmods the socket it listens on) change nothing a file
  // holds. truncate(2) of one is the kernel's EINVAL; a device stays
  // refused below; set-id bits are refused as for files (attr_apply.cc).
  if (r.entry.kind == EntryKind::kFifo || r.entry.kind == EntryKind::kSocket) {
    if (r.entry.nlink > 1) return Decision::Refuse(EACCES, "hard-linked special file (nlink > 1)");
    if (r.truncate) return Decision::Refuse(EINVAL, "truncate of a FIFO or socket");
    return Decision::Allow("a FIFO or socket: no content, its metadata only");
  }
  if (const char* why = EntryRefusal(r.entry)) return Decision::Refuse(EACCES, why);
  if (r.truncate && r.entry.kind == EntryKind::kRegular && Journaled(r.entry, r.place, s)) {
    return Keeping(Decision::Allow("a copy kept in the run's journal"), Keep::kCopy);
  }
  return Decision::Allow("a file in a writable path");
}

// The broker reads what a launch-time grant of the path would have let the
// kernel read, nothing more: a regular file or a directory, not a
// device, FIFO or socket (opening one acts on it), not a deny glob's
// match that came into being after the launch scan, not a denied
// file reached by another name (a hard link: its inode is pinned), and not
// a directory whose listing would name an unlisted denial (Landlock gives
// the directories on the way to one no listing right at all; the broker
// lists those above it and beside it, one directory at a time).
Decision Read(const FileRequest& r) {
  if (r.place.deny_glob) return DenyGlob();
  if (r.entry.kind == EntryKind::kRegular && r.entry.pinned) {
    return Decision::Refuse(EACCES, "another name of a denied file");
  }
  if (r.entry.kind == EntryKind::kDirectory && r.entry.holds_unlisted) {
    return Decision::Refuse(EACCES,
                            "a directory holding an unlisted denial (cordon's own records)");
  }
  if (RunsFifo(r.entry)) return Decision::Allow(kRunsFifoRule);
  if (r.entry.kind != EntryKind::kRegular && r.entry.kind != EntryKind::kDirectory) {
    if (const char* why = EntryRefusal(r.entry)) return Decision::Refuse(EACCES, why);
  }
  return Decision::Allow("readable: brokered beside a carve-out");
}

}  // namespace

const char* EntryRefusal(const EntryFacts& e) {
  switch (e.kind) {
    case EntryKind::kSymlink: return "symbolic link";
    case EntryKind::kSpecial:
    case EntryKind::kFifo:
    case EntryKind::kSocket:
      return "special file";
    case EntryKind::kRegular: return e.nlink > 1 ? "hard-linked file (nlink > 1)" : nullptr;
    case EntryKind::kUnknown:
    case EntryKind::kAbsent:
    case EntryKind::kDirectory: return nullptr;
  }
  return "unknown entry";
}

Keep MetadataKeep(const EntryFacts& e, const PlaceFacts& p, const Settings& s) {
  // The workspace itself has no name in it for a record to hold.
  if (p.root) return Keep::kNothing;
  return Journaled(e, p, s) ? Keep::kAttr : Keep::kNothing;
}

Decision Decide(const FileRequest& req, const Settings& settings) {
  switch (req.op) {
    case FileOp::kOpenWrite: return OpenWrite(req, settings);
    case FileOp::kCreate: return Create(req);
    case FileOp::kDelete: return Delete(req, settings);
    case FileOp::kRename:
    case FileOp::kExchange: return Rename(req, settings);
    case FileOp::kLink: return Link(req);
    case FileOp::kMetadata: return Metadata(req, settings);
    case FileOp::kRead: return Read(req);
  }
  return Decision::Refuse(EACCES, "unknown operation");
}

Decision DecideAt(const std::vector<PathRule>& rules, std::string_view abs,
                  const FileRequest& req, const Settings& settings) {
  Covered c = CoverPath(rules, abs, /*reads=*/req.op == FileOp::kRead);
  if (c.err != 0) return Decision::Refuse(c.err, c.why);
  return Decide(req, settings);
}

}  // namespace cordon::policy
