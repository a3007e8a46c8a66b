// Listing a directory by its fd with getdents64(2), for the bounded walks of
// the workspace (the protected-path scan, the tree check), with one syscall
// fewer per directory where the filesystem allows it.
//
// A listing normally ends with a getdents64 that returns 0. On ext4, xfs,
// btrfs and tmpfs a call fills the buffer until the directory's last entry,
// so a reply that left room for one more record of the longest name is the
// end, and that last call can be saved: on a walk of many small directories
// it is a third of the syscalls and of the time (README, "Speed"). Elsewhere
// (FUSE and NFS answer one server reply per call, short or not) every
// listing reads until 0.
//
// The answer is per filesystem, so it is only carried down a walk while the
// walk stays on one mount: OpenSubdir opens a subdirectory with
// RESOLVE_NO_XDEV and, at a mount point, asks the new filesystem. Beneath a
// filesystem that reads to 0 every subdirectory does too (no statfs each).
#pragma once

#include <dirent.h>
#include <fcntl.h>
#include <sys/types.h>

#include <cerrno>
#include <cstddef>
#include <string>
#include <vector>

#include "base/fd.h"
#include "base/result.h"
#include "policy/fs_plan.h"

namespace cordon::supervisor {

// How a walk opens a directory: for listing, never through a link.
inline constexpr int kWalkDirFlags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;

// A listing buffer the walks use: many small directories in one call.
inline constexpr std::size_t kListingBytes = 32 * 1024;

// Whether a short getdents64 reply on the directory open at `fd` is its
// end (the filesystem is one of those named above). False when unsure.
bool ShortReadEndsListing(int fd);

// Opens a directory to walk (kWalkDirFlags), without touching its access
// time where the caller owns it (O_NOATIME): a launch walk leaves the
// workspace as the tool will find it. Returns the fd or -1 (errno).
int OpenWalkDir(int dir_fd, const char* name);

struct Subdir {
  Fd fd;                         // O_RDONLY | O_DIRECTORY, or invalid (errno in err)
  bool short_read_ends = false;  // for listings of this directory
  int err = 0;
};

// Opens the directory `name` (one component) beneath `dir_fd` without
// following a link (ELOOP/ENOTDIR when it is none), inheriting
// `parent_short_read_ends` unless `name` is a mount point; false stays false.
Subdir OpenSubdir(int dir_fd, const char* name, bool parent_short_read_ends);

// The longest record getdents64 can return (NAME_MAX), rounded up.
inline constexpr std::size_t kMaxDirentRecord = 512;

// Calls on_entry(const dirent64&) for every entry of the directory open at
// `fd` but "." and "..", in `buf` of `len` bytes (at least 4 KiB). Stops
// early when on_entry returns false. Returns 0 at the end, or errno.
template <typename OnEntry>
int ListDirectory(int fd, bool short_read_ends, char* buf, std::size_t len, OnEntry&& on_entry) {
  for (;;) {
    ssize_t n = ::getdents64(fd, buf, len);
    if (n < 0) return errno;
    if (n == 0) return 0;
    for (ssize_t off = 0; off < n;) {
      const auto* e = reinterpret_cast<const dirent64*>(buf + off);
      off += e->d_reclen;
      const char* name = e->d_name;
      if (name[0] == '.' && (name[1] == 0 || (name[1] == '.' && name[2] == 0))) continue;
      if (!on_entry(*e)) return 0;
    }
    if (short_read_ends && static_cast<std::size_t>(n) + kMaxDirentRecord <= len) return 0;
  }
}

// Every name in the directory open at `fd` (a readable directory fd, listed
// from its start), "." and ".." left out; a name list to act on after the
// listing, so removing entries does not change a listing under way.
Result<std::vector<std::string>> ListNames(int fd);

// The lister PlanGrants uses (policy::DirLister): the entries of the
// directory at `dir` (following a link to it), sorted by name; a symlink is
// kUnknown (the ruleset follows it) and carries its realpath (empty when it
// does not resolve), so the plan can see where a grant of it would lead.
// Empty when `dir` is not a directory.
std::vector<policy::DirEntry> ListDir(const std::string& dir);

}  // namespace cordon::supervisor
