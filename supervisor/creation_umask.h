// The umask of a file or directory the supervisor creates for the tool: the
// tool's, and only the tool's. umask(2) is per process, not per thread,
// unless the thread has an fs_struct of its own; so the thread that creates
// for the tool takes one (unshare(CLONE_FS), OwnThread) and sets its umask
// to the tool's before each creation: the kernel then applies it as it would
// for the tool (a default ACL on the parent overrides it, as for the tool).
// Where unshare is refused (Docker's default seccomp profile allows it only
// with CAP_SYS_ADMIN) the mode is passed with the tool's umask taken off and
// the bits cordon's own umask took as well are put back with fchmod on the
// created file (FixMode).
//
// Not async-signal-safe. Thread-compatible: each thread has its own state.
#pragma once

#include <sys/types.h>

namespace cordon::supervisor {

class CreationUmask {
 public:
  // Gives the calling thread its own fs_struct (cwd, root and umask) and a
  // umask of 0. False when the kernel or a seccomp filter refuses it: the
  // thread then shares the process's umask and FixMode does the rest.
  static bool OwnThread();

  // For one creation made with the tool's umask `tool_umask`.
  explicit CreationUmask(mode_t tool_umask);

  // The mode to pass to open/mkdir/mknod for the tool's `requested` mode.
  mode_t Mode(mode_t requested) const;

  // After the creation: with no umask of its own, the thread's (cordon's)
  // umask may have taken bits the tool's did not; they are put back on the
  // created file `fd` (an fd of it, O_PATH ones too). Returns false and
  // sets errno when that fails.
  bool FixMode(int fd, mode_t requested) const;

  // True when the kernel applies the tool's umask itself (FixMode has
  // nothing to do).
  bool exact() const { return exact_; }

 private:
  mode_t tool_umask_;
  bool exact_;
};

}  // namespace cordon::supervisor
