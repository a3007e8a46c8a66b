#include "supervisor/load/search_ignores.h"

#include <sys/stat.h>

#include <string>

#include "policy/path_segments.h"
#include "supervisor/load/base_policy.h"

namespace cordon::supervisor {
namespace {

bool IsFile(const std::string& path) {
  struct stat st;
  return ::lstat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

bool IsDir(const std::string& path) {
  struct stat st;
  return ::lstat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

}  // namespace

void AddSearchIgnores(policy::Policy& p) {
  if (p.workspace.empty() || p.workspace[0] != '/' || p.workspace == "/") return;
  auto has_git = [](const std::string& dir) {
    const std::string git = (dir == "/" ? "" : dir) + "/.git";
    return IsDir(git) || IsFile(git);
  };
  // The repository the workspace lies in below its root, if any: rg reads
  // .gitignore files only inside a repository, up to its root.
  std::string root;
  if (!has_git(p.workspace)) {
    for (std::string dir(policy::ParentOf(p.workspace));;
         dir = std::string(policy::ParentOf(dir))) {
      if (has_git(dir)) {
        root = dir;
        break;
      }
      if (dir == "/") break;
    }
  }
  bool in_repo = !root.empty();
  for (std::string dir(policy::ParentOf(p.workspace));; dir = std::string(policy::ParentOf(dir))) {
    const std::string base = dir == "/" ? "" : dir;
    AddReadOnlyFile(p, base + "/.ignore", kSearchIgnoresSource, false);
    AddReadOnlyFile(p, base + "/.rgignore", kSearchIgnoresSource, false);
    if (in_repo) {
      AddReadOnlyFile(p, base + "/.gitignore", kSearchIgnoresSource, false);
      if (dir == root) {
        AddReadOnlyFile(p, base + "/.git/info/exclude", kSearchIgnoresSource, false);
        in_repo = false;
      }
    }
    if (dir == "/") break;
  }
}

}  // namespace cordon::supervisor
