// Git linked worktrees (issue 24, item 10): when the workspace's .git is a
// file naming a linked worktree's git dir (policy/git_worktree.h), reads
// that file and the worktree's links, resolves them, and adds the grants
// as Policy::base_paths (seed 004's base policy, kept out of the digest).
// Anything that does not check out (a forged or broken link, a common dir
// that is not a repository or is broad) grants nothing, with a one-line
// warning.
#pragma once

#include <string>
#include <vector>

#include "policy/git_worktree.h"
#include "policy/policy.h"

namespace cordon::supervisor {

// The facts about p.workspace's .git; `present` false when the workspace
// has no .git file (a directory, a symlink or nothing: not a linked
// worktree, nothing to say).
struct GitWorktreeProbe {
  bool present = false;
  std::string named;  // the gitdir as the .git file writes it
  policy::GitWorktreeFacts facts;
};
GitWorktreeProbe ProbeGitWorktree(const std::string& workspace);

// Adds the worktree's grants to p.base_paths (p.workspace canonical,
// p.profile set; `home` the caller's HOME or empty).
void AddGitWorktree(policy::Policy& p, const std::string& home, std::vector<std::string>& warnings);

}  // namespace cordon::supervisor
