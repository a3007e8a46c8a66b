// Managed workspaces (seed 002, issue 8): each session of a host gets a
// private directory the runtime creates, never one the caller happened to be
// in:
//
//   ROOT/assistant-workspaces/<OwnerDigest(uid, session)>/
//     files/        0700, the only part the tool is granted
//     record.json   the ownership record, beside files/ and so out of reach
//     lock          every running supervisor of the session holds LOCK_SH
//
// The root is a real directory (the last component and every component
// cordon creates are opened O_NOFOLLOW) owned by the effective uid and not
// group/world-writable; everything below it is reached with openat from fds
// opened O_NOFOLLOW and is checked the same way. Not thread-safe; fork-safe
// only in the sense that every fd it opens is O_CLOEXEC.
//
// Concurrency: a run takes LOCK_SH on `lock` before it validates the record
// and keeps it until the supervisor exits (the launcher kills every process
// of the tool before that, PR_SET_CHILD_SUBREAPER), so an acquirable
// LOCK_EX means no process of the session is alive. Retire removes files/
// under LOCK_EX, then the record, the lock and the session directory.
#pragma once

#include <sys/types.h>

#include <ctime>
#include <optional>
#include <string>
#include <vector>

#include "base/fd.h"
#include "base/result.h"
#include "policy/workspace_record.h"
#include "supervisor/remove_tree.h"

namespace cordon::supervisor {

// ${XDG_STATE_HOME:-~/.local/state} (HOME, else the passwd entry's home); a
// relative XDG_STATE_HOME is ignored, as the XDG base directory spec says,
// and put in `*ignored` when that is not null.
std::string DefaultStateHome(std::string* ignored = nullptr);

// Whether cordon may keep things in the state home: it creates the state
// home and what lies beneath, never the directory that holds it. A HOME
// that does not exist (HOME=/nonexistent, a service account) has none; an
// XDG_STATE_HOME whose parent does not exist has none.
bool StateHomeUsable();

// An XDG base directory: $VAR when it is absolute, else HOME (or the
// passwd entry's home) + `under_home`. A relative or empty $VAR is ignored
// (a non-empty one is stored in `ignored`, for a warning).
// DefaultStateHome is XdgBaseDir("XDG_STATE_HOME", "/.local/state").
std::string XdgBaseDir(const char* var, const char* under_home, std::string* ignored = nullptr);

// DefaultStateHome() + "/cordon".
std::string DefaultWorkspacesRoot();

struct ListedWorkspace {
  std::string dir;                               // ROOT/assistant-workspaces/<digest>
  std::optional<policy::WorkspaceRecord> record;  // absent when it did not validate
  std::string error;                             // why, when absent
};

class WorkspaceStore {
 public:
  // Opens the root (empty: DefaultWorkspacesRoot()), creating missing
  // components with mode 0700, and checks it. A symlinked, foreign-owned or
  // group/world-writable root is EPERM/ELOOP; a path with ".." is EINVAL.
  static Result<WorkspaceStore> Open(const std::string& root);

  const std::string& root() const { return root_; }  // realpath
  std::string SessionDir(const std::string& session) const;
  std::string FilesDir(const std::string& session) const;

  // Creates the workspace of a new session and its ownership record
  // (written to a temporary name, then renamed, so a record is whole or
  // absent). EEXIST when the session already has one. Returns FilesDir.
  Result<std::string> Create(const std::string& session, const std::string& policy_digest,
                             std::time_t now);

  // The session's record after every check: directory and record are real
  // (no links), owned by us, not group/world-writable; the record parses,
  // passes its integrity check, names us and this session, and lives in the
  // directory its owner digest names; files/ is such a directory too.
  Result<policy::WorkspaceRecord> Load(const std::string& session) const;

  std::vector<ListedWorkspace> List() const;

  // For a run: takes LOCK_SH on the session's lock (waiting while a retire
  // holds it), then Load()s and compares the policy digest. The returned fd
  // (O_CLOEXEC) must stay open until the supervisor exits.
  Result<Fd> Acquire(const std::string& session, const std::string& policy_digest) const;

  // Removes the session's workspace once no supervisor holds its lock:
  // EBUSY at once while one does, unless `wait`. files/ goes with
  // RemoveTree (no links followed, no filesystem boundary crossed). When a
  // mount inside it had to be kept (skipped_mounts > 0) the record, lock and
  // session directory stay, so the workspace remains owned and listed.
  Result<RemoveStats> Retire(const std::string& session, bool wait) const;

 private:
  WorkspaceStore(std::string root, Fd spaces, uid_t uid)
      : root_(std::move(root)), spaces_(std::move(spaces)), uid_(uid) {}
  Result<Fd> OpenSession(const std::string& name) const;
  Result<policy::WorkspaceRecord> LoadDir(const std::string& name, int session_fd) const;

  std::string root_;
  Fd spaces_;  // ROOT/assistant-workspaces
  uid_t uid_;
};

}  // namespace cordon::supervisor
