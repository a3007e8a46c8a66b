// Metadata changes made for the tool: chmod, chown, times, truncate, user
// xattrs and POSIX ACLs, FS_IOC_SETFLAGS/FSSETXATTR, in path and fd forms.
// Each is performed on an fd the supervisor opened and verified beneath a
// write root (or a copy of the tool's own descriptor that leads there),
// through /proc/self/fd, with the tool's file permissions.
#include <fcntl.h>
#include <linux/fs.h>
#include <seccomp.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/xattr.h>
#include <unistd.h>
#include <utime.h>

#include <algorithm>
#include <climits>
#include <string>

#include "policy/fd_alias.h"
#include "supervisor/attr_apply.h"
#include "supervisor/emulator.h"
#include "supervisor/tool_creds.h"
#include "supervisor/tool_fd.h"
#include "supervisor/tool_memory.h"
#include "supervisor/uapi.h"

namespace cordon::supervisor {
Result<Fd> Emulator::FollowLinks(Path& p, Fd link) {
  for (int hops = 0; hops < 40; ++hops) {  // MAXSYMLINKS, as path_resolution(7)
    char buf[PATH_MAX];
    ssize_t n = ::readlinkat(link.get(), "", buf, sizeof buf - 1);
    if (n <= 0) return Errno("readlink", p.abs);
    std::string target(buf, static_cast<size_t>(n));
    std::string base = p.abs.substr(0, p.abs.rfind('/'));
    // Leading ".." climb the link's own directory, which was opened beneath
    // its root with no symlink on the way: lexical is physical there. A
    // ".." after a name in the target is refused by Locate (it may climb
    // out of a link).
    while (target == ".." || target.rfind("../", 0) == 0) {
      target.erase(0, target.size() > 2 ? 3 : 2);
      base = base.substr(0, std::max<size_t>(base.rfind('/'), 1));
    }
    const bool slash = !target.empty() && target.back() == '/';
    std::string abs = target.empty()     ? base
                      : target[0] == '/' ? target
                                         : base + (base == "/" ? "" : "/") + target;
    auto loc = rules().roots.Locate(abs, Change::kContent);
    if (!loc) return SysError{EACCES, "a symlink to outside every writable path", abs};
    p.abs = abs;
    p.loc = std::move(loc.value());
    p.slash = p.slash || slash;  // a trailing slash wants a directory at the end
    auto fd = WriteRoots::OpenBeneath(*p.loc.root, p.rel(), O_PATH | O_NOFOLLOW, 0);
    if (!fd) return fd.error();
    struct stat st;
    if (::fstat(fd->get(), &st) != 0) return Errno("fstat", abs);
    if (!S_ISLNK(st.st_mode)) return fd;
    link = std::move(fd.value());
  }
  return SysError{ELOOP, "too many symlinks", p.abs};
}

Reply Emulator::Attr(const Request& req, int dirfd, uint64_t path, int at_flags, int kind,
                     const std::function<bool()>& valid) {
  auto raw = ReadToolString(req.tid, path, PATH_MAX);
  if (!raw) return Reply::Errno(raw.error().err, "unreadable path");
  // "/proc/self/fd/N": the file the tool holds as fd N (glibc's fchmodat
  // with AT_SYMLINK_NOFOLLOW, and so tar, cp -a and Python's copystat,
  // change a file through it).
  if (int n = policy::FdAliasNumber(raw->c_str()); n >= 0) return FdAttr(req, n, kind, valid, true);
  // AT_EMPTY_PATH: the file the tool holds as dirfd (fchownat(fd, "")).
  if (raw->empty() && (at_flags & AT_EMPTY_PATH) && dirfd >= 0) {
    return FdAttr(req, dirfd, kind, valid, true);
  }
  Named named;
  auto p = Resolve(req, dirfd, std::move(raw.value()), false, Change::kContent, &named);
  if (!valid()) return Reply::Errno(EACCES, "stale");
  // A refusal by the policy's own rules of a change of the name itself may
  // be offered as a bypass (sandbox.allowBypass; emulator_bypass_more.cc).
  if (!p) {
    return BypassAttr(req, named, kind, policy::RefusedBy::kOther, p.error().op,
                      Reply::PathRefused("change metadata: ", p.error()), valid);
  }
  policy::FileRequest q;
  q.op = policy::FileOp::kMetadata;
  q.place = Place(p->loc);
  q.nofollow = at_flags & AT_SYMLINK_NOFOLLOW;
  const policy::Settings settings = DecideSettings();
  if (auto d = policy::Decide(q, settings); !d.allowed()) {
    Reply refused = Reply::Refused(d, "change metadata of " + p->abs, p->abs);
    if (d.by == policy::RefusedBy::kOther) return refused;
    return BypassAttr(req, named, kind, d.by, d.rule, std::move(refused), valid);
  }
  auto fd = WriteRoots::OpenBeneath(*p->loc.root, p->rel(), O_PATH | O_NOFOLLOW, 0);
  if (!fd) return Reply::Errno(fd.error().err);
  struct stat st;
  if (::fstat(fd->get(), &st) != 0) return Reply::Errno(errno);
  // A call that follows links (chmod, utimes, truncate, setxattr...) acts
  // on what a last-component link names, when that lies beneath a writable
  // root: found link by link (FollowLinks), each step opened beneath its
  // root with no symlink, so what is changed is what was checked.
  const bool follows = !(at_flags & AT_SYMLINK_NOFOLLOW) && kind != SCMP_SYS(lchown) &&
                       kind != SCMP_SYS(lsetxattr) && kind != SCMP_SYS(lremovexattr);
  if (S_ISLNK(st.st_mode) && follows) {
    auto target = FollowLinks(*p, std::move(fd.value()));
    if (!target) {
      return Reply::Errno(target.error().err,
                          "change metadata of " + p->abs + ": " + Describe(target.error()));
    }
    fd = std::move(target.value());
    if (::fstat(fd->get(), &st) != 0) return Reply::Errno(errno);
    q.place = Place(p->loc);  // what the links lead to is what is changed
  }
  q.entry = Facts(st, p->loc);
  q.truncate = kind == SCMP_SYS(truncate);
  if (q.truncate && Journals(p->loc) && S_ISREG(st.st_mode)) {
    EntryStat e;
    if (!StatEntry(fd->get(), "", e)) return Reply::Errno(errno);
    q.entry.born_in_run = BornInRun(e);
    st = e.st;
  } else if (Journals(p->loc)) {
    q.entry.born_in_run = EntryBornInRun(fd->get());
  }
  const policy::Decision d = policy::Decide(q, settings);
  if (!d.allowed()) return Reply::Refused(d, "change metadata of " + p->abs, p->abs);
  // The change itself, on the file checked (`target`, O_PATH); in a
  // recoverable run, after the journal keeps what it alters.
  auto target = std::make_shared<Fd>(std::move(fd.value()));
  if (d.keep != policy::Keep::kCopy) {
    const bool keeps = d.keep == policy::Keep::kAttr;
    policy::AttrOp op = policy::AttrOp::kOther;
    Reply done = ChangeAttr(req, kind, target->get(), st, p->abs, nullptr, valid,
                            [&](const AttrArgs& a) -> std::optional<Reply> {
                              op = a.op;
                              if (!keeps) return std::nullopt;
                              return KeepAttrs(p->loc, target->get(), a);
                            });
    if (done.error == 0) NoteAttrChanged(p->loc, op, keeps);
    return done;
  }
  auto change = [req, valid, target, st, kind, abs = p->abs]() -> Reply {
    return ChangeAttr(req, kind, target->get(), st, abs, nullptr, valid);
  };
  // The kept copy is read from the file itself (an O_PATH fd reads nothing).
  auto readable = std::make_shared<Fd>(
      ::open(ProcPath(target->get()).c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
  if (!*readable) return Reply::Errno(errno);
  return KeepCopy(p->loc, readable, st, req, valid, std::move(change));
}

Reply Emulator::FdAttr(const Request& req, int tool_fd, int kind,
                       const std::function<bool()>& valid, bool opath_ok) {
  auto read = ReadToolCreds(req.tid);
  if (!valid()) return Reply::Errno(EACCES, "stale");
  if (!read) return Reply::Errno(ESRCH);
  const ToolCreds& creds = read.value();
  auto held = GetToolFile(creds.tgid, tool_fd);
  if (!held) return Reply::Errno(held.error().err == EAGAIN ? EAGAIN : EBADF);
  if ((held->flags & O_PATH) && !opath_ok) return Reply::Errno(EBADF);
  Fd fd = std::move(held->fd);
  struct stat st;
  if (::fstat(fd.get(), &st) != 0) return Reply::Errno(errno);
  // Which file is this? Its path must lead, beneath a write root and with
  // no symlink, to the very same inode.
  char buf[PATH_MAX];
  ssize_t n = ::readlink(ProcPath(fd.get()).c_str(), buf, sizeof buf - 1);
  if (n <= 0 || buf[0] != '/')
    return Reply::Errno(EACCES, "descriptor is not a file in a writable path");
  std::string path(buf, static_cast<size_t>(n));
  // A refusal by the policy's own rules may be offered as a bypass of the
  // change to the file the descriptor names (emulator_bypass_more.cc).
  const Named named{path, path};
  auto loc = rules().roots.Locate(path, Change::kContent);
  if (!loc) {
    return BypassAttr(
        req, named, kind, policy::RefusedBy::kOther, loc.error().op,
        Reply::Errno(EACCES, "change metadata of " + path + ": outside every writable path"), valid,
        &st);
  }
  auto check = WriteRoots::OpenBeneath(*loc->root, loc->rel, O_PATH | O_NOFOLLOW, 0);
  struct stat st2;
  if (!check || ::fstat(check->get(), &st2) != 0 || st2.st_dev != st.st_dev ||
      st2.st_ino != st.st_ino) {
    return Reply::Errno(EACCES, "change metadata of " + path + ": not the file at that path");
  }
  policy::FileRequest q;
  q.op = policy::FileOp::kMetadata;
  q.place = Place(*loc);
  q.entry = Facts(st, *loc);
  if (Journals(*loc)) q.entry.born_in_run = EntryBornInRun(fd.get());
  const policy::Decision d = policy::Decide(q, DecideSettings());
  if (!d.allowed()) {
    Reply refused = Reply::Refused(d, "change metadata of " + path, path);
    if (d.by == policy::RefusedBy::kOther) return refused;
    return BypassAttr(req, named, kind, d.by, d.rule, std::move(refused), valid, &st);
  }
  auto args = ReadAttrArgs(req, valid);
  if (!args) return Reply::Errno(args.error().err, args.error().detail);
  const bool keeps = d.keep == policy::Keep::kAttr;
  if (keeps) {
    if (std::optional<Reply> no = KeepAttrs(*loc, fd.get(), args.value())) return std::move(*no);
  }
  Reply done = ApplyAttr(req, args.value(), fd.get(), true, valid);
  if (done.error == 0) NoteAttrChanged(*loc, args->op, keeps);
  return done;
}

}  // namespace cordon::supervisor
