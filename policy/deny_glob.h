// Deny globs (issue 24 item 9): gitignore-style patterns, relative to the
// workspace, whose every match the tool may neither read nor write, whether
// it existed at launch or came into being during the run.
//
// A pattern is a workspace-relative path of segments. "*" and "?" and
// "[...]" match within one segment (fnmatch(3), a leading dot included:
// "*.pem" matches ".key.pem"); a segment "**" matches zero or more
// segments. A pattern without a "/" matches a name at any depth ("*.pem"
// is "**/*.pem"); one with a "/" is anchored at the workspace root
// ("secrets/*.pem"). A matched directory denies everything beneath it.
//
// Two enforcement points, as for protected paths: the supervisor's launch
// scan (supervisor/walk/launch_scan.h) lists the existing matches, which the
// kernel grant leaves out (Policy::deny_glob_matches, denied rules); the
// supervisor refuses every change that would make a new match (create,
// open for writing, rename, link) by name, at any depth (policy/decide.h).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace cordon::policy {

// Whether `s` holds a glob metacharacter ('*', '?', '['): a deniedPaths
// entry that does is a deny glob, not a path.
bool IsGlobPattern(std::string_view s);

// A pattern must be relative, lexically normal and match less than the
// whole workspace: "" or a reason.
std::string CheckDenyGlob(std::string_view pattern);

// True when `rel_path` (workspace-relative, lexically normal, "" the root
// itself, which no glob denies) or a directory above it matches a glob.
bool MatchesDenyGlob(const std::vector<std::string>& globs, std::string_view rel_path);

// True when a match of some glob depends on the names of the directories
// above it ("secrets/*.pem", "**/keys/*"): renaming a directory could then
// bring the files beneath it into a match or out of one, so the supervisor
// refuses directory renames (EXDEV: tools copy, each file decided by name).
// Globs on a last name only ("**/.env", "*.pem") keep directory renames.
bool DenyGlobsFollowParents(const std::vector<std::string>& globs);

}  // namespace cordon::policy
