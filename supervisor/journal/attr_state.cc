#include "supervisor/journal/attr_state.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "supervisor/tool_fd.h"

namespace cordon::supervisor {

Result<policy::OldAttr> ReadOldAttr(int fd, policy::AttrKind kind, const std::string& xattr_name) {
  policy::OldAttr a;
  a.kind = kind;
  struct stat st;
  if (kind != policy::AttrKind::kXattr) {
    if (::fstat(fd, &st) != 0) return Errno("fstat");
    a.mode = st.st_mode & 07777;
    a.uid = st.st_uid;
    a.gid = st.st_gid;
    a.atime_sec = st.st_atim.tv_sec;
    a.atime_nsec = st.st_atim.tv_nsec;
    a.mtime_sec = st.st_mtim.tv_sec;
    a.mtime_nsec = st.st_mtim.tv_nsec;
    return a;
  }
  a.name = xattr_name;
  // Through the magic link: the inode `fd` holds, whatever its names now.
  const std::string proc = ProcPath(fd);
  for (int tries = 0; tries < 4; ++tries) {
    ssize_t n = ::getxattr(proc.c_str(), xattr_name.c_str(), nullptr, 0);
    if (n < 0 && (errno == ENODATA || errno == EOPNOTSUPP)) return a;  // absent
    if (n < 0) return Errno("getxattr", xattr_name);
    if (static_cast<size_t>(n) > policy::kMaxKeptXattr) {
      return SysError{E2BIG, "getxattr", xattr_name};
    }
    a.value.assign(static_cast<size_t>(n), '\0');
    ssize_t got = ::getxattr(proc.c_str(), xattr_name.c_str(), a.value.data(), a.value.size());
    if (got < 0 && errno == ERANGE) continue;  // it grew meanwhile
    if (got < 0 && errno == ENODATA) {
      a.value.clear();
      return a;  // removed meanwhile
    }
    if (got < 0) return Errno("getxattr", xattr_name);
    a.value.resize(static_cast<size_t>(got));
    a.present = true;
    return a;
  }
  return SysError{EAGAIN, "getxattr", xattr_name + " kept changing"};
}

Status SetOldAttr(int fd, const policy::OldAttr& a) {
  if (!policy::ValidOldAttr(a)) return SysError{EINVAL, "attr", "not a value to set back"};
  const std::string proc = ProcPath(fd);
  switch (a.kind) {
    case policy::AttrKind::kMode:
      if (::fchmodat(AT_FDCWD, proc.c_str(), a.mode, 0) != 0) return Errno("chmod");
      return Ok();
    case policy::AttrKind::kOwner:
      if (::fchownat(fd, "", a.uid, a.gid, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) != 0) {
        return Errno("chown");
      }
      return Ok();
    case policy::AttrKind::kTimes: {
      const struct timespec ts[2] = {{a.atime_sec, a.atime_nsec}, {a.mtime_sec, a.mtime_nsec}};
      if (::utimensat(AT_FDCWD, proc.c_str(), ts, 0) != 0) return Errno("utimensat");
      return Ok();
    }
    case policy::AttrKind::kXattr:
      if (!a.present) {
        if (::removexattr(proc.c_str(), a.name.c_str()) != 0 && errno != ENODATA) {
          return Errno("removexattr", a.name);
        }
        return Ok();
      }
      if (::setxattr(proc.c_str(), a.name.c_str(), a.value.data(), a.value.size(), 0) != 0) {
        return Errno("setxattr", a.name);
      }
      return Ok();
  }
  return SysError{EINVAL, "attr"};
}

}  // namespace cordon::supervisor
