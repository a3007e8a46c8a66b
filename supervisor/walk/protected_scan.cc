#include "supervisor/walk/protected_scan.h"

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
#include <string_view>
#include <utility>

#include "base/fd.h"
#include "policy/protected_paths.h"
#include "supervisor/walk/dir_listing.h"
#include "supervisor/walk/walk_queue.h"

namespace cordon::supervisor {
namespace {

using policy::FirstSegment;
using policy::LiteralPrefix;

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
    for (const std::string& pat : patterns_) first_.push_back(FirstSegment(pat));
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

}  // namespace cordon::supervisor
