// Git linked worktrees (issue 24, item 10): a workspace whose `.git` is a
// file `gitdir: C/worktrees/N` keeps its repository data outside the
// workspace, in the common dir C. `git commit` and `git checkout` write
// C/objects, C/refs, C/logs and C/worktrees/N (git 2.39, by strace); C's
// config, hooks and info, which git outside the sandbox reads and runs,
// must stay out of the tool's reach, and so must the worktree's own links
// (commondir, gitdir) and config.worktree, which redirect or configure the
// repository. Pure: the supervisor reads the files and resolves the paths
// (supervisor/load/git_worktree.h) and asks here.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "policy/policy.h"

namespace cordon::policy {

inline constexpr const char* kGitCommonSource = "git worktree: the repository's common dir";
inline constexpr const char* kGitSharedSource =
    "git worktree: objects, refs and logs shared with the repository";
inline constexpr const char* kGitAdminSource = "git worktree: this worktree's own git dir";
inline constexpr const char* kGitPackedRefsSource =
    "git worktree: packed refs and their lock files (made, replaced, removed by name)";
inline constexpr const char* kGitLinkSource =
    "git worktree: the worktree's links and config stay read-only";

// What the supervisor found, every path canonical (realpath) or empty when
// it could not be resolved.
struct GitWorktreeFacts {
  std::string workspace;  // the workspace
  std::string admin;      // the directory the workspace's .git file names
  std::string common;     // what admin/commondir names
  std::string back_link;  // what admin/gitdir names (git's link back to workspace/.git)
  bool common_is_repo = false;  // common has objects/ and refs/ directories and a HEAD file
  bool has_logs = false;        // common has a logs/ directory
};

// A worktree the tool adds to a repository in the workspace (git worktree
// add wt2): git makes its admin directory, .git/worktrees/NAME (a
// submodule's: .git/modules/SUB/worktrees/NAME), and writes NAME/commondir
// with "../..", the repository's own git dir, where git in the new
// worktree reads config and hooks from.

// The one content of a new worktree's commondir: what git writes (git
// 2.39, worktree.c add_worktree), the repository's common dir.
inline constexpr std::string_view kWorktreeCommonDir = "../..\n";

// The admin directory of a worktree (".git/worktrees/NAME", or one within
// a submodule's git dir) that the workspace-relative `rel` names the
// commondir or config.worktree of; empty for any other path.
std::string WorktreeAdminDir(std::string_view rel);

// The path a .git file's content names ("gitdir: X", trailing whitespace
// dropped, as git's read_gitfile reads it); empty when it is not that form.
std::string ParseGitFile(std::string_view content);

// Whether a gitfile the run wrote (a `.git` file whose "gitdir: X" names
// `target`, resolved: no link, no "..") leads git to a git dir whose config
// and hooks the protected paths cover (protected_paths.h): a `.git`
// directory, a worktree's admin dir in one (.git/worktrees/NAME) or a
// submodule's (.git/modules/...), inside the workspace, or a directory in
// none of the run's writable roots (`writable`), which the tool could not
// have filled. Anything else (a directory of the tool's own, named as it
// likes) would have git obey a config or hooks the tool wrote.
bool GitFileLeadsSafely(std::string_view target, std::string_view workspace,
                        const std::vector<std::string>& writable);

// The first line of a link file (commondir, gitdir), trailing whitespace
// dropped; empty when there is none.
std::string FirstLine(std::string_view content);

// `name` as git resolves a link read from a file in `dir`: absolute as it
// is, else relative to `dir` (the caller canonicalises the result).
std::string ResolveGitLink(const std::string& dir, const std::string& name);

// Why `f` is not a linked worktree of a repository outside the workspace
// that may be granted; "" when it is. `home`: the caller's canonical HOME or
// empty.
std::string CheckGitWorktree(const GitWorktreeFacts& f, const std::string& home);

// The rules for a checked worktree: the common dir read-only; under
// workspace-write its objects, refs, logs and the worktree's own dir
// read-write, the worktree's commondir, gitdir and config.worktree
// read-only within it, and C's packed-refs, packed-refs.lock and
// packed-refs.new as replaceable file grants (PathRule::replaceable: git
// takes the lock O_EXCL, renames the new file over packed-refs and removes
// the lock), so C itself accepts no other name. Nothing when the common dir lies in the workspace
// (the workspace's own rules and protected paths apply there).
std::vector<PathRule> GitWorktreeRules(const GitWorktreeFacts& f, Profile profile);

}  // namespace cordon::policy
