#include "supervisor/load/ci_runner.h"

#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <cstdlib>
#include <cstring>

#include "supervisor/load/normalise.h"

namespace cordon::supervisor {
namespace {

using policy::CiPathKind;

std::string Env(const char* name) {
  const char* v = name == nullptr ? nullptr : std::getenv(name);
  return v == nullptr ? std::string() : std::string(v);
}

// The canonical path `value` names, checked against what the grant
// expects; empty with `why` set when it cannot be granted.
std::string Resolve(const std::string& value, CiPathKind kind, std::string& why) {
  struct stat st;
  if (::stat(value.c_str(), &st) == 0) {
    if (kind == CiPathKind::kDirectory && !S_ISDIR(st.st_mode)) {
      why = "not a directory";
      return {};
    }
    if (kind == CiPathKind::kFile && !S_ISREG(st.st_mode)) {
      why = S_ISDIR(st.st_mode) ? "a directory where a file is expected" : "not a regular file";
      return {};
    }
    int err = 0;
    std::string real = RealPathOrEmpty(value, &err);
    if (real.empty()) why = std::strerror(err);
    return real;
  }
  if (errno != ENOENT || kind == CiPathKind::kDirectory) {
    why = std::strerror(errno);
    return {};
  }
  // A command file that does not exist yet (a step summary): granted by
  // the name it will have, when its directory exists.
  const std::size_t slash = value.rfind('/');
  std::string dir = RealPathOrEmpty(slash == 0 ? "/" : value.substr(0, slash));
  if (dir.empty() || ::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    why = "neither it nor its directory exists";
    return {};
  }
  return (dir == "/" ? "" : dir) + value.substr(slash);
}

}  // namespace

const policy::CiRunnerSpec* DetectCiRunner() {
  for (const policy::CiRunnerSpec& r : policy::CiRunners()) {
    if (Env(r.detect_var) == "true") return &r;
  }
  return nullptr;
}

std::string CiDefaultWorkspace(std::vector<std::string>& warnings) {
  const policy::CiRunnerSpec* r = DetectCiRunner();
  if (r == nullptr) return {};
  std::string value = Env(r->workspace_var);
  if (std::string why = policy::CheckCiValue(value); !why.empty()) {
    warnings.push_back(std::string(r->name) + ": $" + r->workspace_var + " ('" + value +
                       "') is not used as the workspace: " + why);
    return {};
  }
  return value;
}

void AddCiRunner(policy::Policy& p, const std::string& home, std::vector<std::string>& warnings) {
  const policy::CiRunnerSpec* r = DetectCiRunner();
  if (r == nullptr) return;
  const std::string real_home = CanonicalHome(home);
  std::string temp;  // the granted temporary directory, canonical
  // Directories first: a command file is checked against the granted temp.
  for (int pass = 0; pass < 2; ++pass) {
    for (const policy::CiGrantSpec& g : r->grants) {
      if ((g.kind == CiPathKind::kDirectory) != (pass == 0)) continue;
      const std::string value = Env(g.var);
      if (value.empty() && std::getenv(g.var) == nullptr) continue;  // not set: nothing asked
      auto refuse = [&](const std::string& why) {
        warnings.push_back(std::string(r->name) + ": $" + g.var + " ('" + value +
                           "') not granted: " + why);
      };
      std::string why = policy::CheckCiValue(value);
      std::string path = why.empty() ? Resolve(value, g.kind, why) : std::string();
      if (why.empty()) why = policy::BroadGrantReason(path, g.access, p.workspace, real_home);
      if (why.empty() && g.beneath_temp && (temp.empty() || !policy::IsWithin(path, temp) || path == temp)) {
        why = std::string("not beneath a granted $") + (r->temp_var ? r->temp_var : "RUNNER_TEMP");
      }
      if (!why.empty()) {
        refuse(why);
        continue;
      }
      p.base_paths.push_back({path, g.access, g.executable, policy::CiSource(g.var)});
      if (r->temp_var != nullptr && std::strcmp(g.var, r->temp_var) == 0) {
        temp = path;
        // The runner's own files stay read-only (the step's command files
        // among them are granted one by one).
        for (const char* own : r->temp_read_only) {
          struct stat st;
          const std::string sub = path + "/" + own;
          if (::lstat(sub.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
            p.base_paths.push_back({sub, policy::Access::kReadOnly, false, policy::kCiTempOwnSource});
          }
        }
      }
    }
  }
}

}  // namespace cordon::supervisor
