#include "policy/git_worktree.h"

#include <algorithm>

#include "policy/ci_runner.h"
#include "policy/path_segments.h"

namespace cordon::policy {
namespace {

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

std::string_view TrimEnd(std::string_view s) {
  while (!s.empty() && IsSpace(s.back())) s.remove_suffix(1);
  return s;
}

}  // namespace

std::string WorktreeAdminDir(std::string_view rel) {
  std::vector<std::string_view> segs = SplitSegments(rel);
  const std::size_t n = segs.size();
  if (n < 4 || (segs[n - 1] != "commondir" && segs[n - 1] != "config.worktree") ||
      segs[n - 3] != "worktrees" || segs[n - 2].empty() || segs[n - 2] == "." ||
      segs[n - 2] == "..") {
    return {};
  }
  // Within a git dir: a ".git" segment above "worktrees".
  if (std::find(segs.begin(), segs.end() - 3, ".git") == segs.end() - 3) return {};
  return std::string(rel.substr(0, rel.size() - segs[n - 1].size() - 1));
}

bool GitFileLeadsSafely(std::string_view target, std::string_view workspace,
                        const std::vector<std::string>& writable) {
  if (target.empty() || target.front() != '/') return false;
  const bool in_workspace = IsWithin(std::string(target), std::string(workspace));
  if (!in_workspace) {
    for (const std::string& root : writable) {
      if (IsWithin(std::string(target), root)) return false;
    }
    return true;
  }
  std::vector<std::string_view> segs = SplitSegments(target);
  for (std::size_t i = 0; i < segs.size(); ++i) {
    if (segs[i] != ".git") continue;
    const std::size_t rest = segs.size() - i - 1;
    if (rest == 0) return true;                                // X/.git
    if (segs[i + 1] == "worktrees" && rest == 2) return true;  // X/.git/worktrees/NAME
    if (segs[i + 1] == "modules" && rest >= 2) return true;    // X/.git/modules/SUB...
    return false;
  }
  return false;
}

std::string ParseGitFile(std::string_view content) {
  constexpr std::string_view kPrefix = "gitdir: ";
  if (content.substr(0, kPrefix.size()) != kPrefix) return {};
  std::string_view rest = TrimEnd(content.substr(kPrefix.size()));
  if (rest.find('\n') != std::string_view::npos || rest.find('\0') != std::string_view::npos) {
    return {};
  }
  return std::string(rest);
}

std::string FirstLine(std::string_view content) {
  std::string_view line = content.substr(0, content.find('\n'));
  line = TrimEnd(line);
  if (line.find('\0') != std::string_view::npos) return {};
  return std::string(line);
}

std::string ResolveGitLink(const std::string& dir, const std::string& name) {
  if (name.empty()) return {};
  if (name.front() == '/') return name;
  return dir + "/" + name;
}

std::string CheckGitWorktree(const GitWorktreeFacts& f, const std::string& home) {
  if (f.admin.empty()) return "the gitdir it names does not resolve to a directory";
  if (f.common.empty()) return f.admin + " has no commondir: not a linked worktree";
  const std::string prefix = f.common + "/worktrees/";
  const std::string name = f.admin.substr(std::min(f.admin.size(), prefix.size()));
  if (f.admin.compare(0, prefix.size(), prefix) != 0 || name.empty() ||
      name.find('/') != std::string::npos) {
    return f.admin + " is not worktrees/NAME of its common dir " + f.common;
  }
  if (!f.common_is_repo) return f.common + " is not a git dir (objects/, refs/, HEAD)";
  if (f.back_link.empty() || f.back_link != f.workspace + "/.git") {
    return f.admin + "/gitdir does not link back to the workspace's .git";
  }
  if (IsWithin(f.common, f.workspace)) return {};
  if (std::string why = BroadGrantReason(f.common, Access::kReadOnly, f.workspace, home);
      !why.empty()) {
    return f.common + ": " + why;
  }
  // The read-write grants lie beneath it: the system set must not hold it.
  if (std::string why = BroadGrantReason(f.common, Access::kReadWrite, f.workspace, home);
      !why.empty()) {
    return f.common + ": " + why;
  }
  return {};
}

std::vector<PathRule> GitWorktreeRules(const GitWorktreeFacts& f, Profile profile) {
  std::vector<PathRule> out;
  if (IsWithin(f.common, f.workspace)) return out;
  out.push_back({f.common, Access::kReadOnly, false, kGitCommonSource});
  if (profile != Profile::kWorkspaceWrite) return out;
  for (const char* sub : {"objects", "refs", "logs"}) {
    if (std::string_view(sub) == "logs" && !f.has_logs) continue;
    out.push_back({f.common + "/" + sub, Access::kReadWrite, false, kGitSharedSource});
  }
  for (const char* name : {"packed-refs", "packed-refs.lock", "packed-refs.new"}) {
    out.push_back({f.common + "/" + name, Access::kReadWrite, false, kGitPackedRefsSource, true});
  }
  out.push_back({f.admin, Access::kReadWrite, false, kGitAdminSource});
  for (const char* link : {"commondir", "gitdir", "config.worktree"}) {
    out.push_back({f.admin + "/" + link, Access::kReadOnly, false, kGitLinkSource});
  }
  return out;
}

}  // namespace cordon::policy
