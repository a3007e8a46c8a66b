// The emulator's calls that make or move a name: rename (and exchange),
// mkdir, symlink, mknod, link. Each asks policy::Decide with the facts it
// gathered beneath the held roots, then performs the call there.
#include <fcntl.h>
#include <linux/fs.h>
#include <seccomp.h>
#include <spdlog/spdlog.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/time.h>
#include <sys/xattr.h>
#include <unistd.h>
#include <utime.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <optional>

#include "policy/fd_alias.h"
#include "policy/path_segments.h"
#include "policy/refusal_hint.h"
#include "supervisor/caps.h"
#include "supervisor/creation_umask.h"
#include "supervisor/emulator.h"
#include "supervisor/exec/tool_pin.h"
#include "supervisor/tool_creds.h"
#include "supervisor/tool_fd.h"
#include "supervisor/tool_memory.h"
#include "supervisor/tool_path.h"
#include "supervisor/uapi.h"
#include "supervisor/walk/dir_listing.h"

namespace cordon::supervisor {

Reply Emulator::Rename(const Request& req, int olddir, uint64_t oldpath, int newdir,
                       uint64_t newpath, unsigned flags, const std::function<bool()>& valid) {
  if (flags & RENAME_WHITEOUT) return Reply::Errno(EPERM, "rename whiteout");
  Named from_named, to_named;
  auto from = ResolvePath(req, olddir, oldpath, false, Change::kEntry, &from_named);
  auto to = ResolvePath(req, newdir, newpath, false, Change::kEntry, &to_named);
  if (!valid()) return Reply::Errno(EACCES, "stale");
  // A refusal by the policy's own rules may be offered as a bypass
  // (sandbox.allowBypass; never an exchange). Each end's place says what
  // refused it there; an end the lookup refused says so itself.
  auto bypass = [&](Reply refused, const std::string& rule) {
    if (flags & RENAME_EXCHANGE) return refused;
    auto by = [this](Result<Path>& p) {
      return p ? policy::RefusedByPlace(Place(p->loc)) : policy::RefusedBy::kOther;
    };
    auto at = BypassRenamePlaces(from_named, to_named, by(from), by(to));
    if (!at) return refused;
    return BypassRename(req, at->first, at->second, flags, rule, std::move(refused), valid);
  };
  if (!from) return bypass(Reply::NameRefused("rename: ", from.error()), from.error().op);
  if (!to) return bypass(Reply::NameRefused("rename: ", to.error()), to.error().op);
  const std::string what = "rename " + from->abs + " -> " + to->abs;
  policy::FileRequest q;
  q.op = (flags & RENAME_EXCHANGE) ? policy::FileOp::kExchange : policy::FileOp::kRename;
  q.place = Place(from->loc, true);
  q.other_place = Place(to->loc, true);
  q.same_root = from->loc.root == to->loc.root;
  const policy::Settings settings = DecideSettings();
  if (auto d = policy::Decide(q, settings); d.verdict == policy::Verdict::kRefuse) {
    // The hint is for the end a protected path refused, if one did.
    const std::string& end = q.other_place.protected_path ? to->abs : from->abs;
    Reply refused = Reply::Refused(d, what, end);
    if (d.by == policy::RefusedBy::kOther) return refused;
    return bypass(std::move(refused), d.rule);
  }
  auto pf = WriteRoots::OpenParent(from->loc);
  if (!pf) return Reply::Errno(pf.error().err);
  // Beneath a "**" pattern's lead (.git/modules/NAME, NAME any depth) git
  // renames its own files: there only a directory is refused, so its type
  // is a fact. It cannot change before the rename below: every call that
  // makes a directory or a name in the workspace is answered on this
  // thread, one at a time (a deferred delete only removes).
  struct stat src {};
  bool src_known = false;
  auto stat_source = [&] {
    src_known = ::fstatat(pf->get(), from->name().c_str(), &src, AT_SYMLINK_NOFOLLOW) == 0;
    return src_known;
  };
  if (q.place.leads_to_protected_any_depth || q.other_place.leads_to_protected_any_depth ||
      q.place.deny_glob_parents) {
    if (stat_source()) q.entry = Facts(src, from->loc);
  }
  // Within one directory (the common rename) its fd serves both ends.
  Fd pt_own;
  int pt = pf->get();
  if (to->loc.parent_rel != from->loc.parent_rel) {
    auto o = WriteRoots::OpenParent(to->loc);
    if (!o) return Reply::Errno(o.error().err);
    pt_own = std::move(o.value());
    pt = pt_own.get();
  }
  EntryStat dst;
  const bool dst_exists = StatEntry(pt, to->name(), dst);
  q.other.kind = policy::EntryKind::kAbsent;
  if (dst_exists) {
    q.other = Facts(dst.st, to->loc);
    q.other.born_in_run = BornInRun(dst);
  }
  // The source's inode is needed against pins, to be marked when it
  // replaces a file of the user's and to tell a replaced inode from itself
  // (renaming a name onto itself removes nothing): one syscall fewer for a
  // plain rename.
  const bool replaces = dst_exists && !(flags & RENAME_EXCHANGE);
  if (!src_known && (rules().roots.HasPins() || replaces || from->loc.root->own_entries_only)) {
    if (!stat_source()) return Reply::Errno(errno);
    q.entry = Facts(src, from->loc);
  }
  // The kernel's own answers first, where they do not depend on the rules:
  // a taken name under RENAME_NOREPLACE, a file over a directory.
  if (dst_exists && (flags & RENAME_NOREPLACE)) return Reply::Errno(EEXIST);
  if (replaces && S_ISDIR(dst.st.st_mode) && src_known && !S_ISDIR(src.st_mode)) {
    return Reply::Errno(EISDIR);
  }
  // git's lock file renamed over a new repository's config: what it holds.
  CheckedFile checked;
  if (q.other_place.guarded_config && !(flags & RENAME_EXCHANGE)) {
    checked = ReadChecked(from->loc, q.other_place.users_config ? &to->loc : nullptr);
    q.source_content = checked.fact;
  }
  policy::Decision d = policy::Decide(q, settings);
  if ((d.verdict != policy::Verdict::kAllow || d.keep == policy::Keep::kMove) && replaces &&
      S_ISDIR(dst.st.st_mode)) {
    q.other.has_entries = HasEntries(to->loc);
    d = policy::Decide(q, settings);
  }
  if (d.verdict != policy::Verdict::kAllow) {
    return Reply::Errno(d.err, what + ": " + d.rule + checked.keys);
  }
  if (d.copy_checked) {
    Reply put = PutChecked(checked, pf->get(), from->name(), pt, to->name());
    struct stat made;
    if (put.error == 0 && Journals(to->loc) &&
        ::fstatat(pt, to->loc.name.c_str(), &made, AT_SYMLINK_NOFOLLOW) == 0) {
      if (dst_exists) NoteDropped(to->loc, dst.st);
      NoteDropped(from->loc, checked.st);
      NoteCreated(to->loc, made);
    }
    return put;
  }
  if (Journals(from->loc) && !src_known && !stat_source()) return Reply::Errno(errno);
  const bool same_inode = replaces && src.st_dev == dst.st.st_dev && src.st_ino == dst.st.st_ino;
  // The kernel's ENOTDIR for a directory over a file, before the file is
  // moved out of the way.
  if (d.keep == policy::Keep::kMove && replaces && S_ISDIR(src.st_mode) &&
      !S_ISDIR(dst.st.st_mode)) {
    return Reply::Errno(ENOTDIR);
  }
  if (d.keep == policy::Keep::kMove && !same_inode) {
    if (auto refused = Keep(to->loc, pt, to->loc.name, dst.st, "replace"))
      return std::move(*refused);
  }
  if (::renameat2(pf->get(), from->name().c_str(), pt, to->name().c_str(), flags) != 0) {
    return Reply::Errno(errno);
  }
  // The run's FIFOs are removed at its end by the name they have then.
  if (S_ISFIFO(src.st_mode)) MovedFifo(src, to->abs);
  if ((flags & RENAME_EXCHANGE) && S_ISFIFO(dst.st.st_mode)) MovedFifo(dst.st, from->abs);
  if (Journals(from->loc) && !same_inode) {
    if (flags & RENAME_EXCHANGE) {
      NoteExchanged(from->loc, to->loc, src, dst.st);
    } else {
      if (replaces && d.keep != policy::Keep::kMove) NoteDropped(to->loc, dst.st);
      NoteMoved(from->loc, to->loc, src);
    }
  }
  // The moved inode now stands where the user's file was: deleting it is
  // deleting the user's file (no laundering through an overwrite).
  if (d.launders) laundered_.Insert(src.st_dev, src.st_ino);
  if (replaces && (src.st_dev != dst.st.st_dev || src.st_ino != dst.st.st_ino)) Gone(dst.st);
  return Reply{};
}

Reply Emulator::Create(const Request& req, int dirfd, uint64_t path, int kind, uint64_t arg,
                       const std::function<bool()>& valid) {
  std::string target;
  if (kind == S_IFLNK) {
    auto t = ReadToolString(req.tid, arg, PATH_MAX);
    if (!t) return Reply::Errno(t.error().err);
    target = std::move(t.value());
  }
  auto name = ReadToolString(req.tid, path, PATH_MAX);
  if (!name) return Reply::Errno(name.error().err);
  auto p = Resolve(req, dirfd, name.value(), false);
  if (!valid()) return Reply::Errno(EACCES, "stale");
  // A name that exists is EEXIST before anything else, as from the kernel
  // (which looks the name up before it asks Landlock): `mkdir -p` and
  // cmake make every ancestor, /tmp and the workspace's parents included.
  // Only where the tool's own stat would find it (ToolSeesEntry).
  if (!p) {
    // A name is made (but by an open) only where a directory is granted:
    // `--rw` of a name that does not exist yet grants a file, so the hint
    // names the directory it would be made in.
    const SysError& e = p.error();
    Reply refused = Reply::NameRefused("create: ", e);
    if (p.error().err != EACCES) return refused;
    auto abs = ToolAbsolute(req.tid, dirfd, name.value());  // Resolve's, unlocated
    if (abs && ToolSeesEntry(abs.value())) return Reply::Errno(EEXIST);
    if (!abs || kind != S_IFDIR) return refused;
    auto at = BypassPlace(policy::FileOp::kCreate, {name.value(), abs.value()},
                          policy::RefusedBy::kOther, /*directory=*/true);
    if (!at) return refused;
    return BypassMkdir(req, *at, static_cast<mode_t>(arg), p.error().op, std::move(refused), valid);
  }
  policy::FileRequest q;
  q.op = policy::FileOp::kCreate;
  q.entry.kind = policy::EntryKind::kAbsent;
  q.place = Place(p->loc);
  const mode_t type = static_cast<mode_t>(arg) & S_IFMT;
  q.create = kind == S_IFLNK                ? policy::EntryKind::kSymlink
             : kind == S_IFDIR              ? policy::EntryKind::kDirectory
             : type == 0 || type == S_IFREG ? policy::EntryKind::kRegular
                                            : KindOf(type);
  q.tool_sees_name = q.place.protected_path && ToolSeesEntry(p->abs);
  if (auto d = policy::Decide(q, DecideSettings()); !d.allowed()) {
    Reply refused = Reply::Refused(d, "create " + p->abs, p->abs);
    auto at = kind == S_IFDIR ? BypassPlace(policy::FileOp::kCreate, {name.value(), p->abs}, d.by,
                                            /*directory=*/true)
                              : std::nullopt;
    if (!at) return refused;
    return BypassMkdir(req, *at, static_cast<mode_t>(arg), d.rule, std::move(refused), valid);
  }
  auto parent = WriteRoots::OpenParent(p->loc);
  if (!parent) return Reply::Errno(parent.error().err);
  auto tool_umask = umask_.Get(req.tid, valid);
  if (!tool_umask) return Reply::Errno(EACCES, "stale");
  const CreationUmask creation(tool_umask.value());
  mode_t mode = static_cast<mode_t>(arg);
  int rc;
  if (kind == S_IFLNK) {
    rc = ::symlinkat(target.c_str(), parent->get(), p->name().c_str());
  } else if (kind == S_IFDIR) {
    rc = ::mkdirat(parent->get(), p->name().c_str(), creation.Mode(mode));
  } else {
    const mode_t made = q.create == policy::EntryKind::kFifo ? S_IFIFO : S_IFREG;
    rc = ::mknodat(parent->get(), p->name().c_str(), made | creation.Mode(mode), 0);
  }
  if (rc != 0) return Reply::Errno(errno);
  if (kind != S_IFLNK && !creation.exact()) {
    // Only with no umask of its own (a container): the entry just made,
    // put right if cordon's umask took what the tool's did not.
    auto made = WriteRoots::OpenBeneath(*p->loc.root, p->loc.rel, O_PATH | O_NOFOLLOW, 0);
    if (made && !creation.FixMode(made->get(), mode)) return Reply::Errno(errno);
  }
  struct stat st;
  if (::fstatat(parent->get(), p->loc.name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) {
    Born(st);
    NoteCreated(p->loc, st);
    if (S_ISFIFO(st.st_mode)) MadeFifoAt(p->abs, st);
  }
  if (p->loc.root->own_entries_only) made_shared_ = true;
  return Reply{};
}

Reply Emulator::Link(const Request& req, int olddir, uint64_t oldpath, int newdir, uint64_t newpath,
                     int flags, const std::function<bool()>& valid) {
  if (flags & AT_EMPTY_PATH) return Reply::Errno(EACCES, "link from a descriptor");
  if (flags & ~AT_SYMLINK_FOLLOW) return Reply::Errno(EINVAL);
  Named from_named, to_named;
  auto from = ResolvePath(req, olddir, oldpath, false, Change::kEntry, &from_named);
  auto to = ResolvePath(req, newdir, newpath, false, Change::kEntry, &to_named);
  if (!valid()) return Reply::Errno(EACCES, "stale");
  // A new name the policy's own rules refuse, for a file the tool may
  // write, may be offered as a bypass (sandbox.allowBypass;
  // emulator_bypass_more.cc). Each end's place says what refused it there.
  auto bypass = [&](Reply refused, const std::string& rule) {
    auto by = [this](Result<Path>& p) {
      return p ? policy::RefusedByPlace(Place(p->loc)) : policy::RefusedBy::kOther;
    };
    auto at = BypassLinkPlaces(from_named, to_named, by(from), by(to));
    if (!at) return refused;
    return BypassLink(req, at->first, at->second, rule, std::move(refused), valid);
  };
  if (!from) return Reply::PathRefused("link: ", from.error());
  if (!to) return bypass(Reply::NameRefused("link: ", to.error()), to.error().op);
  const std::string what = "link " + from->abs + " -> " + to->abs;
  policy::FileRequest q;
  q.op = policy::FileOp::kLink;
  q.place = Place(from->loc);
  q.other_place = Place(to->loc);
  q.same_root = from->loc.root == to->loc.root;
  const policy::Settings settings = DecideSettings();
  if (auto d = policy::Decide(q, settings); d.verdict == policy::Verdict::kRefuse) {
    // The hint is for the end a protected path refused, if one did.
    const std::string& end = q.other_place.protected_path ? to->abs : from->abs;
    Reply refused = Reply::Refused(d, what, end);
    if (d.by == policy::RefusedBy::kOther) return refused;
    return bypass(std::move(refused), d.rule);
  }
  auto pf = WriteRoots::OpenParent(from->loc);
  if (!pf) return Reply::Errno(pf.error().err);
  auto pt = WriteRoots::OpenParent(to->loc);
  if (!pt) return Reply::Errno(pt.error().err);
  struct stat src;
  q.entry.kind = policy::EntryKind::kAbsent;
  if (::fstatat(pf->get(), from->name().c_str(), &src, AT_SYMLINK_NOFOLLOW) == 0) {
    q.entry = Facts(src, from->loc);
  }
  // AT_SYMLINK_FOLLOW changes nothing for a source that is no symlink
  // (Python's os.link passes it whenever it uses linkat); following one is
  // not done. The link is made without the flag, so a source swapped for a
  // symlink meanwhile is linked itself, never followed.
  if ((flags & AT_SYMLINK_FOLLOW) && q.entry.kind == policy::EntryKind::kSymlink) {
    return Reply::Errno(EACCES, what + ": link following links");
  }
  if (auto d = policy::Decide(q, settings); !d.allowed()) {
    return Reply::Refused(d, what, q.other_place.protected_path ? to->abs : from->abs);
  }
  if (::linkat(pf->get(), from->name().c_str(), pt->get(), to->name().c_str(), 0) != 0) {
    return Reply::Errno(errno);
  }
  NoteCreated(to->loc, src);
  return Reply{};
}

}  // namespace cordon::supervisor
