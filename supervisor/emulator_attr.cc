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

#include "supervisor/emulator.h"
#include "policy/fd_alias.h"
#include "supervisor/tool_creds.h"
#include "supervisor/tool_fd.h"
#include "supervisor/tool_memory.h"
#include "supervisor/uapi.h"

namespace cordon::supervisor {
namespace {

constexpr size_t kMaxXattrValue = 64 * 1024;

// Performs a metadata change on a verified file. `target` is an fd on it
// (O_PATH or real); changes go through /proc/self/fd so O_PATH works. Made
// with the tool's permissions (Handle), so the kernel applies its ownership
// rules: only the owner changes modes, times, ACLs and flags, and a chown
// without CAP_CHOWN gives a file only to a group of the tool's.
Reply ApplyAttr(const Request& r, int target, bool by_fd, const std::function<bool()>& valid) {
  const uint64_t* a = r.args;
  std::string proc = ProcPath(target);
  auto ret = [](int rc) { return rc == 0 ? Reply{} : Reply::Errno(errno); };
  switch (r.nr) {
    case SCMP_SYS(chmod):
    case SCMP_SYS(fchmodat):
    case uapi::kNrFchmodat2:
    case SCMP_SYS(fchmod): {
      bool at = r.nr == SCMP_SYS(fchmodat) || r.nr == uapi::kNrFchmodat2;
      mode_t mode = static_cast<mode_t>(at ? a[2] : a[1]);
      // Set-id bits on a file would hand its owner's ids to whoever runs
      // it, outside the sandbox too: refused. S_ISGID on a directory only
      // makes new entries take its group (chmod(2)), as the kernel lets
      // the owner set it (`chmod g+s dir`, CPython's test_os).
      struct stat st;
      const bool dir_sgid =
          !(mode & S_ISUID) && ::fstat(target, &st) == 0 && S_ISDIR(st.st_mode);
      if ((mode & (S_ISUID | S_ISGID)) && !dir_sgid) return Reply::Errno(EPERM, "set-id bits");
      return ret(::fchmodat(AT_FDCWD, proc.c_str(), mode & 07777, 0));
    }
    case SCMP_SYS(chown):
    case SCMP_SYS(lchown):
    case SCMP_SYS(fchownat):
    case SCMP_SYS(fchown): {
      int k = r.nr == SCMP_SYS(fchownat) ? 2 : 1;
      return ret(::fchownat(AT_FDCWD, proc.c_str(), static_cast<uid_t>(a[k]),
                            static_cast<gid_t>(a[k + 1]), 0));
    }
    case SCMP_SYS(truncate): {
      Fd w(::open(proc.c_str(), O_WRONLY | O_CLOEXEC | O_NONBLOCK));
      if (!w) return Reply::Errno(errno);
      return ret(::ftruncate(w.get(), static_cast<off_t>(a[1])));
    }
    case SCMP_SYS(utime):
    case SCMP_SYS(utimes):
    case SCMP_SYS(futimesat):
    case SCMP_SYS(utimensat): {
      timespec ts[2];
      timespec* tsp = nullptr;
      uint64_t addr = r.nr == SCMP_SYS(utimensat) || r.nr == SCMP_SYS(futimesat) ? a[2] : a[1];
      if (addr != 0) {
        tsp = ts;
        if (r.nr == SCMP_SYS(utime)) {
          utimbuf u;
          if (!ReadToolBytes(r.tid, addr, &u, sizeof u)) return Reply::Errno(EFAULT);
          ts[0] = {u.actime, 0};
          ts[1] = {u.modtime, 0};
        } else if (r.nr == SCMP_SYS(utimensat)) {
          if (!ReadToolBytes(r.tid, addr, ts, sizeof ts)) return Reply::Errno(EFAULT);
        } else {
          timeval tv[2];
          if (!ReadToolBytes(r.tid, addr, tv, sizeof tv)) return Reply::Errno(EFAULT);
          ts[0] = {tv[0].tv_sec, tv[0].tv_usec * 1000};
          ts[1] = {tv[1].tv_sec, tv[1].tv_usec * 1000};
        }
        if (!valid()) return Reply::Errno(EACCES, "stale");
      }
      return ret(::utimensat(AT_FDCWD, proc.c_str(), tsp, 0));
    }
    case SCMP_SYS(setxattr):
    case SCMP_SYS(lsetxattr):
    case SCMP_SYS(fsetxattr):
    case SCMP_SYS(removexattr):
    case SCMP_SYS(lremovexattr):
    case SCMP_SYS(fremovexattr): {
      auto name = ReadToolString(r.tid, a[1], XATTR_NAME_MAX + 1);
      if (!name) return Reply::Errno(name.error().err == ENAMETOOLONG ? ERANGE : EFAULT);
      if (!valid()) return Reply::Errno(EACCES, "stale");
      // A POSIX ACL is the file's permission bits, extended: its owner may
      // set it as it may chmod (libacl's copy in sed -i, cp -a, tar).
      // Other namespaces (trusted., security., the rest of system.) need
      // capabilities the tool does not have.
      const bool acl = *name == "system.posix_acl_access" || *name == "system.posix_acl_default";
      if (!acl && name->rfind("user.", 0) != 0) {
        return Reply::Errno(EPERM, "xattr namespace " + *name);
      }
      bool set = r.nr == SCMP_SYS(setxattr) || r.nr == SCMP_SYS(lsetxattr) ||
                 r.nr == SCMP_SYS(fsetxattr);
      if (!set) return ret(::removexattr(proc.c_str(), name->c_str()));
      size_t size = static_cast<size_t>(a[3]);
      if (size > kMaxXattrValue) return Reply::Errno(E2BIG);
      std::string value(size, '\0');
      if (size && !ReadToolBytes(r.tid, a[2], value.data(), size)) return Reply::Errno(EFAULT);
      if (!valid()) return Reply::Errno(EACCES, "stale");
      return ret(::setxattr(proc.c_str(), name->c_str(), value.data(), size, static_cast<int>(a[4])));
    }
    case SCMP_SYS(ioctl): {
      if (!by_fd) return Reply::Errno(EINVAL);
      // An O_PATH fd (GetToolFile without pidfd_getfd) takes no ioctl: the
      // same verified inode, opened read-only as the flags ioctls want.
      Fd reopened;
      if (::fcntl(target, F_GETFL) & O_PATH) {
        reopened = Fd(::open(proc.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
        if (!reopened) return Reply::Errno(errno);
        target = reopened.get();
      }
      unsigned long cmd = a[1] & 0xffffffffu;
      if (cmd == uapi::kFsIocSetflags) {
        int want = 0, have = 0;
        if (!ReadToolBytes(r.tid, a[2], &want, sizeof want)) return Reply::Errno(EFAULT);
        if (!valid()) return Reply::Errno(EACCES, "stale");
        if (::ioctl(target, FS_IOC_GETFLAGS, &have) != 0) return Reply::Errno(errno);
        if ((want ^ have) & (FS_IMMUTABLE_FL | FS_APPEND_FL)) {
          return Reply::Errno(EPERM, "immutable/append-only flags need CAP_LINUX_IMMUTABLE");
        }
        return ret(::ioctl(target, FS_IOC_SETFLAGS, &want));
      }
      if (cmd != uapi::kFsIocFssetxattr) return Reply::Errno(ENOTTY);
      fsxattr want{}, have{};
      if (!ReadToolBytes(r.tid, a[2], &want, sizeof want)) return Reply::Errno(EFAULT);
      if (!valid()) return Reply::Errno(EACCES, "stale");
      if (::ioctl(target, FS_IOC_FSGETXATTR, &have) != 0) return Reply::Errno(errno);
      if ((want.fsx_xflags ^ have.fsx_xflags) & (FS_XFLAG_IMMUTABLE | FS_XFLAG_APPEND)) {
        return Reply::Errno(EPERM, "immutable/append-only flags need CAP_LINUX_IMMUTABLE");
      }
      if (want.fsx_projid != have.fsx_projid) return Reply::Errno(EPERM, "project quota id");
      return ret(::ioctl(target, FS_IOC_FSSETXATTR, &want));
    }
  }
  return Reply::Errno(ENOSYS);
}

}  // namespace

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
    std::string abs = target.empty()      ? base
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
  auto p = Resolve(req, dirfd, std::move(raw.value()), false, Change::kContent);
  if (!valid()) return Reply::Errno(EACCES, "stale");
  if (!p) return Reply::PathRefused("change metadata: ", p.error());
  policy::FileRequest q;
  q.op = policy::FileOp::kMetadata;
  q.place = Place(p->loc);
  q.nofollow = at_flags & AT_SYMLINK_NOFOLLOW;
  const policy::Settings settings = DecideSettings();
  if (auto d = policy::Decide(q, settings); !d.allowed()) {
    return Reply::Errno(d.err, "change metadata of " + p->abs + ": " + d.rule);
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
  }
  const policy::Decision d = policy::Decide(q, settings);
  if (!d.allowed()) return Reply::Errno(d.err, "change metadata of " + p->abs + ": " + d.rule);
  // The change itself, on the file checked (`target`, O_PATH).
  auto target = std::make_shared<Fd>(std::move(fd.value()));
  auto change = [req, valid, target, st, kind, abs = p->abs]() -> Reply {
    if (S_ISLNK(st.st_mode)) {
      // The link itself, not what it points to: tar and cp -a give each link
      // they make its owner and times (lchown, utimensat NOFOLLOW). A link has
      // no mode and takes no user xattr, as the kernel answers.
      if (kind == SCMP_SYS(fchmodat) || kind == uapi::kNrFchmodat2) return Reply::Errno(EOPNOTSUPP);
      if (kind != SCMP_SYS(lchown) && kind != SCMP_SYS(fchownat) && kind != SCMP_SYS(utimensat)) {
        return Reply::Errno(EPERM, "change metadata of " + abs + ": symbolic link");
      }
    }
    Reply rep = ApplyAttr(req, target->get(), false, valid);
    if (rep.error == EACCES || rep.error == EPERM) {
      rep.why = "change metadata of " + abs + ": " + rep.why;
    }
    return rep;
  };
  if (d.keep != policy::Keep::kCopy) return change();
  // The kept copy is read from the file itself (an O_PATH fd reads nothing).
  auto readable = std::make_shared<Fd>(
      ::open(ProcPath(target->get()).c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
  if (!*readable) return Reply::Errno(errno);
  return KeepCopy(p->loc, readable, st, req, valid, std::move(change));
}

Reply Emulator::FdAttr(const Request& req, int tool_fd, int kind,
                       const std::function<bool()>& valid, bool opath_ok) {
  (void)kind;
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
  if (n <= 0 || buf[0] != '/') return Reply::Errno(EACCES, "descriptor is not a file in a writable path");
  std::string path(buf, static_cast<size_t>(n));
  auto loc = rules().roots.Locate(path, Change::kContent);
  if (!loc) return Reply::Errno(EACCES, "change metadata of " + path + ": outside every writable path");
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
  if (auto d = policy::Decide(q, DecideSettings()); !d.allowed()) {
    return Reply::Errno(d.err, "change metadata of " + path + ": " + d.rule);
  }
  return ApplyAttr(req, fd.get(), true, valid);
}

}  // namespace cordon::supervisor
