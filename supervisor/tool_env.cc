#include "supervisor/tool_env.h"

#include <limits.h>
#include <stdlib.h>

#include <string_view>

namespace cordon::supervisor {
namespace {

std::string Value(const std::string& entry) { return entry.substr(entry.find('=') + 1); }

// Whether `path` (absolute, canonical) is readable under the policy's rules:
// the deepest rule over it decides, as Landlock's carve-outs do.
bool ReadableUnder(const policy::Policy& p, const std::string& path) {
  size_t best = 0;
  bool readable = false;
  for (const policy::PathRule& r : policy::EffectiveRules(p, "")) {
    if (!policy::IsWithin(path, r.path) || r.path.size() < best) continue;
    best = r.path.size();
    readable = r.access != policy::Access::kDenied;
  }
  return readable;
}

}  // namespace

ToolEnv MakeToolEnv(const std::vector<std::string>& caller_env, const policy::Policy& p,
                    const std::string& private_tmp) {
  ToolEnv out;
  if (private_tmp.empty()) {
    out.env = caller_env;
    return out;
  }
  std::string home;
  for (const std::string& e : caller_env) {
    if (e.rfind("HOME=", 0) == 0) home = Value(e);
  }
  char real[PATH_MAX];
  std::string caller_home;
  if (!home.empty() && home[0] == '/' && ::realpath(home.c_str(), real) != nullptr) {
    caller_home = real;
  }
  const bool move_home = !caller_home.empty() && !ReadableUnder(p, caller_home);
  if (move_home) out.private_home = private_tmp + "/home";
  for (const std::string& e : caller_env) {
    if (e.rfind("TMPDIR=", 0) == 0) continue;
    if (move_home && e.rfind("HOME=", 0) == 0) continue;
    if (move_home && e.rfind("XDG_", 0) == 0) {
      std::string_view name = std::string_view(e).substr(0, e.find('='));
      std::string value = Value(e);
      if (name.ends_with("_HOME") &&
          (policy::IsWithin(value, home) || policy::IsWithin(value, caller_home))) {
        continue;
      }
    }
    out.env.push_back(e);
  }
  out.env.push_back("TMPDIR=" + private_tmp);
  if (move_home) out.env.push_back("HOME=" + out.private_home);
  return out;
}

}  // namespace cordon::supervisor
