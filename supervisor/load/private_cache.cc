#include "supervisor/load/private_cache.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "policy/private_cache.h"
#include "supervisor/load/normalise.h"
#include "supervisor/workspace_store.h"

namespace cordon::supervisor {
namespace {

// mkdir -p, each missing component 0700; the error of the first that fails.
int MakeDirs(const std::string& dir) {
  for (size_t slash = dir.find('/', 1);; slash = dir.find('/', slash + 1)) {
    const std::string part = dir.substr(0, slash);
    if (::mkdir(part.c_str(), 0700) != 0 && errno != EEXIST) return errno;
    if (slash == std::string::npos) return 0;
  }
}

}  // namespace

void AddPrivateCache(policy::Policy& p, bool create, std::vector<std::string>& warnings) {
  if (p.profile != policy::Profile::kWorkspaceWrite || p.workspace.empty()) return;
  std::string ignored;
  const std::string state = DefaultStateHome(&ignored);
  if (!ignored.empty()) {
    warnings.push_back("XDG_STATE_HOME=" + ignored + " is relative and ignored: using " + state);
  }
  if (state.empty() || state[0] != '/') {
    warnings.push_back("no private cache: no absolute state directory (HOME is not absolute)");
    return;
  }
  // A home that does not exist is not made for a cache (HOME=/nonexistent).
  if (create && !StateHomeUsable()) return;
  const std::string dir = policy::PrivateCacheDir(state, p.workspace);
  std::string canonical;
  if (create) {
    if (int err = MakeDirs(dir); err != 0) {
      warnings.push_back("no private cache: cannot make " + dir + ": " + std::strerror(err));
      return;
    }
    // Made by this user for this user: a link, another owner's directory
    // or one others may write would hand the tool's cache to someone else.
    struct stat st;
    if (::lstat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != ::geteuid() ||
        (st.st_mode & 022) != 0) {
      warnings.push_back("no private cache: " + dir +
                         " is not a directory of this user's alone (remove it to start afresh)");
      return;
    }
    canonical = RealPathOrEmpty(dir);
  } else {
    auto missing = RealPathOfMissing(dir);
    canonical = missing ? missing.value() : dir;
  }
  if (canonical.empty()) return;
  p.private_cache = canonical;
  p.base_paths.push_back(policy::PrivateCacheRule(canonical));
}

}  // namespace cordon::supervisor
