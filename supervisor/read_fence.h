// The read fence: what the tool may read and execute, as Landlock would
// have granted it at launch, for what the supervisor decides itself: every
// open and exec on the notify-all rung (no Landlock), inotify watches, and
// the reads the kernel grant cannot express (brokered reads beside a
// carve-out, emulator_open.cc).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "base/fd.h"
#include "base/result.h"
#include "policy/policy.h"
#include "supervisor/write_roots.h"

namespace cordon::supervisor {

struct ReadFence {
  WriteRoots readable;             // every readable directory, denials excluded
  WriteRoots executable;           // the subset the tool may execute from
  std::vector<std::string> files;  // single files and devices granted read (realpath)
  // The directories that directly hold an unlisted denial
  // (PathRule::unlisted), by inode: not opened for the tool, whose
  // listing would name the denial (policy::EntryFacts::holds_unlisted).
  std::set<std::pair<dev_t, ino_t>> unlisted_parents;

  // Opens `abs` with `flags` (no O_CREAT) if the tool may read it: a single
  // granted file by its canonical path, else beneath its readable root.
  // Without `follow` a last component that is a symlink is the one opened
  // (canonical parent, then the name, O_NOFOLLOW). `where`, when given and
  // the path lies beneath a readable root, says which and where.
  Result<Fd> Open(std::string abs, uint64_t flags, bool follow = true,
                  Located* where = nullptr) const;
};

// What a fence is made from: the launch's policy, which a reload does not
// loosen or tighten for reads (the kernel's grant is the launch's), and the
// run's private TMPDIR.
struct ReadFenceSource {
  policy::Policy policy;
  std::string tmp;
};

// The fence of policy `p` with the run's private TMPDIR `tmp`: the
// policy's effective rules (policy::EffectiveRules), each held by its
// realpath; a denial of a path not there yet kept by its own.
Result<std::unique_ptr<ReadFence>> MakeReadFence(const policy::Policy& p, const std::string& tmp);

}  // namespace cordon::supervisor
