// The emulator's opens: write-opens performed beneath a held root and
// handed to the tool with SECCOMP_IOCTL_NOTIF_ADDFD, on the notify-all
// rung the reads the read fence admits, and on every rung the brokered
// reads (wire::kBrokerOpenFlag: what the policy lets the tool read where
// Landlock's launch-time grant could not reach). Decisions are
// policy::Decide's (emulator.h); this file is the mechanism.
#include "supervisor/emulator.h"

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
#include "policy/refusal_hint.h"
#include "preload/wire.h"
#include "supervisor/exec/tool_pin.h"
#include "supervisor/walk/dir_listing.h"
#include "supervisor/caps.h"
#include "supervisor/creation_umask.h"
#include "supervisor/tool_creds.h"
#include "supervisor/tool_fd.h"
#include "supervisor/tool_memory.h"
#include "supervisor/tool_path.h"
#include "supervisor/uapi.h"

namespace cordon::supervisor {
namespace {

constexpr uint64_t kBareTmpfile = 020000000;

// What open(2) honours with O_PATH (it ignores every other flag), and all
// openat2(2) accepts with it: anything more is EINVAL there.
constexpr uint64_t kOPathFlags = O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;

// No controlling terminal from an open made for the tool; O_PATH takes no
// such flag.
uint64_t NoCtty(uint64_t flags) { return (flags & O_PATH) ? flags : flags | O_NOCTTY; }

// The reply that installs `fd`, opened for the tool with `flags`. ADDFD
// cannot install an O_PATH file (seccomp_notify_addfd() takes it with
// fget(), which skips them: EBADF), so an O_PATH open the supervisor
// admitted is handed over as a read-only open of the same inode: what
// admitted it (the read fence, a writable root) grants reading it anyway.
// Only regular files and directories: reopening a FIFO or device acts on it.
Reply InstallReply(Fd fd, uint64_t flags) {
  Reply rep;
  rep.install_flags = (flags & O_CLOEXEC) ? O_CLOEXEC : 0;
  if (flags & O_PATH) {
    struct stat st;
    if (::fstat(fd.get(), &st) != 0) return Reply::Errno(errno);
    int dir = S_ISDIR(st.st_mode) ? O_DIRECTORY : 0;
    if (!dir && !S_ISREG(st.st_mode)) return Reply::Errno(EACCES, "O_PATH open of a special file");
    fd = Fd(::open(ProcPath(fd.get()).c_str(), O_RDONLY | O_NOCTTY | O_CLOEXEC | dir));
    if (!fd) return Reply::Errno(errno);
  }
  rep.install = std::move(fd);
  return rep;
}

// An open made for the tool must not wait on a FIFO: this thread would wait
// with it, and a FIFO nobody opens would hold cordon at its exit. So it is
// made with O_NONBLOCK added (unless the tool asked for it, or for O_PATH,
// which never waits and takes no other flag), and a FIFO, socket or device
// found is refused, as is ENXIO then (one with no reader). A lease's
// EWOULDBLOCK (a file server's, on a regular file) is opened again
// without: the kernel would wait for its break. `open(extra)` opens with
// `extra` added; *added says whether the open that answered had the
// O_NONBLOCK added (for ENXIO, and for RestoreStatusFlags).
template <typename OpenFn>
Result<Fd> OpenWithoutWaiting(uint64_t flags, const OpenFn& open, bool* added) {
  const uint64_t extra = (flags & (O_NONBLOCK | O_PATH)) ? 0 : O_NONBLOCK;
  Result<Fd> fd = open(extra);
  *added = extra != 0;
  if (!fd && extra && fd.error().err == EWOULDBLOCK) {
    *added = false;
    return open(0);
  }
  return fd;
}

// Puts back the file status flags `flags` asks for (F_SETFL's: O_APPEND,
// O_DIRECT, O_NOATIME, O_NONBLOCK) on a file OpenWithoutWaiting gave
// an O_NONBLOCK.
bool RestoreStatusFlags(int fd, uint64_t flags) {
  constexpr uint64_t kStatusFlags = O_APPEND | O_DIRECT | O_NOATIME | O_NONBLOCK;
  return ::fcntl(fd, F_SETFL, static_cast<int>(flags & kStatusFlags)) == 0;
}

}  // namespace

Reply Emulator::OpenForRead(const Request& req, const std::string& abs, uint64_t flags) {
  const std::string target = ForTool(abs, req.tid);
  if (auto fifo = ReadFifo(target, abs, flags)) return std::move(*fifo);
  bool probed = false;
  Located where;
  auto fd = OpenWithoutWaiting(
      flags,
      [&](uint64_t extra) {
        // O_NOFOLLOW: a last-component link is opened as itself (ELOOP, or
        // refused below for O_PATH: ADDFD cannot hand over a link).
        return read_fence_->Open(target, NoCtty(flags) | extra, !(flags & O_NOFOLLOW), &where);
      },
      &probed);
  if (!fd && probed && fd.error().err == ENXIO) {
    return Reply::Errno(EACCES, "read " + abs + ": special file");
  }
  if (!fd) return Reply::Errno(fd.error().err, "read " + abs + ": " + fd.error().op);
  struct stat st;
  if (::fstat(fd->get(), &st) != 0) return Reply::Errno(errno);
  if (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode) || S_ISBLK(st.st_mode)) {
    return Reply::Errno(EACCES, "read " + abs + ": special file");
  }
  // A file or directory, as a brokered read: no other name of a denied
  // file, no deny glob's match (the devices granted stay the rung's own).
  if (S_ISREG(st.st_mode) || S_ISDIR(st.st_mode)) {
    if (auto refused = RefuseRead(*read_fence_, where, st, abs)) return std::move(*refused);
  }
  if (probed && !RestoreStatusFlags(fd->get(), flags)) return Reply::Errno(errno);
  return InstallReply(std::move(fd.value()), flags);
}

std::optional<Reply> Emulator::RefuseRead(const ReadFence& fence, const Located& where,
                                          const struct stat& st, const std::string& abs,
                                          std::string* allowed) const {
  policy::FileRequest q;
  q.op = policy::FileOp::kRead;
  if (where.root != nullptr) q.place = Place(where);
  q.entry.kind = KindOf(st.st_mode);
  q.entry.nlink = static_cast<std::uint32_t>(st.st_nlink);
  q.entry.pinned = fence.readable.IsPinned(st.st_dev, st.st_ino);
  q.entry.born_in_run = MadeFifo(st);
  q.entry.holds_unlisted =
      S_ISDIR(st.st_mode) && fence.unlisted_parents.count({st.st_dev, st.st_ino}) > 0;
  const policy::Decision d = policy::Decide(q, DecideSettings());
  if (d.allowed()) {
    if (allowed != nullptr) *allowed = "read " + abs + ": " + d.rule;
    return std::nullopt;
  }
  return Reply::Errno(d.err, "read " + abs + ": " + d.rule);
}

Reply Emulator::OpenBrokered(const Request& req, const std::string& abs, uint64_t flags) {
  const ReadFence* fence = Readable();
  if (!fence) return Reply::Errno(EACCES, "read " + abs + ": the readable set is unknown");
  // Held as O_PATH first: nothing is opened (a device, a FIFO) before the
  // rules have seen what the name leads to.
  Located where;
  auto held = fence->Open(ForTool(abs, req.tid), O_PATH, !(flags & O_NOFOLLOW), &where);
  if (!held && held.error().err == EACCES) {
    // The rule lookup's refusal (a denied path; outside every rule: a
    // read, so --ro grants it), or a symlink swapped in on the way.
    const SysError& e = held.error();
    policy::Refusal r = policy::FromRule(e.op);
    if (r == policy::Refusal::kWriteOutside) r = policy::Refusal::kReadOutside;
    return Reply::Errno(EACCES, "read " + abs + ": " + Describe(e), policy::RefusalHint(r, e.detail));
  }
  if (!held) return Reply::Errno(held.error().err);  // ENOENT and the like: the kernel's own
  struct stat st;
  if (::fstat(held->get(), &st) != 0) return Reply::Errno(errno);
  if (S_ISLNK(st.st_mode)) return Reply::Errno(ELOOP);  // O_NOFOLLOW, as open(2) says
  // Allowed, it is a decision of the supervisor's like a refusal: the audit
  // log's record of it names the path and the rule (Reply::why).
  std::string allowed;
  if (auto refused = RefuseRead(*fence, where, st, abs, &allowed)) return std::move(*refused);
  auto brokered = [&](Reply r) {
    if (r.error == 0) r.why = std::move(allowed);
    return r;
  };
  if (flags & O_PATH) return brokered(InstallReply(std::move(held.value()), flags));
  if (S_ISFIFO(st.st_mode)) {
    return brokered(OpenFifo(std::make_shared<Fd>(std::move(*held)), flags));
  }
  // The inode decided is the one opened: through the held descriptor,
  // with the tool's flags (its link is resolved already).
  const uint64_t reopen = NoCtty(flags) & ~static_cast<uint64_t>(O_NOFOLLOW);
  bool probed = false;
  auto fd = OpenWithoutWaiting(
      flags,
      [&](uint64_t extra) -> Result<Fd> {
        Fd f(::open(ProcPath(held->get()).c_str(), static_cast<int>(reopen | extra) | O_CLOEXEC));
        if (!f) return Errno("open", abs);
        return f;
      },
      &probed);
  if (!fd) return Reply::Errno(fd.error().err);
  if (probed && !RestoreStatusFlags(fd->get(), flags)) return Reply::Errno(errno);
  return brokered(InstallReply(std::move(fd.value()), flags));
}

Reply Emulator::Open(const Request& req, int dirfd, uint64_t path_addr, uint64_t flags,
                     uint64_t mode, const std::function<bool()>& valid) {
  auto s = ReadToolString(req.tid, path_addr, PATH_MAX);
  if (!s) return Reply::Errno(s.error().err, "unreadable path");
  if (!valid()) return Reply::Errno(EACCES, "stale");
  const std::string& raw = s.value();
  // A brokered read (wire::kBrokerOpenFlag): no flag of the kernel's; the
  // open is decided below by policy, whoever set the bit.
  const bool brokered = flags & static_cast<uint64_t>(wire::kBrokerOpenFlag);
  flags &= ~static_cast<uint64_t>(wire::kBrokerOpenFlag);
  if (flags & O_PATH) flags &= kOPathFlags;  // as open(2): no write bit counts
  Reply rep;
  rep.install_flags = (flags & O_CLOEXEC) ? O_CLOEXEC : 0;
  if (auto t = policy::ParseTerminalPath(raw.c_str()); t.kind != policy::TerminalKind::kNone) {
    return OpenTerminal(req, t, flags, valid);
  }
  if (policy::IsWritableDevice(raw) || (read_fence_ && policy::IsReadableDevice(raw) && (flags & O_ACCMODE) == O_RDONLY)) {
    Fd fd(::open(raw.c_str(), static_cast<int>(flags & ~(O_CREAT | O_EXCL | O_TRUNC)) | O_CLOEXEC));
    if (!fd) return Reply::Errno(errno);
    rep.install = std::move(fd);
    return rep;
  }
  if (int n = policy::FdAliasNumber(raw.c_str()); n >= 0) {
    // The tool reopens a descriptor it already holds: hand it the same open
    // file (no new access), as long as the access mode asked for is covered
    // (policy/fd_alias.h). One held O_PATH grants nothing: the path rules.
    auto creds = ReadToolCreds(req.tid);
    if (!valid()) return Reply::Errno(EACCES, "stale");
    if (!creds) return Reply::Errno(ENOENT, "no such descriptor");
    auto held = GetToolFile(creds->tgid, n);
    if (!held && held.error().err == EAGAIN) return Reply::Errno(EAGAIN, held.error().op);
    if (!held) return Reply::Errno(ENOENT, "no such descriptor");
    switch (policy::JudgeHeldFd(static_cast<long>(held->flags), static_cast<int>(flags))) {
      case policy::HeldFd::kCovered:
        if (held->copy) {
          rep.install = std::move(held->fd);
          return rep;
        }
        // Without pidfd_getfd: the file the tool holds, opened again as the
        // kernel opens /dev/fd/N, through the inode already checked to be
        // the one held with those flags (GetToolFile). No new file is made.
        if (flags & kBareTmpfile) return Reply::Errno(EACCES, "O_TMPFILE through a held descriptor");
        rep.install = Fd(RetryAsSupervisor([&] {
          return ::open(ProcPath(held->fd.get()).c_str(),
                        static_cast<int>(flags & ~(O_CREAT | O_EXCL | O_NOFOLLOW)) | O_CLOEXEC);
        }));
        if (!rep.install) return Reply::Errno(errno);
        return rep;
      case policy::HeldFd::kNotHeld: return Reply::Errno(ENOENT, "no such descriptor");
      case policy::HeldFd::kNotCovered:
      case policy::HeldFd::kPathOnly: return Reply::Errno(EACCES, "descriptor not open for that");
    }
  }
  if (raw.empty()) return Reply::Errno(ENOENT);
  Path p;
  auto abs = ToolAbsolute(req.tid, dirfd, raw);
  if (!abs) return Reply::Errno(abs.error().err, "open " + raw + ": " + abs.error().op);
  p.abs = std::move(abs.value());
  p.slash = TrailingSlash(raw);
  constexpr uint64_t kWriteBits = O_WRONLY | O_RDWR | O_CREAT | O_TRUNC | O_APPEND | kBareTmpfile;
  if (brokered && !(flags & kWriteBits)) return OpenBrokered(req, p.abs, flags);
  if (read_fence_ && !(flags & kWriteBits)) return OpenForRead(req, p.abs, flags);
  auto located = rules().roots.Locate(p.abs, Change::kContent);
  if (!located) {
    Reply refused = Reply::PathRefused("open for writing: ", located.error());
    auto at = BypassPlace(policy::FileOp::kOpenWrite, {raw, p.abs}, policy::RefusedBy::kOther);
    if (!at || p.slash) return refused;
    return BypassOpen(req, *at, flags, mode, located.error().op, std::move(refused), valid);
  }
  p.loc = std::move(located.value());
  const Located* loc = &p.loc;
  std::string what;
  policy::FileRequest q;
  q.op = policy::FileOp::kOpenWrite;
  q.tmpfile = flags & kBareTmpfile;
  const policy::Settings settings = DecideSettings();
  std::string rel;
  policy::Decision place_refusal;
  bool make_link = false;
  // What the place alone refuses; again for the name a followed link gives.
  auto admit_place = [&]() -> std::optional<Reply> {
    what = "open for writing " + p.abs;
    q.place = Place(*loc);
    if (auto d = policy::Decide(q, settings); !d.allowed()) {
      place_refusal = d;
      return Reply::Refused(d, what, p.abs);
    } else {
      make_link = d.make_link;
    }
    rel = p.rel();  // with the tool's trailing slash, for the kernel to judge
    return std::nullopt;
  };
  if (auto refused = admit_place()) {
    // The name as the tool wrote it (no link followed yet): offered as a
    // bypass where the policy's own rule refused it.
    auto at = BypassPlace(policy::FileOp::kOpenWrite, {raw, p.abs}, place_refusal.by);
    if (!at || p.slash) return std::move(*refused);
    return BypassOpen(req, *at, flags, mode, place_refusal.rule, std::move(*refused), valid);
  }
  if (make_link && !p.slash) return MakeWorktreeLink(req, p, q, flags, mode, valid);
  uint64_t perm = 0;
  std::optional<CreationUmask> creation;
  if (flags & (O_CREAT | kBareTmpfile)) {
    auto umask = umask_.Get(req.tid, valid);
    if (!umask) return Reply::Errno(EACCES, "stale");
    creation.emplace(umask.value());
    perm = creation->Mode(static_cast<mode_t>(mode));
  }
  // O_TRUNC is applied once the verified fd is installed (Reply). A
  // creation is tried exclusively first, so the supervisor knows whether it
  // made the file (BornInRun); an existing one is then opened as it is.
  const uint64_t open_flags = NoCtty(flags & ~static_cast<uint64_t>(O_TRUNC));
  const bool exclusive_first = (flags & O_CREAT) && !(flags & O_EXCL);
  // What may exist already is opened without waiting on a FIFO; what is
  // kept gets the tool's flags back below.
  bool probed = false;
  auto open_existing = [&](uint64_t f, uint64_t m) {
    return OpenWithoutWaiting(
        flags,
        [&](uint64_t extra) { return WriteRoots::OpenBeneath(*loc->root, rel, f | extra, m); },
        &probed);
  };
  bool created = false;
  Result<Fd> fd = SysError{ENOENT, "open"};
  for (bool followed = false;;) {
    for (int attempt = 0; attempt < 8; ++attempt) {
      probed = false;
      fd = exclusive_first ? WriteRoots::OpenBeneath(*loc->root, rel, open_flags | O_EXCL, perm)
                           : open_existing(open_flags, perm);
      if (fd) {
        created = (flags & O_CREAT) != 0;
        break;
      }
      if (!exclusive_first || fd.error().err != EEXIST) break;
      fd = open_existing(open_flags & ~static_cast<uint64_t>(O_CREAT), 0);
      if (fd || fd.error().err != ENOENT) break;  // ENOENT: removed in between, create again
    }
    if (fd || followed || fd.error().err != EACCES || q.tmpfile) break;
    // A last-component link (the open above follows none): what the kernel
    // does with it, beneath the writable roots, link by link (FollowLinks).
    auto link = WriteRoots::OpenBeneath(*loc->root, loc->rel, O_PATH | O_NOFOLLOW, 0);
    struct stat lst;
    if (!link || ::fstat(link->get(), &lst) != 0 || !S_ISLNK(lst.st_mode)) break;
    if ((flags & O_NOFOLLOW) && !p.slash) return Reply::Errno(ELOOP);
    auto target = FollowLinks(p, std::move(link.value()));
    if (!target && target.error().err != ENOENT) {  // ENOENT: a dangling link, p names its target
      return Reply::Errno(target.error().err, what + ": " + Describe(target.error()));
    }
    followed = true;
    if (auto refused = admit_place()) return std::move(*refused);
  }
  if (!fd && probed && fd.error().err == ENXIO) {  // a FIFO with no reader, a socket
    // The run's own FIFO: opened as the tool asked, waiting for a reader.
    auto held = WriteRoots::OpenBeneath(*loc->root, rel, O_PATH | O_NOFOLLOW, 0);
    struct stat fst;
    if (held && ::fstat(held->get(), &fst) == 0 && S_ISFIFO(fst.st_mode)) {
      q.entry = Facts(fst, *loc);
      q.entry.born_in_run = MadeFifo(fst);
      const policy::Decision d = policy::Decide(q, settings);
      if (!d.allowed()) return Reply::Errno(d.err, what + ": " + d.rule);
      return OpenFifo(std::make_shared<Fd>(std::move(held.value())), open_flags);
    }
    q.entry.kind = policy::EntryKind::kSpecial;
    return Reply::Errno(EACCES, what + ": " + policy::Decide(q, settings).rule);
  }
  if (!fd) {
    return Reply::Errno(fd.error().err, fd.error().err == EACCES
                                            ? "open for writing " + p.abs + ": symlink on the way"
                                            : "");
  }
  if ((created || (flags & kBareTmpfile)) && !creation->FixMode(fd->get(), static_cast<mode_t>(mode))) {
    return Reply::Errno(errno);
  }
  struct stat st;
  if (::fstat(fd->get(), &st) != 0) return Reply::Errno(errno);
  q.entry = Facts(st, *loc);
  q.entry.born_in_run = MadeFifo(st);  // a FIFO's (a file's: below)
  q.created = created;
  q.truncate = flags & O_TRUNC;
  if (!created && Journals(*loc) && S_ISREG(st.st_mode)) {
    EntryStat e;
    if (!StatEntry(fd->get(), "", e)) return Reply::Errno(errno);
    q.entry.born_in_run = BornInRun(e);
    st = e.st;
  }
  const policy::Decision decided = policy::Decide(q, settings);
  if (!decided.allowed()) return Reply::Errno(decided.err, what + ": " + decided.rule);
  if (q.place.git_entry && S_ISREG(st.st_mode)) NoteGitFile(p.abs);
  if (probed && !RestoreStatusFlags(fd->get(), open_flags)) return Reply::Errno(errno);
  if (decided.keep == policy::Keep::kMove) return TruncateKept(*loc, flags, st);
  if (decided.keep == policy::Keep::kCopy) {
    // The user's file, written in place (never one this call created):
    // installed once its copy is kept, or once a write unkept is allowed.
    auto held = std::make_shared<Fd>(std::move(fd.value()));
    return KeepCopy(*loc, held, st, req, valid, [held, flags, st] {
      Reply r = InstallReply(std::move(*held), flags);
      r.truncate_installed = (flags & O_TRUNC) && S_ISREG(st.st_mode);
      return r;
    });
  }
  if (!created) {
    const bool writes = (flags & O_ACCMODE) != O_RDONLY || (flags & O_TRUNC);
    if (writes && S_ISREG(st.st_mode)) {
      NoteWritten(*loc, st, flags & O_TRUNC);
    }
    Reply r = InstallReply(std::move(fd.value()), flags);
    // A file this call created is empty already: no truncate for it.
    r.truncate_installed = (flags & O_TRUNC) && S_ISREG(st.st_mode);
    return r;
  }
  Born(st);
  NoteCreated(*loc, st);
  if (loc->root->own_entries_only) made_shared_ = true;
  Reply installed = InstallReply(std::move(fd.value()), flags);
  // The kernel takes the fd before it creates anything: a file made for an
  // fd that cannot be installed is removed again, if it is still ours.
  installed.undo = UndoCreate(*loc, st);
  return installed;
}

std::function<void()> Emulator::UndoCreate(const Located& loc, const struct stat& st) {
  return [this, loc, st] {
    auto parent = WriteRoots::OpenParent(loc);
    struct stat now;
    if (parent && ::fstatat(parent->get(), loc.name.c_str(), &now, AT_SYMLINK_NOFOLLOW) == 0 &&
        now.st_dev == st.st_dev && now.st_ino == st.st_ino &&
        ::unlinkat(parent->get(), loc.name.c_str(), 0) == 0) {
      NoteDropped(loc, st);
    }
  };
}

Reply Emulator::TruncateKept(const Located& loc, uint64_t flags, const struct stat& old) {
  auto parent = WriteRoots::OpenParent(loc);
  if (!parent) return Reply::Errno(parent.error().err);
  const std::string tmp = TempSibling(loc.name);
  if (tmp.empty()) return Reply::Errno(EIO);
  // The new file, made beside the old one with the tool's flags and the
  // old file's mode and owner, then exchanged with it: the name never
  // goes missing, and the old inode leaves for the journal whole.
  const uint64_t made_flags =
      (NoCtty(flags) & ~static_cast<uint64_t>(O_TRUNC | O_CREAT | O_EXCL)) | O_CREAT | O_EXCL | O_NOFOLLOW;
  // The directory's times as they were (a truncate changes no name), and
  // the file's atime (it was not read).
  struct stat dir_st;
  const bool dir_known = ::fstat(parent->get(), &dir_st) == 0;
  Fd fd(::openat(parent->get(), tmp.c_str(), static_cast<int>(made_flags), old.st_mode & 07777));
  if (!fd) return Reply::Errno(errno);
  const struct timespec file_times[2] = {old.st_atim, {0, UTIME_OMIT}};
  (void)::futimens(fd.get(), file_times);
  (void)::fchown(fd.get(), old.st_uid, old.st_gid);
  struct stat made;
  if (::fchmod(fd.get(), old.st_mode & 07777) != 0 || ::fstat(fd.get(), &made) != 0) {
    const int err = errno;
    (void)::unlinkat(parent->get(), tmp.c_str(), 0);
    return Reply::Errno(err);
  }
  Reply r = InstallReply(std::move(fd), flags);
  auto dir = std::make_shared<Fd>(std::move(parent.value()));
  // Not installed (EMFILE): nothing changed but the new file, removed.
  r.undo = [dir, tmp] { (void)::unlinkat(dir->get(), tmp.c_str(), 0); };
  // Installed: the new file takes the name, the old one goes to the journal.
  r.after_install = [this, dir, tmp, loc, made, dir_known, dir_st]() -> int {
    if (::renameat2(dir->get(), tmp.c_str(), dir->get(), loc.name.c_str(), RENAME_EXCHANGE) != 0) {
      const int err = errno;
      (void)::unlinkat(dir->get(), tmp.c_str(), 0);
      return err;
    }
    struct stat was;
    if (::fstatat(dir->get(), tmp.c_str(), &was, AT_SYMLINK_NOFOLLOW) != 0) return errno;
    if (Keep(loc, dir->get(), tmp, was, "truncate")) {
      (void)::renameat2(dir->get(), tmp.c_str(), dir->get(), loc.name.c_str(), RENAME_EXCHANGE);
      (void)::unlinkat(dir->get(), tmp.c_str(), 0);
      return EACCES;
    }
    Born(made);
    NoteCreated(loc, made, /*observed=*/false);
    Fd writable(::openat(dir->get(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (dir_known && writable) {
      const struct timespec times[2] = {{0, UTIME_OMIT}, dir_st.st_mtim};
      (void)::futimens(writable.get(), times);
    }
    return 0;
  };
  return r;
}


}  // namespace cordon::supervisor
