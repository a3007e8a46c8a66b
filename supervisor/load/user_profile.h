// The user-profile paths every run may read (seed 004's generated base
// policy: "selected user-profile paths read-only"; issue 24 item 2 names
// git's identity and the shell startup files): git's identity and
// configuration, so that `git commit` under cordon run takes the user's
// name and e-mail from the private HOME the tool gets (tool_env.h links
// granted home paths into it), and the shell's startup files, so that
// `bash -lc` and `bash -ic` find the user's toolchains (PATH set in
// ~/.profile, after /etc/profile reset it) and aliases. Read-only, never
// executable; a user rule of the same path (a --deny) wins the tie
// (policy/rule_lookup.h). The tool reads these files: what they export,
// secrets included, it sees (the environment scrub drops variables, not
// lines of a file).
#pragma once

#include <string>

#include "policy/policy.h"

namespace cordon::supervisor {

// The source those rules carry, for explain.
inline constexpr const char* kUserProfileSource =
    "user profile: git identity and config, shell startup files";

// The startup files bash and zsh read from the home (bash(1) INVOCATION,
// zsh(1) STARTUP/SHUTDOWN FILES), relative to it.
inline constexpr const char* kShellStartupFiles[] = {
    ".profile", ".bash_profile", ".bash_login", ".bashrc", ".bash_aliases", ".bash_logout",
    ".zshenv",  ".zprofile",     ".zshrc",      ".zlogin", ".zlogout"};

// The source of the hooks directory's rule (read and execute).
inline constexpr const char* kGitHooksSource = "user profile: git's core.hooksPath";

// zsh's, read from $ZDOTDIR in place of the home when it is set.
inline constexpr const char* kZshStartupFiles[] = {".zshenv", ".zprofile", ".zshrc", ".zlogin",
                                                   ".zlogout"};

// Adds to p.base_paths a read-only rule for each of git's user files that
// exists under `home` (absolute): ~/.gitconfig and
// ~/.config/git/{config,ignore,attributes}, and the same three under
// `xdg_config_home` (the caller's XDG_CONFIG_HOME, which git reads in place
// of ~/.config; ignored unless absolute); and the shell startup files that
// exist under `home` (kShellStartupFiles), and zsh's under `zdotdir` (the
// caller's ZDOTDIR; ignored unless absolute). Regular files only (through
// a symlink, as the shell reads them); and the ignore file those git
// configs name (core.excludesFile, absolute or "~/"), and the hooks
// directory (core.hooksPath, a directory: read and executed). Nothing of the home
// when `home` is empty, relative or gone.
void AddUserProfile(policy::Policy& p, const std::string& home,
                    const std::string& xdg_config_home = "", const std::string& zdotdir = "");

}  // namespace cordon::supervisor
