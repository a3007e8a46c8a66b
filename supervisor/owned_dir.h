// Directories and small files cordon keeps for itself (managed workspaces,
// run journals): real directories, not links, owned by the effective uid
// and writable by nobody else, reached with openat from held fds.
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <string>
#include <string_view>

#include "base/fd.h"
#include "base/result.h"

namespace cordon::supervisor {

// open(O_DIRECTORY | O_NOFOLLOW) of `name` in `dir`.
Result<Fd> OpenDirAt(int dir, const std::string& name);

// Owned by `uid`, of `type` and writable by nobody else: a directory or
// file another user can change cannot vouch for what it holds.
Status CheckOwned(int fd, uid_t uid, const std::string& what, mode_t type);

// mkdir (0700) when missing, then open without following a link and check.
Result<Fd> EnsureDirAt(int dir, const std::string& name, uid_t uid, const std::string& what);

// The whole of a file up to `max_bytes` (EFBIG past it).
Result<std::string> ReadSmallFile(int fd, const std::string& what, size_t max_bytes);

// The file `name` in `dir` (no link followed), owned by us and writable by
// nobody else, whole up to `max_bytes`.
Result<std::string> ReadOwnedFileAt(int dir, const char* name, size_t max_bytes);

Status WriteAll(int fd, std::string_view data);

// Writes `name` in `dir` whole or not at all (NAME.tmp, rename); with
// `sync`, on the disk before the rename (fsync).
Status ReplaceFileAt(int dir, const std::string& name, std::string_view data, bool sync = true);

bool SameFile(const struct stat& a, const struct stat& b);

struct OwnedDir {
  std::string path;  // realpath
  Fd fd;             // O_RDONLY | O_DIRECTORY
};

// Opens `root` (relative: to the cwd), walking down from "/": existing
// parents may be links (/home -> /var/home); every component created here
// (mode 0700), and the last one, may not. The result is owned by us and not
// group or world writable. `what` names it in errors.
Result<OwnedDir> OpenOwnedDirPath(std::string root, const std::string& what);

}  // namespace cordon::supervisor
