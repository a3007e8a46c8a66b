#include "policy/protected_paths.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <utility>

#include "policy/dir_listing.h"
#include "policy/fd.h"

namespace cordon::policy {
namespace {

std::vector<std::string_view> Split(std::string_view p) {
  std::vector<std::string_view> out;
  while (!p.empty()) {
    auto slash = p.find('/');
    out.push_back(p.substr(0, slash));
    if (slash == std::string_view::npos) break;
    p.remove_prefix(slash + 1);
  }
  return out;
}

bool Matches(std::string_view pattern, const std::vector<std::string_view>& rel) {
  std::vector<std::string_view> pat = Split(pattern);
  if (pat.empty() || pat.size() > rel.size()) return false;
  // Beneath a ".git" match is a .git directory's content: not protected.
  bool covers_below = pat.back() != ".git";
  for (std::size_t i = 0; i + pat.size() <= rel.size(); ++i) {
    if (!std::equal(pat.begin(), pat.end(), rel.begin() + static_cast<std::ptrdiff_t>(i))) continue;
    if (i + pat.size() == rel.size() || covers_below) return true;
  }
  return false;
}

std::string Join(const std::string& dir, std::string_view name) {
  std::string out = dir;
  if (out != "/") out += '/';
  out += name;
  return out;
}

// The path itself, with no symlink anywhere: realpath gives it back unchanged.
bool IsPhysical(const std::string& path) {
  char buf[PATH_MAX];
  return ::realpath(path.c_str(), buf) != nullptr && path == buf;
}

}  // namespace

std::vector<std::string> DefaultProtectedPatterns() {
  return {".git/config", ".git/hooks", ".git/info", ".git", ".gitmodules", ".envrc", ".cordon"};
}

bool MatchesProtected(const std::vector<std::string>& patterns, std::string_view rel_path) {
  if (rel_path.empty()) return false;
  std::vector<std::string_view> rel = Split(rel_path);
  return std::any_of(patterns.begin(), patterns.end(),
                     [&](const std::string& pat) { return Matches(pat, rel); });
}

bool IsProtected(const Policy& p, std::string_view rel_path) {
  return MatchesProtected(p.protected_patterns, rel_path);
}

std::string CheckProtectedPattern(std::string_view pattern) {
  if (pattern.empty()) return "empty pattern";
  if (pattern.front() == '/') return "must be relative to the workspace";
  if (pattern.find('\0') != std::string_view::npos) return "contains a NUL byte";
  for (std::string_view seg : Split(pattern)) {
    if (seg.empty()) return "empty segment (a duplicate or trailing '/')";
    if (seg == "." || seg == "..") return "'.' and '..' segments are not allowed";
  }
  if (pattern.back() == '/') return "trailing '/'";
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

namespace {

// One depth-first walk. Each directory is opened relative to its parent's
// fd (O_NOFOLLOW: a symlink swapped in is not entered), so the kernel looks
// up one name per directory, not the whole path again.
class ProtectedWalk {
 public:
  ProtectedWalk(const std::vector<std::string>& patterns, std::size_t max_entries,
                std::size_t max_depth)
      : patterns_(patterns), max_entries_(max_entries), max_depth_(max_depth) {
    // A pattern can match in a directory only if its first segment is one
    // of the directory's names: the listing decides which patterns to stat,
    // so a directory holding none of them costs no stat at all.
    for (const std::string& pat : patterns_) first_.push_back(Split(pat).front());
  }

  void Walk(int fd, bool short_read_ends, const std::string& path, std::size_t depth,
            ProtectedScan& scan) {
    std::vector<bool> present(patterns_.size());
    std::vector<std::string> subdirs;
    // getdents64 on the fd itself: readdir's fdopendir would add an fstat
    // and two fcntl calls per directory, a third of the walk's syscalls.
    ListDirectory(fd, short_read_ends, listing_, sizeof listing_, [&](const dirent64& e) {
      std::string_view name = e.d_name;
      if (++entries_ > max_entries_) {
        scan.truncated = true;
        stopped_ = true;
        return false;
      }
      for (std::size_t i = 0; i < first_.size(); ++i) {
        if (first_[i] == name) present[i] = true;
      }
      // Never into .git: its patterns are checked from here, and its
      // objects are most of a repository's entries.
      if (name == ".git") return true;
      bool is_dir = e.d_type == DT_DIR;
      if (e.d_type == DT_UNKNOWN) {
        struct stat st;
        is_dir = ::fstatat(fd, e.d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode);
      }
      if (!is_dir) return true;
      if (depth + 1 >= max_depth_) {
        scan.truncated = true;
        return true;
      }
      subdirs.emplace_back(name);
      return true;
    });
    for (std::size_t i = 0; i < patterns_.size(); ++i) {
      if (!present[i]) continue;
      const std::string& pat = patterns_[i];
      struct stat st;
      if (::fstatat(fd, pat.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
      bool git_name = pat == ".git" || pat.ends_with("/.git");
      if (S_ISLNK(st.st_mode) || (git_name && S_ISDIR(st.st_mode))) continue;
      std::string full = Join(path, pat);
      if (IsPhysical(full)) scan.paths.push_back(std::move(full));
    }
    for (const std::string& name : subdirs) {
      if (stopped_) return;
      Subdir sub = OpenSubdir(fd, name.c_str(), short_read_ends);
      if (!sub.fd) continue;  // vanished or unreadable: nothing to carve there
      Walk(sub.fd.get(), sub.short_read_ends, Join(path, name), depth + 1, scan);
    }
  }

 private:
  const std::vector<std::string>& patterns_;
  std::vector<std::string_view> first_;
  std::size_t max_entries_, max_depth_;
  std::size_t entries_ = 0;
  bool stopped_ = false;
  alignas(dirent64) char listing_[32 * 1024];
};

}  // namespace

ProtectedScan FindProtectedPaths(const std::string& workspace,
                                 const std::vector<std::string>& patterns,
                                 std::size_t max_entries, std::size_t max_depth) {
  ProtectedScan scan;
  Fd root(::open(workspace.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (root) {
    auto walk = std::make_unique<ProtectedWalk>(patterns, max_entries, max_depth);
    walk->Walk(root.get(), ShortReadEndsListing(root.get()), workspace, 0, scan);
  }
  std::sort(scan.paths.begin(), scan.paths.end());
  scan.paths.erase(std::unique(scan.paths.begin(), scan.paths.end()), scan.paths.end());
  return scan;
}

}  // namespace cordon::policy
