#include "supervisor/load/user_profile.h"

#include <sys/stat.h>

#include "supervisor/load/normalise.h"

namespace cordon::supervisor {

namespace {

// A read-only rule for `path` when it is a regular file (through a
// symlink, as git and the shell read it): a directory or device there is
// not what they would read, and grants nothing.
void AddIfFile(policy::Policy& p, const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return;
  p.base_paths.push_back({path, policy::Access::kReadOnly, false, kUserProfileSource});
}

}  // namespace

void AddUserProfile(policy::Policy& p, const std::string& caller_home,
                    const std::string& xdg_config_home, const std::string& zdotdir) {
  // git reads $XDG_CONFIG_HOME/git/ in place of ~/.config/git/ when the
  // variable is set (absolute): a user's identity may live there alone.
  if (xdg_config_home.size() > 1 && xdg_config_home[0] == '/') {
    for (const char* rel : {"/git/config", "/git/ignore", "/git/attributes"}) {
      AddIfFile(p, xdg_config_home + rel);
    }
  }
  // zsh reads its startup files from $ZDOTDIR when set (absolute): a user
  // who keeps them in ~/.config/zsh has none in the home.
  if (zdotdir.size() > 1 && zdotdir[0] == '/') {
    for (const char* rel : kZshStartupFiles) AddIfFile(p, zdotdir + "/" + rel);
  }
  // The home by its canonical name, as the private HOME's links are made
  // (tool_env.cc); the file's own name is kept, so that a ~/.gitconfig that
  // is a symlink into a dotfiles checkout is linked where git looks for it
  // (Landlock's rule follows it to the file).
  const std::string home = CanonicalHome(caller_home);
  if (home.empty()) return;
  for (const char* rel :
       {"/.gitconfig", "/.config/git/config", "/.config/git/ignore", "/.config/git/attributes"}) {
    AddIfFile(p, (home == "/" ? "" : home) + rel);
  }
  for (const char* rel : kShellStartupFiles) AddIfFile(p, (home == "/" ? "" : home) + "/" + rel);
}

}  // namespace cordon::supervisor
