#include "supervisor/remove_tree.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "base/fd.h"
#include "supervisor/walk/dir_listing.h"

namespace cordon::supervisor {
namespace {

// A mount point inside the tree: a directory of another filesystem (st_dev
// differs; only directories, as overlayfs may report a lower layer's st_dev
// for files) or a bind mount of anything, which only statx's
// STATX_ATTR_MOUNT_ROOT (Linux 5.8) tells apart. The removal stops there.
bool IsMountRoot(int dir, const char* name, const struct stat& st, dev_t dev) {
  if (S_ISDIR(st.st_mode) && st.st_dev != dev) return true;
  struct statx stx;
  if (::statx(dir, name, AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT, STATX_TYPE, &stx) != 0) {
    return false;
  }
  return (stx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT) != 0 &&
         (stx.stx_attributes & STATX_ATTR_MOUNT_ROOT) != 0;
}

// Empties the directory open at `dir`. Depth is bounded by the kernel's
// path limits of what could be created; recursion keeps it simple.
Status Empty(int dir, dev_t dev, RemoveStats& stats, int depth) {
  if (depth > 4096) return SysError{ELOOP, "remove tree", "too deep"};
  Result<std::vector<std::string>> names = ListNames(dir);
  if (!names) return names.error();
  for (const std::string& n : *names) {
    struct stat st;
    if (::fstatat(dir, n.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
    if (!S_ISLNK(st.st_mode) && IsMountRoot(dir, n.c_str(), st, dev)) {
      ++stats.skipped_mounts;
      continue;
    }
    if (S_ISDIR(st.st_mode)) {
      Fd sub(::openat(dir, n.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
      if (!sub) continue;
      // A directory without write or search permission (the tool's chmod
      // 000) must still be emptied.
      ::fchmod(sub.get(), 0700);
      if (Status s = Empty(sub.get(), dev, stats, depth + 1); !s) return s;
      if (::unlinkat(dir, n.c_str(), AT_REMOVEDIR) == 0) ++stats.removed;
    } else if (::unlinkat(dir, n.c_str(), 0) == 0) {
      ++stats.removed;
    }
  }
  return Ok();
}

}  // namespace

Result<RemoveStats> RemoveTree(const std::string& path) {
  RemoveStats stats;
  Fd root(::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!root) return Errno("open", path);
  struct stat st;
  if (::fstat(root.get(), &st) != 0) return Errno("fstat", path);
  ::fchmod(root.get(), 0700);
  if (Status s = Empty(root.get(), st.st_dev, stats, 0); !s) return s.error();
  root.reset();
  if (stats.skipped_mounts == 0) {
    if (::rmdir(path.c_str()) != 0) return Errno("rmdir", path);
    ++stats.removed;
  }
  return stats;
}

}  // namespace cordon::supervisor
