#include "supervisor/workspace_store.h"

#include <fcntl.h>
#include <pwd.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <string_view>

#include "policy/digest.h"
#include "supervisor/walk/dir_listing.h"

namespace cordon::supervisor {
namespace {

constexpr char kSpaces[] = "assistant-workspaces";
constexpr char kFiles[] = "files";
constexpr char kRecord[] = "record.json";
constexpr char kRecordTmp[] = "record.json.tmp";
constexpr char kLock[] = "lock";
constexpr off_t kMaxRecordBytes = 64 << 10;

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
  if ((st.st_mode & S_IFMT) != type) return SysError{ENOTDIR, "check", what + " has the wrong type"};
  if (st.st_uid != uid) {
    return SysError{EPERM, "check",
                    what + " is owned by uid " + std::to_string(st.st_uid) + ", not " +
                        std::to_string(uid)};
  }
  if ((st.st_mode & 022) != 0) return SysError{EPERM, "check", what + " is group or world writable"};
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

Result<std::string> ReadSmallFile(int fd, const std::string& what) {
  std::string text;
  char buf[4096];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Errno("read", what);
    if (n == 0) return text;
    text.append(buf, static_cast<size_t>(n));
    if (text.size() > static_cast<size_t>(kMaxRecordBytes)) {
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

}  // namespace

std::string DefaultStateHome(std::string* ignored) {
  return XdgBaseDir("XDG_STATE_HOME", "/.local/state", ignored);
}

std::string XdgBaseDir(const char* var, const char* under_home, std::string* ignored) {
  const char* xdg = std::getenv(var);
  if (xdg != nullptr && xdg[0] == '/') return xdg;
  if (xdg != nullptr && xdg[0] != '\0' && ignored != nullptr) *ignored = xdg;
  const char* home = std::getenv("HOME");
  std::string h = home != nullptr ? home : "";
  if (h.empty()) {
    if (const passwd* pw = ::getpwuid(::geteuid()); pw != nullptr) h = pw->pw_dir;
  }
  return h + under_home;
}

std::string DefaultWorkspacesRoot() { return DefaultStateHome() + "/cordon"; }

Result<WorkspaceStore> WorkspaceStore::Open(const std::string& root_arg) {
  std::string root = root_arg.empty() ? DefaultWorkspacesRoot() : root_arg;
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
    if (part == "..") return SysError{EINVAL, "workspaces root", root + " contains \"..\""};
    if (!part.empty() && part != ".") parts.push_back(part);
    i = j + 1;
  }
  if (parts.empty()) return SysError{EINVAL, "workspaces root", "may not be /"};
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
        return Errno("mkdir", part + " (workspaces root " + root + ")");
      }
      Result<Fd> made = OpenDirAt(dir.get(), part);
      if (!made) return SysError{made.error().err, "workspaces root", root + ": " + part + " is not a real directory"};
      if (Status s = CheckOwned(made->get(), uid, part, S_IFDIR); !s) return s.error();
      next = std::move(*made);
    } else if (!next) {
      return SysError{errno, "workspaces root",
                      root + (last ? " (must be a real directory, not a symlink)" : "")};
    }
    dir = std::move(next);
  }
  if (Status s = CheckOwned(dir.get(), uid, "workspaces root " + root, S_IFDIR); !s) return s.error();
  // Name the root by its realpath, and make sure it is the directory we hold.
  char real[4096];
  struct stat held, named;
  if (::realpath(root.c_str(), real) == nullptr) return Errno("realpath", root);
  if (::fstat(dir.get(), &held) != 0 || ::stat(real, &named) != 0 || !SameFile(held, named)) {
    return SysError{ESTALE, "workspaces root", root + " changed while it was opened"};
  }
  Result<Fd> spaces = EnsureDirAt(dir.get(), kSpaces, uid, std::string(real) + "/" + kSpaces);
  if (!spaces) return spaces.error();
  return WorkspaceStore(real, std::move(*spaces), uid);
}

std::string WorkspaceStore::SessionDir(const std::string& session) const {
  return root_ + "/" + kSpaces + "/" + policy::OwnerDigest(uid_, session);
}

std::string WorkspaceStore::FilesDir(const std::string& session) const {
  return SessionDir(session) + "/" + kFiles;
}

Result<Fd> WorkspaceStore::OpenSession(const std::string& name) const {
  Result<Fd> fd = OpenDirAt(spaces_.get(), name);
  if (!fd && fd.error().err == ENOENT) return SysError{ENOENT, "workspace", "does not exist"};
  if (!fd) return SysError{fd.error().err, "workspace", "directory " + name + " (not a real directory?)"};
  if (Status s = CheckOwned(fd->get(), uid_, "workspace directory " + name, S_IFDIR); !s) {
    return s.error();
  }
  return fd;
}

Result<std::string> WorkspaceStore::Create(const std::string& session,
                                           const std::string& policy_digest, std::time_t now) {
  if (!policy::ValidSessionId(session)) {
    return SysError{EINVAL, "session id", "must be 1-128 characters of [A-Za-z0-9._:@-]"};
  }
  std::string name = policy::OwnerDigest(uid_, session);
  if (::mkdirat(spaces_.get(), name.c_str(), 0700) != 0) {
    if (errno == EEXIST) return SysError{EEXIST, "workspace", "session " + session + " already has one"};
    return Errno("mkdir", SessionDir(session));
  }
  Result<Fd> dir = OpenSession(name);
  if (!dir) return dir.error();
  // Exact modes, whatever the umask says.
  if (::fchmod(dir->get(), 0700) != 0) return Errno("fchmod", SessionDir(session));
  if (::mkdirat(dir->get(), kFiles, 0700) != 0) return Errno("mkdir", FilesDir(session));
  Result<Fd> files = OpenDirAt(dir->get(), kFiles);
  if (!files) return files.error();
  if (::fchmod(files->get(), 0700) != 0) return Errno("fchmod", FilesDir(session));
  Fd lock(::openat(dir->get(), kLock, O_CREAT | O_EXCL | O_RDWR | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (!lock) return Errno("create", "lock");
  policy::WorkspaceRecord r{session, static_cast<uint32_t>(uid_), static_cast<int64_t>(now),
                            policy_digest};
  Fd tmp(::openat(dir->get(), kRecordTmp, O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW | O_CLOEXEC,
                  0600));
  if (!tmp) return Errno("create", kRecordTmp);
  if (Status s = WriteAll(tmp.get(), policy::SerializeRecord(r)); !s) return s.error();
  if (::fsync(tmp.get()) != 0) return Errno("fsync", kRecordTmp);
  if (::renameat(dir->get(), kRecordTmp, dir->get(), kRecord) != 0) return Errno("rename", kRecord);
  return FilesDir(session);
}

Result<policy::WorkspaceRecord> WorkspaceStore::LoadDir(const std::string& name,
                                                        int session_fd) const {
  Fd fd(::openat(session_fd, kRecord, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK));
  if (!fd && errno == ENOENT) return SysError{ENOENT, "ownership record", "is missing"};
  if (!fd) return Errno("open", "ownership record");
  if (Status s = CheckOwned(fd.get(), uid_, "ownership record", S_IFREG); !s) return s.error();
  Result<std::string> text = ReadSmallFile(fd.get(), "ownership record");
  if (!text) return text.error();
  Result<policy::WorkspaceRecord> r = policy::ParseRecord(*text);
  if (!r) return r;
  if (r->owner_uid != uid_) {
    return SysError{EPERM, "ownership record",
                    "names owner uid " + std::to_string(r->owner_uid) + ", not " +
                        std::to_string(uid_)};
  }
  // A record copied from another session's directory does not vouch here.
  if (!policy::DigestEquals(policy::OwnerDigest(r->owner_uid, r->session), name)) {
    return SysError{EPERM, "ownership record", "belongs to another workspace directory"};
  }
  Result<Fd> files = OpenDirAt(session_fd, kFiles);
  if (!files) return SysError{files.error().err, "workspace", "files/ is missing or not a real directory"};
  if (Status s = CheckOwned(files->get(), uid_, "files/", S_IFDIR); !s) return s.error();
  return r;
}

Result<policy::WorkspaceRecord> WorkspaceStore::Load(const std::string& session) const {
  if (!policy::ValidSessionId(session)) return SysError{EINVAL, "session id", "is invalid"};
  std::string name = policy::OwnerDigest(uid_, session);
  Result<Fd> dir = OpenSession(name);
  if (!dir) return dir.error();
  Result<policy::WorkspaceRecord> r = LoadDir(name, dir->get());
  if (r && r->session != session) return SysError{EPERM, "ownership record", "names another session"};
  return r;
}

std::vector<ListedWorkspace> WorkspaceStore::List() const {
  std::vector<ListedWorkspace> out;
  Result<std::vector<std::string>> names = ListNames(spaces_.get());
  if (!names) return out;
  for (const std::string& n : *names) {
    ListedWorkspace w{root_ + "/" + kSpaces + "/" + n, std::nullopt, {}};
    Result<Fd> dir = OpenSession(n);
    Result<policy::WorkspaceRecord> r = dir ? LoadDir(n, dir->get()) : Result<policy::WorkspaceRecord>(dir.error());
    if (r) w.record = std::move(*r);
    else w.error = Describe(r.error());
    out.push_back(std::move(w));
  }
  return out;
}

Result<Fd> WorkspaceStore::Acquire(const std::string& session,
                                   const std::string& policy_digest) const {
  if (!policy::ValidSessionId(session)) return SysError{EINVAL, "session id", "is invalid"};
  std::string name = policy::OwnerDigest(uid_, session);
  Result<Fd> dir = OpenSession(name);
  if (!dir) return dir.error();
  Fd lock(::openat(dir->get(), kLock, O_RDWR | O_NOFOLLOW | O_CLOEXEC));
  if (!lock) return Errno("open", "workspace lock");
  if (Status s = CheckOwned(lock.get(), uid_, "workspace lock", S_IFREG); !s) return s.error();
  while (::flock(lock.get(), LOCK_SH) != 0) {
    if (errno != EINTR) return Errno("flock", "workspace lock");
  }
  // A retire may have removed the workspace (and a create made a new one)
  // while we waited: the lock must still be the one the workspace names.
  struct stat held, named, dir_held, dir_named;
  if (::fstat(lock.get(), &held) != 0 || ::fstatat(dir->get(), kLock, &named, AT_SYMLINK_NOFOLLOW) != 0 ||
      !SameFile(held, named) || ::fstat(dir->get(), &dir_held) != 0 ||
      ::fstatat(spaces_.get(), name.c_str(), &dir_named, AT_SYMLINK_NOFOLLOW) != 0 ||
      !SameFile(dir_held, dir_named)) {
    return SysError{ESTALE, "workspace", "was retired while this run waited for it"};
  }
  Result<policy::WorkspaceRecord> r = LoadDir(name, dir->get());
  if (!r) return r.error();
  if (r->session != session) return SysError{EPERM, "ownership record", "names another session"};
  if (!policy::DigestEquals(r->policy_digest, policy_digest)) {
    return SysError{EPERM, "policy digest",
                    "mismatch: the workspace was created for policy " + r->policy_digest +
                        ", this run's is " + policy_digest};
  }
  return lock;
}

Result<RemoveStats> WorkspaceStore::Retire(const std::string& session, bool wait) const {
  if (!policy::ValidSessionId(session)) return SysError{EINVAL, "session id", "is invalid"};
  std::string name = policy::OwnerDigest(uid_, session);
  Result<Fd> dir = OpenSession(name);
  if (!dir) return dir.error();
  // A create that died before writing the lock leaves none: nobody can hold
  // it then, and making it here is harmless.
  Fd lock(::openat(dir->get(), kLock, O_CREAT | O_RDWR | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (!lock) return Errno("open", "workspace lock");
  int op = LOCK_EX | (wait ? 0 : LOCK_NB);
  while (::flock(lock.get(), op) != 0) {
    if (errno == EWOULDBLOCK && !wait) {
      return SysError{EBUSY, "retire", "session " + session + ": a supervisor of this session is still running"};
    }
    if (errno != EINTR) return Errno("flock", "workspace lock");
  }
  RemoveStats stats;
  struct stat st;
  if (::fstatat(dir->get(), kFiles, &st, AT_SYMLINK_NOFOLLOW) == 0) {
    if (!S_ISDIR(st.st_mode)) {
      if (::unlinkat(dir->get(), kFiles, 0) != 0) return Errno("unlink", FilesDir(session));
      ++stats.removed;
    } else {
      Result<RemoveStats> r = RemoveTree(FilesDir(session));
      if (!r) return r.error();
      stats = *r;
      if (stats.skipped_mounts > 0) return stats;
    }
  }
  for (const char* f : {kRecord, kRecordTmp, kLock}) {
    if (::unlinkat(dir->get(), f, 0) != 0 && errno != ENOENT) return Errno("unlink", f);
  }
  if (::unlinkat(spaces_.get(), name.c_str(), AT_REMOVEDIR) != 0) return Errno("rmdir", SessionDir(session));
  return stats;
}

}  // namespace cordon::supervisor
