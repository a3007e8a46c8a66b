// Protected paths: places inside the workspace a tool could write to get code
// run later, outside the sandbox (a git hook, .git/config's core.fsmonitor,
// an .envrc direnv loads). They stay read-only even under workspace-write.
//
// A pattern is a workspace-relative path ("a/b", no "..", no leading "/").
// It matches at any depth, so nested repositories and submodules count:
// ".git/hooks" protects "sub/.git/hooks/pre-commit" too. A matched path
// protects everything beneath it, except the pattern ".git", which means a
// worktree's or submodule's .git *file* only (a .git directory's objects stay
// writable; its config, hooks and info are separate patterns).
//
// Two enforcement points use this: the kernel layer carves the existing
// matches (found at load by supervisor::FindProtectedPaths,
// supervisor/walk/protected_scan.h) out of the read-write workspace, and
// the supervisor's notify layer asks IsProtected for every write, rename
// and unlink, which also covers paths created during the run.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "policy/policy.h"

namespace cordon::policy {

// True when `rel_path` (workspace-relative, lexically normal, no "..") is
// protected by one of p.protected_patterns. Pure; "" (the root) is not.
bool IsProtected(const Policy& p, std::string_view rel_path);
bool MatchesProtected(const std::vector<std::string>& patterns, std::string_view rel_path);

// True when `rel_path` is protected only as a `.gitmodules` (its last
// segment, matched by the pattern ".gitmodules" and by no other pattern):
// a file that is protected once it is the user's. .gitmodules can point a
// later `git submodule update` at another URL, so one the user had stays
// read-only; where there was none, `git submodule add` makes it (by
// renaming its lock file into place, once per key it sets), and one the run
// made is the tool's own, as a new repository is. Pure.
bool ProtectedOnlyOnceUsers(const std::vector<std::string>& patterns, std::string_view rel_path);

// True when a protected path could lie beneath `rel_path` by a name that
// runs through its last component: that component ends a leading part of a
// pattern (".git" of ".git/hooks", "ci" of "ci/deploy.sh"). Renaming such a
// directory renames what is beneath it: moved away, a protected path loses
// its name; moved into place, the tool's files take one. A leading part
// that ends in "**" counts only with `any_depth` (any name beneath it
// does: a directory's, not a file's). Pure.
bool LeadsToProtected(const std::vector<std::string>& patterns, std::string_view rel_path,
                      bool any_depth = false);

// A pattern must be relative and lexically normal: "" or a reason.
std::string CheckProtectedPattern(std::string_view pattern);

// Applies "+pattern" / "-pattern" edits to `patterns` in order. Returns one
// error per bad edit (no sign, bad pattern, removing an absent pattern).
std::vector<std::string> EditProtectedPatterns(std::vector<std::string>& patterns,
                                               const std::vector<std::string>& edits);

// The first segment of `pattern`: a directory holds a match only if it
// holds an entry of that name.
std::string_view FirstSegment(std::string_view pattern);

// The segments of `pattern` before its first "**" (all of it without one):
// what the kernel layer carves out for it, whole.
std::string LiteralPrefix(const std::string& pattern);

}  // namespace cordon::policy
