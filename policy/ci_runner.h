// CI runners (issue 24, item 5): which of a runner's environment variables
// become grants of a `cordon run` step, and the checks a value must pass.
// Pure: the supervisor reads the environment and the filesystem
// (supervisor/load/ci_runner.h) and asks here.
//
// GitHub Actions (GITHUB_ACTIONS=true): the step's command files
// ($GITHUB_OUTPUT, $GITHUB_ENV, $GITHUB_PATH, $GITHUB_STEP_SUMMARY) are
// single-file read-write grants, each only if it lies beneath $RUNNER_TEMP;
// $RUNNER_TEMP is read-write but for the runner's own _runner_file_commands
// and _github_workflow directories (read-only); $RUNNER_TOOL_CACHE is
// read-only; $GITHUB_WORKSPACE is the default workspace.
// GitLab CI (GITLAB_CI=true): $CI_PROJECT_DIR is the default workspace and
// nothing else is granted (reports, artifacts and caches live in it).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "policy/policy.h"

namespace cordon::policy {

enum class CiPathKind { kFile, kDirectory };

struct CiGrantSpec {
  const char* var;
  CiPathKind kind;
  Access access;
  bool executable;
  // A file that must lie beneath the runner's temporary directory.
  bool beneath_temp;
};

struct CiRunnerSpec {
  const char* name;           // "GitHub Actions"
  const char* detect_var;     // set to "true" by the runner
  const char* workspace_var;  // the default workspace
  const char* temp_var;       // the runner's temporary directory (may be null)
  std::vector<CiGrantSpec> grants;
  // Directories beneath the temporary directory that stay read-only.
  std::vector<const char*> temp_read_only;
};

// The known runners, in order of detection.
const std::vector<CiRunnerSpec>& CiRunners();

// The source each grant carries, for explain.
inline constexpr const char* kCiOutputSource = "GitHub Actions: step output";
inline constexpr const char* kCiTempSource = "GitHub Actions: runner temp";
inline constexpr const char* kCiTempOwnSource = "GitHub Actions: the runner's own files";
inline constexpr const char* kCiToolCacheSource = "GitHub Actions: tool cache";

// The source of a grant of `var` (one of kCi*Source).
const char* CiSource(std::string_view var);

// Why a value from the environment cannot name a path to grant: empty,
// relative, "/", with a ".." or "." segment; "" when it can.
std::string CheckCiValue(std::string_view value);

// Why granting `path` (canonical) would be broad: "/", the shared /tmp,
// a path holding the workspace or the home, or (read-write) one that holds
// or lies in the system set; "" when it is not.
std::string BroadGrantReason(const std::string& path, Access access, const std::string& workspace,
                             const std::string& home);

}  // namespace cordon::policy
