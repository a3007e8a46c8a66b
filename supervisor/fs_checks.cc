#include "supervisor/fs_checks.h"

#include <fcntl.h>

#include <cerrno>
#include <cstring>

namespace cordon::supervisor {
namespace {

FsAdmission Judge(const struct stat& st, LinkMode mode) {
  FsAdmission a;
  a.exists = true;
  a.st = st;
  if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) || S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode)) {
    a.err = EACCES;
    a.reason = "special file (device, FIFO or socket)";
  } else if (mode == LinkMode::kStrict && S_ISLNK(st.st_mode)) {
    a.err = EACCES;
    a.reason = "symbolic link";
  } else if (mode == LinkMode::kStrict && S_ISREG(st.st_mode) && st.st_nlink > 1) {
    a.err = EACCES;
    a.reason = "hard-linked file (another name shares its inode)";
  }
  return a;
}

}  // namespace

FsAdmission CheckEntry(int dirfd, const char* name, FsOp op, LinkMode mode) {
  FsAdmission a;
  if (name == nullptr || name[0] == '\0' || std::strchr(name, '/') != nullptr ||
      std::strcmp(name, ".") == 0 || std::strcmp(name, "..") == 0) {
    a.err = EINVAL;
    a.reason = "not a single path component";
    return a;
  }
  struct stat st;
  if (::fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
    a.err = errno;
    if (a.err == ENOENT && op == FsOp::kWrite) {
      a.err = 0;  // a write creates it
    } else {
      a.reason = "cannot inspect the entry";
    }
    return a;
  }
  return Judge(st, mode);
}

FsAdmission CheckOpenFd(int fd, FsOp, LinkMode mode) {
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    FsAdmission a;
    a.err = errno;
    a.reason = "cannot inspect the open file";
    return a;
  }
  return Judge(st, mode);
}

}  // namespace cordon::supervisor
