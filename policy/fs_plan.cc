#include "policy/fs_plan.h"

#include <dirent.h>

#include <algorithm>
#include <memory>

namespace cordon::policy {
namespace {

std::string Join(const std::string& dir, const std::string& name) {
  return dir == "/" ? "/" + name : dir + "/" + name;
}

void Expand(const PathRule& allowed, const std::string& dir,
            const std::vector<const std::string*>& denied, const DirLister& list,
            std::vector<Grant>& out) {
  out.push_back({dir, allowed.access, false, true});
  for (const std::string& name : list(dir)) {
    std::string child = Join(dir, name);
    std::vector<const std::string*> below;
    bool is_denied = false;
    for (const std::string* d : denied) {
      if (*d == child) is_denied = true;
      else if (IsWithin(*d, child)) below.push_back(d);
    }
    if (is_denied) continue;
    if (below.empty()) {
      out.push_back({child, allowed.access, allowed.executable, false});
    } else {
      Expand(allowed, child, below, list, out);
    }
  }
}

}  // namespace

std::vector<Grant> PlanGrants(const std::vector<PathRule>& rules, const DirLister& list) {
  std::vector<const std::string*> denied;
  for (const PathRule& r : rules) {
    if (r.access == Access::kDenied) denied.push_back(&r.path);
  }
  std::vector<Grant> out;
  for (const PathRule& r : rules) {
    if (r.access == Access::kDenied) continue;
    // A denial of the path itself or of an ancestor removes the grant unless
    // the rule is more specific than the denial (then the rule wins).
    bool covered = std::any_of(denied.begin(), denied.end(), [&](const std::string* d) {
      return *d == r.path;
    });
    if (covered) continue;
    std::vector<const std::string*> below;
    for (const std::string* d : denied) {
      if (IsWithin(*d, r.path) && *d != r.path) below.push_back(d);
    }
    if (below.empty()) {
      out.push_back({r.path, r.access, r.executable, false});
    } else {
      Expand(r, r.path, below, list, out);
    }
  }
  return out;
}

std::vector<std::string> ListDir(const std::string& dir) {
  std::vector<std::string> names;
  std::unique_ptr<DIR, int (*)(DIR*)> d(::opendir(dir.c_str()), ::closedir);
  if (!d) return names;
  while (dirent* e = ::readdir(d.get())) {
    std::string_view n = e->d_name;
    if (n == "." || n == "..") continue;
    names.emplace_back(n);
  }
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace cordon::policy
