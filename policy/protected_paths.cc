#include "policy/protected_paths.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <optional>
#include <utility>

#include "policy/dir_listing.h"
#include "policy/fd.h"
#include "policy/walk_queue.h"

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
  std::vector<std::string_view> pat = Split(pattern);
  if (pat.empty() || pat.size() > rel.size()) return false;
  // Beneath a ".git" match is a .git directory's content: not protected.
  bool covers_below = pat.back() != ".git";
  for (std::size_t i = 0; i + pat.size() <= rel.size(); ++i) {
    if (MatchFrom(pat, 0, rel, i, covers_below)) return true;
  }
  return false;
}

// The segments of `pattern` before its first "**" (all of it without one).
std::string LiteralPrefix(const std::string& pattern) {
  std::size_t at = pattern.find("/**");
  return at == std::string::npos ? pattern : pattern.substr(0, at);
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
  // .git/commondir names the directory git reads config and hooks from:
  // pointed elsewhere in the workspace, it brings a config of the tool's.
  // A submodule's git directory is .git/modules/NAME (NAME may hold
  // slashes, and nest further modules), a worktree's .git/worktrees/NAME:
  // each has a config or hooks git obeys when run there.
  return {".git/config",
          ".git/config.worktree",
          ".git/hooks",
          ".git/info",
          ".git/commondir",
          ".git/modules/**/config",
          ".git/modules/**/config.worktree",
          ".git/modules/**/hooks",
          ".git/modules/**/info",
          ".git/modules/**/commondir",
          ".git/worktrees/**/config.worktree",
          ".git/worktrees/**/commondir",
          ".git",
          ".gitmodules",
          ".envrc",
          ".cordon"};
}

bool MatchesProtected(const std::vector<std::string>& patterns, std::string_view rel_path) {
  if (rel_path.empty()) return false;
  std::vector<std::string_view> rel = Split(rel_path);
  return std::any_of(patterns.begin(), patterns.end(),
                     [&](const std::string& pat) { return Matches(pat, rel); });
}

bool LeadsToProtected(const std::vector<std::string>& patterns, std::string_view rel_path,
                      bool any_depth) {
  if (rel_path.empty()) return false;
  std::vector<std::string_view> rel = Split(rel_path);
  for (const std::string& pattern : patterns) {
    std::vector<std::string_view> pat = Split(pattern);
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
  std::vector<std::string_view> segs = Split(pattern);
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

namespace {

// What the walkers of one scan share: the patterns, the entry count (the
// bound is for the whole scan), the queue of directories waiting to be
// walked with its stop flag, and what was found. A second walker is started
// once the caller has shared WalkQueue::kTarget directories: a small
// workspace does not pay for a thread. The order of the finds does not
// matter (FindProtectedPaths sorts them).
class ScanWalk {
 public:
  ScanWalk(const std::vector<std::string>& patterns, std::size_t max_entries,
           std::size_t max_depth)
      : patterns_(patterns), max_entries_(max_entries), max_depth_(max_depth) {
    // A pattern can match in a directory only if its first segment is one
    // of the directory's names: the listing decides which patterns to stat,
    // so a directory holding none of them costs no stat at all.
    for (const std::string& pat : patterns_) first_.push_back(Split(pat).front());
  }
  ScanWalk(const ScanWalk&) = delete;
  ScanWalk& operator=(const ScanWalk&) = delete;

  const std::vector<std::string>& patterns() const { return patterns_; }
  const std::vector<std::string_view>& first() const { return first_; }
  std::size_t max_depth() const { return max_depth_; }
  WalkQueue& queue() { return queue_; }

  // Counts one entry; false once the bound is passed (the scan stops).
  bool CountEntry() {
    if (entries_.fetch_add(1, std::memory_order_relaxed) + 1 <= max_entries_) return true;
    truncated_.store(true, std::memory_order_relaxed);
    queue_.Stop();
    return false;
  }
  void Truncated() { truncated_.store(true, std::memory_order_relaxed); }
  void Found(std::string path) {
    std::lock_guard lock(mu_);
    found_.push_back(std::move(path));
  }

  // Shares a directory; `may_start` is true for the caller's walker, which
  // starts the second walker once enough directories wait.
  void Share(PendingDir dir, bool may_start);

  ProtectedScan Finish() {
    second_.Join();
    ProtectedScan scan;
    scan.paths = std::move(found_);
    scan.truncated = truncated_.load(std::memory_order_relaxed);
    scan.walkers = second_.walkers();
    return scan;
  }

 private:
  const std::vector<std::string>& patterns_;
  std::vector<std::string_view> first_;
  const std::size_t max_entries_, max_depth_;
  WalkQueue queue_;
  std::atomic<std::size_t> entries_{0};
  std::atomic<bool> truncated_{false};
  std::mutex mu_;
  std::vector<std::string> found_;  // guarded by mu_
  SecondWalker second_;  // started by the caller's walker only
};

// One thread's walk, depth first. Each directory is opened relative to its
// parent's fd (O_NOFOLLOW: a symlink swapped in is not entered), so the
// kernel looks up one name per directory, not the whole path again; a
// subdirectory is walked here or shared, as that fd, while the queue is
// short.
class ScanWalker {
 public:
  ScanWalker(ScanWalk& walk, bool is_caller) : walk_(walk), is_caller_(is_caller) {}

  // Walks queued directories until the scan is over or stopped.
  void Work() {
    while (std::optional<PendingDir> dir = walk_.queue().Take()) {
      Walk(dir->fd.get(), dir->short_read_ends, dir->path, dir->depth);
      walk_.queue().Done();
    }
  }

 private:
  void Walk(int fd, bool short_read_ends, const std::string& path, std::size_t depth) {
    const std::vector<std::string>& patterns = walk_.patterns();
    const std::vector<std::string_view>& first = walk_.first();
    std::vector<bool> present(patterns.size());
    std::vector<std::string> subdirs;
    // getdents64 on the fd itself: readdir's fdopendir would add an fstat
    // and two fcntl calls per directory, a third of the walk's syscalls.
    ListDirectory(fd, short_read_ends, listing_, sizeof listing_, [&](const dirent64& e) {
      std::string_view name = e.d_name;
      if (walk_.queue().stopped() || !walk_.CountEntry()) return false;
      for (std::size_t i = 0; i < first.size(); ++i) {
        if (first[i] == name) present[i] = true;
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
      if (depth + 1 >= walk_.max_depth()) {
        walk_.Truncated();
        return true;
      }
      subdirs.emplace_back(name);
      return true;
    });
    for (std::size_t i = 0; i < patterns.size(); ++i) {
      if (!present[i]) continue;
      // A pattern with "**" is carved from its literal prefix down, whole:
      // the scan does not walk git's directories to expand it, and a
      // carve too wide fails closed.
      const std::string pat = LiteralPrefix(patterns[i]);
      struct stat st;
      if (::fstatat(fd, pat.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
      bool git_name = pat == ".git" || pat.ends_with("/.git");
      if (S_ISLNK(st.st_mode) || (git_name && S_ISDIR(st.st_mode))) continue;
      std::string full = Join(path, pat);
      if (IsPhysical(full)) walk_.Found(std::move(full));
    }
    for (const std::string& name : subdirs) {
      if (walk_.queue().stopped()) return;
      Subdir sub = OpenSubdir(fd, name.c_str(), short_read_ends);
      if (!sub.fd) continue;  // vanished or unreadable: nothing to carve there
      if (walk_.queue().Hungry()) {
        walk_.Share(PendingDir{std::move(sub.fd), sub.short_read_ends, depth + 1, Join(path, name)},
                    is_caller_);
        continue;
      }
      Walk(sub.fd.get(), sub.short_read_ends, Join(path, name), depth + 1);
    }
  }

  ScanWalk& walk_;
  const bool is_caller_;
  alignas(dirent64) char listing_[kListingBytes];
};

void ScanWalk::Share(PendingDir dir, bool may_start) {
  std::size_t queued = queue_.Push(std::move(dir));
  if (may_start) second_.MaybeStart(queued, [this] { ScanWalker(*this, false).Work(); });
}

}  // namespace

ProtectedScan FindProtectedPaths(const std::string& workspace,
                                 const std::vector<std::string>& patterns,
                                 std::size_t max_entries, std::size_t max_depth) {
  ProtectedScan scan;
  Fd root(::open(workspace.c_str(), kWalkDirFlags));
  if (root) {
    ScanWalk walk(patterns, max_entries, max_depth);
    bool short_read_ends = ShortReadEndsListing(root.get());
    walk.Share(PendingDir{std::move(root), short_read_ends, 0, workspace}, true);
    ScanWalker(walk, true).Work();
    scan = walk.Finish();
  }
  std::sort(scan.paths.begin(), scan.paths.end());
  scan.paths.erase(std::unique(scan.paths.begin(), scan.paths.end()), scan.paths.end());
  return scan;
}

}  // namespace cordon::policy
