#include "supervisor/walk/local_fs.h"

#include <linux/magic.h>
#include <sys/vfs.h>

namespace cordon::supervisor {

bool OnKnownLocalFilesystem(int fd) {
  struct statfs sf;
  if (::fstatfs(fd, &sf) != 0) return false;
  switch (static_cast<unsigned long>(sf.f_type)) {
    case EXT4_SUPER_MAGIC:
    case XFS_SUPER_MAGIC:
    case BTRFS_SUPER_MAGIC:
    case TMPFS_MAGIC:
      return true;
    default:
      return false;
  }
}

}  // namespace cordon::supervisor
