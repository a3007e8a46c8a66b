#include "policy/dir_listing.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

#include "policy/local_fs.h"

namespace cordon::policy {

bool ShortReadEndsListing(int fd) {
  // Their readdir loops until the caller's buffer is full or the directory
  // ends (ext4_readdir / ext4_dx_readdir, xfs_readdir, btrfs_real_readdir,
  // shmem's offset_readdir).
  return OnKnownLocalFilesystem(fd);
}

Subdir OpenSubdir(int dir_fd, const char* name, bool parent_short_read_ends) {
  Subdir s;
  bool mount_point = false;
  if (parent_short_read_ends) {
    open_how how{};
    how.flags = kWalkDirFlags;
    how.resolve = RESOLVE_NO_XDEV;
    s.fd.reset(static_cast<int>(::syscall(SYS_openat2, dir_fd, name, &how, sizeof how)));
    if (s.fd) {
      s.short_read_ends = true;  // still the parent's filesystem
      return s;
    }
    if (errno != EXDEV && errno != ENOSYS) {
      s.err = errno;
      return s;
    }
    mount_point = errno == EXDEV;
  }
  s.fd.reset(::openat(dir_fd, name, kWalkDirFlags));
  if (!s.fd) {
    s.err = errno;
    return s;
  }
  // Beneath a filesystem that needs the last call, every listing makes it:
  // no statfs per directory to find the rare mount of another kind.
  s.short_read_ends = mount_point && ShortReadEndsListing(s.fd.get());
  return s;
}

}  // namespace cordon::policy
