#include "supervisor/walk/dir_listing.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <memory>

#include "supervisor/load/normalise.h"
#include "supervisor/walk/local_fs.h"

namespace cordon::supervisor {

bool ShortReadEndsListing(int fd) {
  // Their readdir loops until the caller's buffer is full or the directory
  // ends (ext4_readdir / ext4_dx_readdir, xfs_readdir, btrfs_real_readdir,
  // shmem's offset_readdir).
  return OnKnownLocalFilesystem(fd);
}

int OpenWalkDir(int dir_fd, const char* name) {
  int fd = ::openat(dir_fd, name, kWalkDirFlags | O_NOATIME);
  // O_NOATIME is the owner's (or CAP_FOWNER's): another's directory is
  // opened as it is.
  if (fd < 0 && errno == EPERM) fd = ::openat(dir_fd, name, kWalkDirFlags);
  return fd;
}

Subdir OpenSubdir(int dir_fd, const char* name, bool parent_short_read_ends) {
  Subdir s;
  bool mount_point = false;
  if (parent_short_read_ends) {
    open_how how{};
    how.flags = kWalkDirFlags | O_NOATIME;
    how.resolve = RESOLVE_NO_XDEV;
    s.fd.reset(static_cast<int>(::syscall(SYS_openat2, dir_fd, name, &how, sizeof how)));
    if (!s.fd && errno == EPERM) {
      how.flags = kWalkDirFlags;
      s.fd.reset(static_cast<int>(::syscall(SYS_openat2, dir_fd, name, &how, sizeof how)));
    }
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
  s.fd.reset(OpenWalkDir(dir_fd, name));
  if (!s.fd) {
    s.err = errno;
    return s;
  }
  // Beneath a filesystem that needs the last call, every listing makes it:
  // no statfs per directory to find the rare mount of another kind.
  s.short_read_ends = mount_point && ShortReadEndsListing(s.fd.get());
  return s;
}

namespace {

bool IsSymlink(int dir_fd, const char* name, unsigned char d_type) {
  if (d_type == DT_LNK) return true;
  struct stat st;
  return ::fstatat(dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode);
}

std::string Join(const std::string& dir, const char* name) {
  return dir.ends_with('/') ? dir + name : dir + "/" + name;
}

}  // namespace

Result<std::vector<std::string>> ListNames(int fd) {
  std::vector<std::string> names;
  if (::lseek(fd, 0, SEEK_SET) != 0) return Errno("lseek");
  auto buf = std::make_unique<char[]>(kListingBytes);
  int err = ListDirectory(fd, ShortReadEndsListing(fd), buf.get(), kListingBytes,
                          [&](const dirent64& e) {
                            names.emplace_back(e.d_name);
                            return true;
                          });
  if (err != 0) return SysError{err, "getdents64"};
  return names;
}

std::vector<policy::DirEntry> ListDir(const std::string& dir) {
  using policy::EntryType;
  std::vector<policy::DirEntry> entries;
  Fd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!fd) return entries;
  auto buf = std::make_unique<char[]>(kListingBytes);
  (void)ListDirectory(fd.get(), ShortReadEndsListing(fd.get()), buf.get(), kListingBytes,
                      [&](const dirent64& e) {
                        EntryType type = EntryType::kOther;
                        if (e.d_type == DT_DIR) type = EntryType::kDirectory;
                        if (e.d_type == DT_UNKNOWN || e.d_type == DT_LNK) type = EntryType::kUnknown;
                        policy::DirEntry entry{e.d_name, type};
                        if (e.d_type == DT_LNK || e.d_type == DT_UNKNOWN) {
                          entry.symlink = IsSymlink(fd.get(), e.d_name, e.d_type);
                        }
                        if (entry.symlink) entry.target = RealPathOrEmpty(Join(dir, e.d_name));
                        entries.push_back(std::move(entry));
                        return true;
                      });
  std::sort(entries.begin(), entries.end(),
            [](const policy::DirEntry& a, const policy::DirEntry& b) { return a.name < b.name; });
  return entries;
}

}  // namespace cordon::supervisor
