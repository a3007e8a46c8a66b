#include "supervisor/load/user_profile.h"

#include <fcntl.h>
#include <sys/stat.h>

#include "base/fd.h"
#include "policy/git_config_keys.h"
#include "supervisor/load/base_policy.h"
#include "supervisor/load/normalise.h"
#include "supervisor/owned_dir.h"

namespace cordon::supervisor {

namespace {

// As git and the shell read them: through a symbolic link.
void AddProfileFile(policy::Policy& p, const std::string& path) {
  AddReadOnlyFile(p, path, kUserProfileSource, /*follow=*/true);
}

// The text of `config` (a file AddProfileFile granted); empty when unreadable.
std::string ConfigText(const std::string& config) {
  Fd fd(::open(config.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) return "";
  Result<std::string> text = ReadSmallFile(fd.get(), config, 1 << 20);
  return text ? std::move(text.value()) : std::string();
}

// The path `key` has in a config's `text`, with a leading "~/" read as git
// does; empty when unset or relative (git would take that from its working
// directory).
std::string GitPathOf(const std::string& text, const char* key, const std::string& home) {
  std::string v = policy::GitConfigValue(text, key);
  if (v.starts_with("~/") && !home.empty()) return (home == "/" ? "" : home) + v.substr(1);
  return v.starts_with("/") ? v : "";
}

}  // namespace

void AddUserProfile(policy::Policy& p, const std::string& caller_home,
                    const std::string& xdg_config_home, const std::string& zdotdir) {
  // git reads $XDG_CONFIG_HOME/git/ in place of ~/.config/git/ when the
  // variable is set (absolute): a user's identity may live there alone.
  if (xdg_config_home.size() > 1 && xdg_config_home[0] == '/') {
    for (const char* rel : {"/git/config", "/git/ignore", "/git/attributes"}) {
      AddProfileFile(p, xdg_config_home + rel);
    }
  }
  // zsh reads its startup files from $ZDOTDIR when set (absolute): a user
  // who keeps them in ~/.config/zsh has none in the home.
  if (zdotdir.size() > 1 && zdotdir[0] == '/') {
    for (const char* rel : kZshStartupFiles) AddProfileFile(p, zdotdir + "/" + rel);
  }
  // The home by its canonical name, as the private HOME's links are made
  // (tool_env.cc); the file's own name is kept, so that a ~/.gitconfig that
  // is a symlink into a dotfiles checkout is linked where git looks for it
  // (Landlock's rule follows it to the file).
  const std::string home = CanonicalHome(caller_home);
  if (home.empty()) return;
  for (const char* rel :
       {"/.gitconfig", "/.config/git/config", "/.config/git/ignore", "/.config/git/attributes"}) {
    AddProfileFile(p, (home == "/" ? "" : home) + rel);
  }
  for (const char* rel : kShellStartupFiles)
    AddProfileFile(p, (home == "/" ? "" : home) + "/" + rel);
  // The ignore file and the hooks directory git's config names
  // (core.excludesFile, core.hooksPath), wherever they are: git reads
  // .../git/config before ~/.gitconfig, and the last that sets one wins.
  std::string excludes, hooks;
  for (const char* suffix : {"/git/config", "/.gitconfig"}) {
    for (std::size_t i = 0, n = p.base_paths.size(); i < n; ++i) {
      const policy::PathRule& r = p.base_paths[i];
      if (r.source != kUserProfileSource || !r.path.ends_with(suffix)) continue;
      const std::string text = ConfigText(r.path);  // read once for both keys
      if (std::string e = GitPathOf(text, "core.excludesfile", home); !e.empty()) excludes = e;
      if (std::string h = GitPathOf(text, "core.hookspath", home); !h.empty()) hooks = h;
    }
  }
  if (!excludes.empty()) AddProfileFile(p, excludes);
  // The user's own hooks run in the run as outside it, confined: read and
  // executed, never written.
  struct stat st;
  if (!hooks.empty() && ::stat(hooks.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
    p.base_paths.push_back({hooks, policy::Access::kReadOnly, true, kGitHooksSource});
  }
}

}  // namespace cordon::supervisor
