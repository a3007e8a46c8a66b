#include "supervisor/load/user_profile.h"

#include <sys/stat.h>

#include "supervisor/load/normalise.h"

namespace cordon::supervisor {

void AddUserProfile(policy::Policy& p, const std::string& caller_home) {
  // The home by its canonical name, as the private HOME's links are made
  // (tool_env.cc); the file's own name is kept, so that a ~/.gitconfig that
  // is a symlink into a dotfiles checkout is linked where git looks for it
  // (Landlock's rule follows it to the file).
  const std::string home = CanonicalHome(caller_home);
  if (home.empty()) return;
  for (const char* rel : {"/.gitconfig", "/.config/git/config", "/.config/git/ignore",
                          "/.config/git/attributes"}) {
    const std::string path = (home == "/" ? "" : home) + rel;
    struct stat st;
    // A regular file only (through a symlink, as git reads it): a directory
    // or device there is not what git would read, and grants nothing.
    if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
    p.base_paths.push_back({path, policy::Access::kReadOnly, false, kUserProfileSource});
  }
}

}  // namespace cordon::supervisor
