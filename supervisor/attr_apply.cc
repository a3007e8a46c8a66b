#include "supervisor/attr_apply.h"

#include <fcntl.h>
#include <linux/fs.h>
#include <seccomp.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/xattr.h>
#include <unistd.h>
#include <utime.h>

#include <cstdio>

#include "policy/digest.h"
#include "supervisor/tool_fd.h"
#include "supervisor/tool_memory.h"
#include "supervisor/uapi.h"

namespace cordon::supervisor {
namespace {

constexpr size_t kMaxXattrValue = 64 * 1024;

bool IsSetXattr(int nr) {
  return nr == SCMP_SYS(setxattr) || nr == SCMP_SYS(lsetxattr) || nr == SCMP_SYS(fsetxattr);
}

SysError Refusal(int err, std::string why = {}) {
  return SysError{err, "metadata", std::move(why)};
}

std::string Time(const timespec& t) {
  if (t.tv_nsec == UTIME_NOW) return "UTIME_NOW";
  if (t.tv_nsec == UTIME_OMIT) return "UTIME_OMIT";
  char buf[48];
  std::snprintf(buf, sizeof buf, "%lld.%09ld", static_cast<long long>(t.tv_sec), t.tv_nsec);
  return buf;
}

}  // namespace

policy::AttrOp AttrOpOf(int nr) {
  switch (nr) {
    case SCMP_SYS(chmod):
    case SCMP_SYS(fchmodat):
    case uapi::kNrFchmodat2:
    case SCMP_SYS(fchmod):
      return policy::AttrOp::kMode;
    case SCMP_SYS(chown):
    case SCMP_SYS(lchown):
    case SCMP_SYS(fchownat):
    case SCMP_SYS(fchown):
      return policy::AttrOp::kOwner;
    case SCMP_SYS(utime):
    case SCMP_SYS(utimes):
    case SCMP_SYS(futimesat):
    case SCMP_SYS(utimensat):
      return policy::AttrOp::kTimes;
    case SCMP_SYS(setxattr):
    case SCMP_SYS(lsetxattr):
    case SCMP_SYS(fsetxattr):
    case SCMP_SYS(removexattr):
    case SCMP_SYS(lremovexattr):
    case SCMP_SYS(fremovexattr):
      return policy::AttrOp::kXattr;
    default:
      return policy::AttrOp::kOther;
  }
}

Result<AttrArgs> ReadAttrArgs(const Request& r, const std::function<bool()>& valid) {
  const uint64_t* a = r.args;
  AttrArgs out;
  out.op = AttrOpOf(r.nr);
  switch (out.op) {
    case policy::AttrOp::kMode: {
      const bool at = r.nr == SCMP_SYS(fchmodat) || r.nr == uapi::kNrFchmodat2;
      out.mode = static_cast<mode_t>(at ? a[2] : a[1]) & 07777;
      return out;
    }
    case policy::AttrOp::kOwner: {
      const int k = r.nr == SCMP_SYS(fchownat) ? 2 : 1;
      out.uid = static_cast<uid_t>(a[k]);
      out.gid = static_cast<gid_t>(a[k + 1]);
      return out;
    }
    case policy::AttrOp::kTimes: {
      const uint64_t addr =
          r.nr == SCMP_SYS(utimensat) || r.nr == SCMP_SYS(futimesat) ? a[2] : a[1];
      if (addr == 0) return out;
      out.times_given = true;
      timespec* ts = out.times;
      if (r.nr == SCMP_SYS(utime)) {
        utimbuf u;
        if (!ReadToolBytes(r.tid, addr, &u, sizeof u)) return Refusal(EFAULT);
        ts[0] = {u.actime, 0};
        ts[1] = {u.modtime, 0};
      } else if (r.nr == SCMP_SYS(utimensat)) {
        if (!ReadToolBytes(r.tid, addr, ts, sizeof out.times)) return Refusal(EFAULT);
      } else {
        timeval tv[2];
        if (!ReadToolBytes(r.tid, addr, tv, sizeof tv)) return Refusal(EFAULT);
        ts[0] = {tv[0].tv_sec, tv[0].tv_usec * 1000};
        ts[1] = {tv[1].tv_sec, tv[1].tv_usec * 1000};
      }
      if (!valid()) return Refusal(EACCES, "stale");
      return out;
    }
    case policy::AttrOp::kXattr: {
      auto name = ReadToolString(r.tid, a[1], XATTR_NAME_MAX + 1);
      if (!name) return Refusal(name.error().err == ENAMETOOLONG ? ERANGE : EFAULT);
      if (!valid()) return Refusal(EACCES, "stale");
      // A POSIX ACL is the file's permission bits, extended: its owner may
      // set it as it may chmod (libacl's copy in sed -i, cp -a, tar).
      // Other namespaces (trusted., security., the rest of system.) need
      // capabilities the tool does not have.
      const bool acl = *name == "system.posix_acl_access" || *name == "system.posix_acl_default";
      if (!acl && name->rfind("user.", 0) != 0) return Refusal(EPERM, "xattr namespace " + *name);
      out.xattr_name = std::move(name.value());
      out.xattr_set = IsSetXattr(r.nr);
      if (!out.xattr_set) return out;
      const size_t size = static_cast<size_t>(a[3]);
      if (size > kMaxXattrValue) return Refusal(E2BIG);
      out.xattr_value.assign(size, '\0');
      if (size && !ReadToolBytes(r.tid, a[2], out.xattr_value.data(), size)) {
        return Refusal(EFAULT);
      }
      if (!valid()) return Refusal(EACCES, "stale");
      out.xattr_flags = static_cast<int>(a[4]);
      return out;
    }
    case policy::AttrOp::kNone:
    case policy::AttrOp::kOther:
      return out;
  }
  return out;
}

std::string AttrArgsText(const AttrArgs& a) {
  switch (a.op) {
    case policy::AttrOp::kMode: {
      char buf[16];
      std::snprintf(buf, sizeof buf, "mode %04o", static_cast<unsigned>(a.mode & 07777));
      return buf;
    }
    case policy::AttrOp::kOwner: {
      auto id = [](uint32_t v) {
        return v == static_cast<uint32_t>(-1) ? "-1" : std::to_string(v);
      };
      return "owner " + id(a.uid) + ":" + id(a.gid);
    }
    case policy::AttrOp::kTimes: {
      const timespec now{0, UTIME_NOW};
      return "atime " + Time(a.times_given ? a.times[0] : now) + " mtime " +
             Time(a.times_given ? a.times[1] : now);
    }
    case policy::AttrOp::kXattr:
      if (!a.xattr_set) return "remove " + a.xattr_name;
      return "set " + a.xattr_name + " sha256=" + policy::Sha256Hex(a.xattr_value) +
             " size=" + std::to_string(a.xattr_value.size()) +
             " flags=" + std::to_string(a.xattr_flags);
    case policy::AttrOp::kNone:
    case policy::AttrOp::kOther:
      return "";
  }
  return "";
}

std::string AttrBypassOp(policy::AttrOp op) {
  switch (op) {
    case policy::AttrOp::kMode:
      return "chmod";
    case policy::AttrOp::kOwner:
      return "chown";
    case policy::AttrOp::kTimes:
      return "utimes";
    case policy::AttrOp::kXattr:
      return "xattr";
    case policy::AttrOp::kNone:
    case policy::AttrOp::kOther:
      return "";
  }
  return "";
}

bool SetIdRefused(const AttrArgs& args, bool directory) {
  // S_ISGID on a directory only makes new entries take its group
  // (chmod(2)), as the kernel lets the owner set it (`chmod g+s dir`,
  // CPython's test_os).
  const bool dir_sgid = !(args.mode & S_ISUID) && directory;
  return args.op == policy::AttrOp::kMode && (args.mode & (S_ISUID | S_ISGID)) && !dir_sgid;
}

Reply ApplyAttr(const Request& r, const AttrArgs& args, int target, bool by_fd,
                const std::function<bool()>& valid) {
  const uint64_t* a = r.args;
  std::string proc = ProcPath(target);
  auto ret = [](int rc) { return rc == 0 ? Reply{} : Reply::Errno(errno); };
  switch (args.op) {
    case policy::AttrOp::kMode: {
      struct stat st;
      const bool dir = ::fstat(target, &st) == 0 && S_ISDIR(st.st_mode);
      if (SetIdRefused(args, dir)) return Reply::Errno(EPERM, "set-id bits");
      return ret(::fchmodat(AT_FDCWD, proc.c_str(), args.mode & 07777, 0));
    }
    case policy::AttrOp::kOwner:
      return ret(::fchownat(AT_FDCWD, proc.c_str(), args.uid, args.gid, 0));
    case policy::AttrOp::kTimes:
      return ret(::utimensat(AT_FDCWD, proc.c_str(), args.times_given ? args.times : nullptr, 0));
    case policy::AttrOp::kXattr:
      if (!args.xattr_set) return ret(::removexattr(proc.c_str(), args.xattr_name.c_str()));
      return ret(::setxattr(proc.c_str(), args.xattr_name.c_str(), args.xattr_value.data(),
                            args.xattr_value.size(), args.xattr_flags));
    case policy::AttrOp::kNone:
    case policy::AttrOp::kOther:
      break;
  }
  switch (r.nr) {
    case SCMP_SYS(truncate): {
      // Only a regular file is opened to be truncated: opening a FIFO or a
      // device acts on it. The kernel's answers otherwise (truncate(2)).
      struct stat st;
      if (::fstat(target, &st) != 0) return Reply::Errno(errno);
      if (S_ISDIR(st.st_mode)) return Reply::Errno(EISDIR);
      if (!S_ISREG(st.st_mode)) return Reply::Errno(EINVAL);
      Fd w(::open(proc.c_str(), O_WRONLY | O_CLOEXEC | O_NONBLOCK));
      if (!w) return Reply::Errno(errno);
      return ret(::ftruncate(w.get(), static_cast<off_t>(a[1])));
    }
    case SCMP_SYS(ioctl): {
      if (!by_fd) return Reply::Errno(EINVAL);
      // An O_PATH fd (GetToolFile without pidfd_getfd) takes no ioctl: the
      // same verified inode, opened read-only as the flags ioctls want.
      Fd reopened;
      if (::fcntl(target, F_GETFL) & O_PATH) {
        // Nor is a FIFO or socket reopened (a FIFO's reader would be one
        // more): neither takes inode flags (the kernel's ENOTTY).
        struct stat st;
        if (::fstat(target, &st) != 0) return Reply::Errno(errno);
        if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) return Reply::Errno(ENOTTY);
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

Reply ChangeAttr(const Request& r, int kind, int target, const struct stat& st,
                 const std::string& abs, const AttrArgs* held, const std::function<bool()>& valid,
                 const BeforeAttr& before) {
  if (S_ISLNK(st.st_mode)) {
    if (kind == SCMP_SYS(fchmodat) || kind == uapi::kNrFchmodat2) return Reply::Errno(EOPNOTSUPP);
    if (kind != SCMP_SYS(lchown) && kind != SCMP_SYS(fchownat) && kind != SCMP_SYS(utimensat)) {
      return Reply::Errno(EPERM, "change metadata of " + abs + ": symbolic link");
    }
  }
  Result<AttrArgs> read = held ? Result<AttrArgs>(*held) : ReadAttrArgs(r, valid);
  std::optional<Reply> not_kept;
  if (read && before) not_kept = before(read.value());
  if (not_kept) return std::move(*not_kept);
  Reply rep = read ? ApplyAttr(r, read.value(), target, false, valid)
                   : Reply::Errno(read.error().err, read.error().detail);
  if (rep.error == EACCES || rep.error == EPERM) {
    rep.why = "change metadata of " + abs + ": " + rep.why;
  }
  return rep;
}

}  // namespace cordon::supervisor
