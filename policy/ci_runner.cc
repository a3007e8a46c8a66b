#include "policy/ci_runner.h"

namespace cordon::policy {

const std::vector<CiRunnerSpec>& CiRunners() {
  static const std::vector<CiRunnerSpec> runners = {
      {"GitHub Actions",
       "GITHUB_ACTIONS",
       "GITHUB_WORKSPACE",
       "RUNNER_TEMP",
       {
           {"GITHUB_OUTPUT", CiPathKind::kFile, Access::kReadWrite, false, true},
           {"GITHUB_ENV", CiPathKind::kFile, Access::kReadWrite, false, true},
           {"GITHUB_PATH", CiPathKind::kFile, Access::kReadWrite, false, true},
           {"GITHUB_STEP_SUMMARY", CiPathKind::kFile, Access::kReadWrite, false, true},
           {"RUNNER_TEMP", CiPathKind::kDirectory, Access::kReadWrite, false, false},
           {"RUNNER_TOOL_CACHE", CiPathKind::kDirectory, Access::kReadOnly, true, false},
       },
       {"_runner_file_commands", "_github_workflow"}},
      // GitLab keeps reports (dotenv), artifacts and caches in the project
      // directory; $CI_PROJECT_DIR.tmp holds file-type variables (secrets)
      // and $CI_BUILDS_DIR other jobs' checkouts: neither is granted.
      {"GitLab CI", "GITLAB_CI", "CI_PROJECT_DIR", nullptr, {}, {}},
  };
  return runners;
}

const char* CiSource(std::string_view var) {
  if (var == "RUNNER_TEMP") return kCiTempSource;
  if (var == "RUNNER_TOOL_CACHE") return kCiToolCacheSource;
  return kCiOutputSource;
}

std::string CheckCiValue(std::string_view value) {
  if (value.empty()) return "empty";
  if (value.front() != '/') return "not an absolute path";
  if (value == "/") return "the root directory";
  std::string_view rest = value;
  while (!rest.empty()) {
    std::size_t slash = rest.find('/');
    std::string_view seg = rest.substr(0, slash);
    if (seg == "." || seg == "..") return "a '.' or '..' segment";
    if (slash == std::string_view::npos) break;
    rest.remove_prefix(slash + 1);
  }
  return {};
}

std::string BroadGrantReason(const std::string& path, Access access, const std::string& workspace,
                             const std::string& home) {
  if (path.empty() || path == "/") return "the root directory";
  for (const char* shared : {"/tmp", "/var/tmp", "/dev/shm"}) {
    if (path == shared) return std::string("the shared ") + shared;
  }
  if (!workspace.empty() && IsWithin(workspace, path)) return "it holds the workspace";
  if (!home.empty() && home != "/" && IsWithin(home, path)) return "it holds the home directory";
  if (access == Access::kReadWrite) {
    for (const PathRule& s : SystemPaths()) {
      if (IsWithin(s.path, path) || IsWithin(path, s.path)) {
        return "it overlaps the system set (" + s.path + ")";
      }
    }
  }
  return {};
}

}  // namespace cordon::policy
