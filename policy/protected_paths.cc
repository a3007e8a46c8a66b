#include "policy/protected_paths.h"

#include <algorithm>

#include "policy/path_segments.h"

namespace cordon::policy {
namespace {

constexpr std::string_view kAnyDepth = "**";

// Whether pat[p..] matches rel[r..] from its start: true when it ends at
// the end of rel, or anywhere when `covers_below`. "**" takes one or more
// segments.
bool MatchFrom(const std::vector<std::string_view>& pat, std::size_t p,
               const std::vector<std::string_view>& rel, std::size_t r, bool covers_below) {
  if (p == pat.size()) return r == rel.size() || covers_below;
  if (r == rel.size()) return false;
  if (pat[p] == kAnyDepth) {
    for (std::size_t next = r + 1; next <= rel.size(); ++next) {
      if (MatchFrom(pat, p + 1, rel, next, covers_below)) return true;
    }
    return false;
  }
  return pat[p] == rel[r] && MatchFrom(pat, p + 1, rel, r + 1, covers_below);
}

bool Matches(std::string_view pattern, const std::vector<std::string_view>& rel) {
  std::vector<std::string_view> pat = SplitSegments(pattern);
  if (pat.empty() || pat.size() > rel.size()) return false;
  // Beneath a ".git" match is a .git directory's content: not protected.
  bool covers_below = pat.back() != ".git";
  for (std::size_t i = 0; i + pat.size() <= rel.size(); ++i) {
    if (MatchFrom(pat, 0, rel, i, covers_below)) return true;
  }
  return false;
}

}  // namespace

std::vector<std::string> DefaultProtectedPatterns() {
  // .git/commondir names the directory git reads config and hooks from:
  // pointed elsewhere in the workspace, it brings a config of the tool's.
  // A submodule's git directory is .git/modules/NAME (NAME may hold
  // slashes, and nest further modules), a worktree's .git/worktrees/NAME:
  // each has a config or hooks git obeys when run there. A worktree's
  // admin dir has neither (git writes config.worktree), but without its
  // commondir (removed by git worktree remove) git takes it for a git dir
  // of its own and would obey a config or hooks made in it.
  // Of info/ (gitrepository-layout(5)), the files git reads to decide what
  // you see and check out: exclude hides untracked files from status,
  // attributes picks drivers and marks files binary (no diff), grafts
  // rewrites history's parents, sparse-checkout drops files from the tree.
  // info/refs is git's own output for dumb-HTTP servers (git gc and
  // update-server-info rewrite it, through info/refs_XXXXXX): writable.
  return {".git/config",
          ".git/config.worktree",
          ".git/hooks",
          ".git/info/exclude",
          ".git/info/attributes",
          ".git/info/grafts",
          ".git/info/sparse-checkout",
          ".git/commondir",
          ".git/modules/**/config",
          ".git/modules/**/config.worktree",
          ".git/modules/**/hooks",
          ".git/modules/**/info/exclude",
          ".git/modules/**/info/attributes",
          ".git/modules/**/info/grafts",
          ".git/modules/**/info/sparse-checkout",
          ".git/modules/**/commondir",
          ".git/worktrees/**/config.worktree",
          ".git/worktrees/**/commondir",
          ".git/worktrees/**/config",
          ".git/worktrees/**/hooks",
          ".git",
          ".gitmodules",
          ".envrc",
          ".cordon"};
}

bool MatchesProtected(const std::vector<std::string>& patterns, std::string_view rel_path) {
  if (rel_path.empty()) return false;
  std::vector<std::string_view> rel = SplitSegments(rel_path);
  return std::any_of(patterns.begin(), patterns.end(),
                     [&](const std::string& pat) { return Matches(pat, rel); });
}

bool ProtectedOnlyOnceUsers(const std::vector<std::string>& patterns, std::string_view rel_path) {
  constexpr std::string_view kGitModules = ".gitmodules";
  if (rel_path.empty()) return false;
  std::vector<std::string_view> rel = SplitSegments(rel_path);
  if (rel.back() != kGitModules) return false;
  bool by_gitmodules = false;
  for (const std::string& pat : patterns) {
    if (!Matches(pat, rel)) continue;
    if (pat != kGitModules) return false;
    by_gitmodules = true;
  }
  return by_gitmodules;
}

bool LeadsToProtected(const std::vector<std::string>& patterns, std::string_view rel_path,
                      bool any_depth) {
  if (rel_path.empty()) return false;
  std::vector<std::string_view> rel = SplitSegments(rel_path);
  for (const std::string& pattern : patterns) {
    std::vector<std::string_view> pat = SplitSegments(pattern);
    // Leading parts that end in "**" count only when asked: every name
    // beneath .git/modules matches them, git's own files included.
    for (std::size_t n = 1; n < pat.size(); ++n) {
      if (pat[n - 1] == kAnyDepth && !any_depth) continue;
      std::vector<std::string_view> lead(pat.begin(), pat.begin() + static_cast<std::ptrdiff_t>(n));
      for (std::size_t i = 0; i + n <= rel.size(); ++i) {
        if (MatchFrom(lead, 0, rel, i, false)) return true;
      }
    }
  }
  return false;
}

bool IsProtected(const Policy& p, std::string_view rel_path) {
  return MatchesProtected(p.protected_patterns, rel_path);
}

std::string CheckProtectedPattern(std::string_view pattern) {
  if (pattern.empty()) return "empty pattern";
  if (pattern.front() == '/') return "must be relative to the workspace";
  if (pattern.find('\0') != std::string_view::npos) return "contains a NUL byte";
  std::vector<std::string_view> segs = SplitSegments(pattern);
  for (std::string_view seg : segs) {
    if (seg.empty()) return "empty segment (a duplicate or trailing '/')";
    if (seg == "." || seg == "..") return "'.' and '..' segments are not allowed";
  }
  if (pattern.back() == '/') return "trailing '/'";
  if (segs.front() == kAnyDepth || segs.back() == kAnyDepth) {
    return "'**' (one or more segments) may stand only between two names";
  }
  return {};
}

std::vector<std::string> EditProtectedPatterns(std::vector<std::string>& patterns,
                                               const std::vector<std::string>& edits) {
  std::vector<std::string> errors;
  for (const std::string& e : edits) {
    if (e.empty() || (e[0] != '+' && e[0] != '-')) {
      errors.push_back("'" + e + "': an edit starts with '+' (add) or '-' (remove a default)");
      continue;
    }
    std::string pat = e.substr(1);
    if (std::string why = CheckProtectedPattern(pat); !why.empty()) {
      errors.push_back("'" + e + "': " + why);
      continue;
    }
    auto it = std::find(patterns.begin(), patterns.end(), pat);
    if (e[0] == '+') {
      if (it == patterns.end()) patterns.push_back(std::move(pat));
    } else if (it == patterns.end()) {
      errors.push_back("'" + e + "': '" + pat + "' is not in the list");
    } else {
      patterns.erase(it);
    }
  }
  return errors;
}

std::string_view FirstSegment(std::string_view pattern) {
  return pattern.substr(0, pattern.find('/'));
}

std::string LiteralPrefix(const std::string& pattern) {
  std::size_t at = pattern.find("/**");
  return at == std::string::npos ? pattern : pattern.substr(0, at);
}

}  // namespace cordon::policy
