#include "supervisor/owned_dir.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <vector>

namespace cordon::supervisor {

Result<Fd> OpenDirAt(int dir, const std::string& name) {
  Fd fd(::openat(dir, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!fd) return Errno("open", name);
  return fd;
}

// Owned by `uid` and writable by nobody else: a directory or file another
// user can change cannot vouch for a session.
Status CheckOwned(int fd, uid_t uid, const std::string& what, mode_t type) {
  struct stat st;
  if (::fstat(fd, &st) != 0) return Errno("fstat", what);
  if ((st.st_mode & S_IFMT) != type)
    return SysError{ENOTDIR, "check", what + " has the wrong type"};
  if (st.st_uid != uid) {
    return SysError{
        EPERM, "check",
        what + " is owned by uid " + std::to_string(st.st_uid) + ", not " + std::to_string(uid)};
  }
  if ((st.st_mode & 022) != 0)
    return SysError{EPERM, "check", what + " is group or world writable"};
  return Ok();
}

// mkdir (0700) when missing, then open without following a link and check.
Result<Fd> EnsureDirAt(int dir, const std::string& name, uid_t uid, const std::string& what) {
  if (::mkdirat(dir, name.c_str(), 0700) != 0 && errno != EEXIST) return Errno("mkdir", what);
  Result<Fd> fd = OpenDirAt(dir, name);
  if (!fd) return SysError{fd.error().err, "open", what + " (a real directory, not a link)"};
  if (Status s = CheckOwned(fd->get(), uid, what, S_IFDIR); !s) return s.error();
  return fd;
}

Result<std::string> ReadSmallFile(int fd, const std::string& what, size_t max_bytes) {
  // Read straight into the string, sized from fstat when it can be (a
  // launch reads its scan cache, a few hundred KiB: one read, not one per
  // 4 KiB, and no copy as the string grows). The size is a hint only: the
  // read goes on until the end of the file, whatever fstat said.
  struct stat st;
  size_t want = 4096;
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
    want = std::min(static_cast<size_t>(st.st_size), max_bytes) + 1;
  }
  std::string text;
  size_t have = 0;
  for (;;) {
    if (text.size() - have < 1) text.resize(std::max(have + want, text.size() * 2));
    ssize_t n = ::read(fd, text.data() + have, text.size() - have);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Errno("read", what);
    if (n == 0) {
      text.resize(have);
      return text;
    }
    have += static_cast<size_t>(n);
    if (have > max_bytes) {
      return SysError{EFBIG, "read", what + " is too large"};
    }
  }
}

Status WriteAll(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Errno("write");
    data.remove_prefix(static_cast<size_t>(n));
  }
  return Ok();
}

bool SameFile(const struct stat& a, const struct stat& b) {
  return a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

Result<OwnedDir> OpenOwnedDirPath(std::string root, const std::string& what) {
  if (root.empty() || root[0] != '/') {
    char cwd[4096];
    if (::getcwd(cwd, sizeof cwd) == nullptr) return Errno("getcwd");
    root = std::string(cwd) + "/" + root;
  }
  // Walk down from "/". Existing parents may be links (/home -> /var/home);
  // every component created here, and the root itself, may not.
  std::vector<std::string> parts;
  for (size_t i = 0; i < root.size();) {
    size_t j = root.find('/', i);
    if (j == std::string::npos) j = root.size();
    std::string part = root.substr(i, j - i);
    if (part == "..") return SysError{EINVAL, what.c_str(), root + " contains \"..\""};
    if (!part.empty() && part != ".") parts.push_back(part);
    i = j + 1;
  }
  if (parts.empty()) return SysError{EINVAL, what.c_str(), "may not be /"};
  uid_t uid = ::geteuid();
  Fd dir(::open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!dir) return Errno("open", "/");
  for (size_t k = 0; k < parts.size(); ++k) {
    bool last = k + 1 == parts.size();
    const std::string& part = parts[k];
    int flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC | (last ? O_NOFOLLOW : 0);
    Fd next(::openat(dir.get(), part.c_str(), flags));
    if (!next && errno == ENOENT) {
      if (::mkdirat(dir.get(), part.c_str(), 0700) != 0 && errno != EEXIST) {
        return Errno("mkdir", part + " (" + what + " " + root + ")");
      }
      Result<Fd> made = OpenDirAt(dir.get(), part);
      if (!made)
        return SysError{made.error().err, what.c_str(),
                        root + ": " + part + " is not a real directory"};
      if (Status s = CheckOwned(made->get(), uid, part, S_IFDIR); !s) return s.error();
      next = std::move(*made);
    } else if (!next) {
      return SysError{errno, what.c_str(),
                      root + (last ? " (must be a real directory, not a symlink)" : "")};
    }
    dir = std::move(next);
  }
  if (Status s = CheckOwned(dir.get(), uid, what + " " + root, S_IFDIR); !s) return s.error();
  // Name the root by its realpath, and make sure it is the directory we hold.
  char real[4096];
  struct stat held, named;
  if (::realpath(root.c_str(), real) == nullptr) return Errno("realpath", root);
  if (::fstat(dir.get(), &held) != 0 || ::stat(real, &named) != 0 || !SameFile(held, named)) {
    return SysError{ESTALE, what.c_str(), root + " changed while it was opened"};
  }
  return OwnedDir{real, std::move(dir)};
}

Result<std::string> ReadOwnedFileAt(int dir, const char* name, size_t max_bytes) {
  Fd fd(::openat(dir, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
  if (!fd) return Errno("open", name);
  if (Status s = CheckOwned(fd.get(), ::geteuid(), name, S_IFREG); !s) return s.error();
  return ReadSmallFile(fd.get(), name, max_bytes);
}

Status ReplaceFileAt(int dir, const std::string& name, std::string_view data, bool sync) {
  const std::string tmp = name + ".tmp";
  (void)::unlinkat(dir, tmp.c_str(), 0);
  Fd fd(::openat(dir, tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (!fd) return Errno("create", tmp);
  if (Status s = WriteAll(fd.get(), data); !s) return s;
  if (sync && ::fsync(fd.get()) != 0) return Errno("fsync", tmp);
  if (::renameat(dir, tmp.c_str(), dir, name.c_str()) != 0) return Errno("rename", name);
  return Ok();
}

}  // namespace cordon::supervisor
