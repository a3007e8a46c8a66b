#include "policy/protected_paths.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <utility>

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

ProtectedScan FindProtectedPaths(const std::string& workspace,
                                 const std::vector<std::string>& patterns,
                                 std::size_t max_entries, std::size_t max_depth) {
  ProtectedScan scan;
  // A pattern can match in a directory only if its first segment is one of
  // the directory's names: the listing decides which patterns to stat, so
  // a directory holding none of them costs no stat at all.
  std::vector<std::string_view> first;
  for (const std::string& pat : patterns) first.push_back(Split(pat).front());
  std::vector<bool> present(patterns.size());
  struct Dir {
    std::string path;
    std::size_t depth;
  };
  std::vector<Dir> todo{{workspace, 0}};
  std::vector<char> listing(32 * 1024);
  std::size_t entries = 0;
  while (!todo.empty()) {
    Dir dir = std::move(todo.back());
    todo.pop_back();
    Fd fd(::open(dir.path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!fd) continue;  // vanished or unreadable: nothing to carve there
    std::fill(present.begin(), present.end(), false);
    bool stop = false;
    // getdents64 on the fd itself: readdir's fdopendir would add an fstat
    // and two fcntl calls per directory, a third of the walk's syscalls.
    for (;;) {
      ssize_t n = ::getdents64(fd.get(), listing.data(), listing.size());
      if (n <= 0) break;  // end, or vanished meanwhile
      for (ssize_t off = 0; off < n && !stop;) {
        const auto* e = reinterpret_cast<const dirent64*>(listing.data() + off);
        off += e->d_reclen;
        std::string_view name = e->d_name;
        if (name == "." || name == "..") continue;
        if (++entries > max_entries) {
          scan.truncated = true;
          stop = true;
          break;
        }
        for (std::size_t i = 0; i < first.size(); ++i) {
          if (first[i] == name) present[i] = true;
        }
        // Never into .git: its patterns are checked from here, and its
        // objects are most of a repository's entries.
        if (name == ".git") continue;
        bool is_dir = e->d_type == DT_DIR;
        if (e->d_type == DT_UNKNOWN) {
          struct stat st;
          is_dir = ::fstatat(fd.get(), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
                   S_ISDIR(st.st_mode);
        }
        if (!is_dir) continue;
        if (dir.depth + 1 >= max_depth) {
          scan.truncated = true;
          continue;
        }
        todo.push_back({Join(dir.path, name), dir.depth + 1});
      }
      if (stop) break;
    }
    for (std::size_t i = 0; i < patterns.size(); ++i) {
      if (!present[i]) continue;
      const std::string& pat = patterns[i];
      struct stat st;
      if (::fstatat(fd.get(), pat.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
      bool git_name = pat == ".git" || pat.ends_with("/.git");
      if (S_ISLNK(st.st_mode) || (git_name && S_ISDIR(st.st_mode))) continue;
      std::string full = Join(dir.path, pat);
      if (IsPhysical(full)) scan.paths.push_back(std::move(full));
    }
    if (scan.truncated && entries > max_entries) break;
  }
  std::sort(scan.paths.begin(), scan.paths.end());
  scan.paths.erase(std::unique(scan.paths.begin(), scan.paths.end()), scan.paths.end());
  return scan;
}

}  // namespace cordon::policy
