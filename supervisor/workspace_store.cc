#include "supervisor/workspace_store.h"

#include <fcntl.h>
#include <pwd.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <string_view>

#include "policy/digest.h"
#include "supervisor/owned_dir.h"
#include "supervisor/walk/dir_listing.h"

namespace cordon::supervisor {
namespace {

constexpr char kSpaces[] = "assistant-workspaces";
constexpr char kFiles[] = "files";
constexpr char kRecord[] = "record.json";
constexpr char kRecordTmp[] = "record.json.tmp";  // ReplaceFileAt's
constexpr char kLock[] = "lock";
constexpr size_t kMaxRecordBytes = 64 << 10;

}  // namespace

std::string DefaultStateHome(std::string* ignored) {
  return XdgBaseDir("XDG_STATE_HOME", "/.local/state", ignored);
}

bool StateHomeUsable() {
  const char* xdg = std::getenv("XDG_STATE_HOME");
  std::string anchor = DefaultStateHome();
  const bool from_xdg = xdg != nullptr && xdg[0] == '/';
  if (from_xdg) {
    while (anchor.size() > 1 && anchor.back() == '/') anchor.pop_back();
    anchor = anchor.substr(0, anchor.rfind('/'));
  } else if (anchor.ends_with("/.local/state")) {
    anchor.resize(anchor.size() - std::string_view("/.local/state").size());
  }
  if (anchor.empty()) anchor = "/";
  struct stat st;
  return ::stat(anchor.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
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
  Result<OwnedDir> owned = OpenOwnedDirPath(root, "workspaces root");
  if (!owned) return owned.error();
  const std::string& real = owned->path;
  Fd& dir = owned->fd;
  uid_t uid = ::geteuid();
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
  if (Status s = ReplaceFileAt(dir->get(), kRecord, policy::SerializeRecord(r)); !s) {
    return s.error();
  }
  return FilesDir(session);
}

Result<policy::WorkspaceRecord> WorkspaceStore::LoadDir(const std::string& name,
                                                        int session_fd) const {
  Fd fd(::openat(session_fd, kRecord, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK));
  if (!fd && errno == ENOENT) return SysError{ENOENT, "ownership record", "is missing"};
  if (!fd) return Errno("open", "ownership record");
  if (Status s = CheckOwned(fd.get(), uid_, "ownership record", S_IFREG); !s) return s.error();
  Result<std::string> text = ReadSmallFile(fd.get(), "ownership record", kMaxRecordBytes);
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
