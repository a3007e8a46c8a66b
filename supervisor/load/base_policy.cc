#include "supervisor/load/base_policy.h"

#include <sys/stat.h>

#include <cstdlib>

#include "policy/tool_roots.h"
#include "supervisor/load/ci_runner.h"
#include "supervisor/load/credentials.h"
#include "supervisor/load/git_worktree.h"
#include "supervisor/load/tool_roots.h"
#include "supervisor/load/user_profile.h"

namespace cordon::supervisor {

void AddReadOnlyFile(policy::Policy& p, const std::string& path, const char* source, bool follow) {
  struct stat st;
  if ((follow ? ::stat(path.c_str(), &st) : ::lstat(path.c_str(), &st)) != 0 ||
      !S_ISREG(st.st_mode)) {
    return;
  }
  p.base_paths.push_back({path, policy::Access::kReadOnly, false, source});
}
namespace {

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr ? v : "";
}

}  // namespace

void AddMachineBase(policy::Policy& p, std::vector<std::string>& warnings) {
  const char* home = std::getenv("HOME");
  if (home != nullptr) {
    AddUserProfile(p, home, Env("XDG_CONFIG_HOME"), Env("ZDOTDIR"));
    AddCredentialDenials(p, home);
  }
  AddCiRunner(p, home != nullptr ? home : "", warnings);
  AddGitWorktree(p, home != nullptr ? home : "", warnings);
}

std::vector<std::string> AddToolPaths(policy::Policy& p, const std::string& command) {
  ToolRootsInput in{Env("PATH"), Env("HOME"), Env("RUNNER_TOOL_CACHE"), command, {}};
  for (const char* var : policy::kToolRootVariables) {
    if (std::string v = Env(var); !v.empty()) in.env_dirs.emplace_back(var, std::move(v));
  }
  for (const char* var : policy::kToolInputVariables) {
    if (std::string v = Env(var); !v.empty()) in.inputs.emplace_back(var, std::move(v));
  }
  return AddToolRoots(p, in);
}

}  // namespace cordon::supervisor
