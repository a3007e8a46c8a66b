// The ignore files ripgrep reads above the workspace (cordon grep and
// cordon glob, issue 24 item 8: print what `rg` prints from there). A
// workspace that is a subdirectory of a repository is searched by rg with
// the repository's ignore rules: the .gitignore files of each directory up
// to the repository's root and its .git/info/exclude, and the .ignore and
// .rgignore files of every directory above. Without them the file tools
// printed what rg in that directory hides, and a refusal line for each.
#pragma once

#include "policy/policy.h"

namespace cordon::supervisor {

// The source those rules carry, for explain.
inline constexpr const char* kSearchIgnoresSource = "ripgrep's ignore files above the workspace";

// Adds to p.base_paths a read-only rule for each such file that exists
// above p.workspace (absolute, canonical): regular files only, not
// through a symlink. Nothing when the workspace is "/".
void AddSearchIgnores(policy::Policy& p);

}  // namespace cordon::supervisor
