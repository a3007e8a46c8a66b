// The run's private TMPDIR: /tmp/cordon-runs-UID/run-XXXXXX, mode 0700,
// outside the workspace, removed when the run ends.
//
// A cordon that is killed (SIGKILL, the OOM killer, a CI job's timeout)
// cannot remove it, so each run holds an exclusive flock on its directory
// while it lasts, and a run that ends sweeps the directories nobody holds.
// The per-user parent is taken shared while a directory is made and locked,
// and exclusively by a sweep, so a sweep never sees a directory before its
// lock. When the parent is not a 0700 directory of this user (someone else
// made it first), the directory is made in /tmp directly and not swept.
#pragma once

#include <string>
#include <utility>

#include "base/fd.h"
#include "base/result.h"

namespace cordon::supervisor {

class PrivateTmp {
 public:
  // `parent`: where the per-user directory goes (tests use a scratch one).
  explicit PrivateTmp(std::string parent = "/tmp") : parent_(std::move(parent)) {}
  PrivateTmp(const PrivateTmp&) = delete;
  PrivateTmp& operator=(const PrivateTmp&) = delete;
  // Removes the directory, then the ones of runs that did not end.
  ~PrivateTmp();

  Status Create();
  const std::string& path() const { return path_; }

 private:
  std::string parent_;
  std::string base_path_;
  Fd base_;  // the per-user parent; invalid when the directory is in /tmp
  std::string path_;
  Fd lock_;  // the directory, under LOCK_EX until the destructor
};

// The per-user directory of the private TMPDIRs under `parent`.
std::string PrivateTmpBase(const std::string& parent = "/tmp");

}  // namespace cordon::supervisor
