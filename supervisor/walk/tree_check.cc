#include "supervisor/walk/tree_check.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <string_view>
#include <vector>

#include "supervisor/walk/dir_listing.h"
#include "base/fd.h"
#include "supervisor/walk/walk_queue.h"

namespace cordon::supervisor {
namespace {

const char* SpecialKind(mode_t mode) {
  return S_ISFIFO(mode)                       ? "a fifo"
         : S_ISSOCK(mode)                     ? "a socket"
         : (S_ISCHR(mode) || S_ISBLK(mode))   ? "a device"
                                              : "a special file";
}

// What the walkers of one tree share: the entry count (the limit is for
// all roots together), the queue of directories waiting to be walked with
// its stop flag, and the verdict, which the first refusal fills in. A
// second walker is started once the caller has shared WalkQueue::kTarget
// directories: a smaller tree does not pay for a thread.
class TreeWalk {
 public:
  explicit TreeWalk(const TreeLimits& limits) : limits_(limits) {}
  TreeWalk(const TreeWalk&) = delete;
  TreeWalk& operator=(const TreeWalk&) = delete;

  const TreeLimits& limits() const { return limits_; }
  WalkQueue& queue() { return queue_; }

  // The number of the entry being counted, or 0 once another entry has
  // passed the limit: the count stops at max_entries + 1, so the verdict
  // reports the entry that crossed it, whichever walker met it.
  std::size_t NextEntry() {
    std::size_t n = entries_.load(std::memory_order_relaxed);
    do {
      if (n > limits_.max_entries) return 0;
    } while (!entries_.compare_exchange_weak(n, n + 1, std::memory_order_relaxed));
    return n + 1;
  }

  // The first refusal is the verdict; every walker stops at its next entry.
  void Refuse(const std::string& path, const std::string& why) {
    {
      std::lock_guard lock(mu_);
      if (!refused_) {
        refused_ = true;
        verdict_.path = path.empty() ? "." : path;
        verdict_.reason = "tree check refused the search at '" + verdict_.path + "': " + why;
        verdict_.entries = entries_.load(std::memory_order_relaxed);
      }
    }
    queue_.Stop();
  }

  // Shares a directory; `may_start` is true for the caller's walker, which
  // starts the second walker once enough directories wait.
  void Share(PendingDir dir, bool may_start);

  // Waits for the second walker; the verdict of the whole walk.
  TreeVerdict Finish() {
    second_.Join();
    TreeVerdict v = std::move(verdict_);
    v.ok = !refused_;
    if (v.ok) v.entries = entries_.load(std::memory_order_relaxed);
    v.walkers = second_.walkers();
    return v;
  }

 private:
  const TreeLimits& limits_;
  WalkQueue queue_;
  std::atomic<std::size_t> entries_{0};
  std::mutex mu_;
  bool refused_ = false;  // guarded by mu_
  TreeVerdict verdict_;   // guarded by mu_
  SecondWalker second_;  // started by the caller's walker only
};

// One thread's walk. It lists each directory with getdents64 on its fd and
// trusts the entry type the filesystem reports: a directory is opened
// (O_NOFOLLOW | O_DIRECTORY, so whatever it has become since cannot be a
// link) and walked by that fd, or shared with the other walker as that fd; a
// link or special file is refused without a stat. Regular files and
// DT_UNKNOWN (filesystems that do not report types) get an fstatat: the link
// count is only known from it. Each walker has its own path buffer and one
// listing buffer per level.
class Walker {
 public:
  Walker(TreeWalk& walk, bool is_caller) : walk_(walk), is_caller_(is_caller) {}

  // Resolves one root; a directory root is queued for Work(). False once
  // the tree is refused.
  bool Root(int base_fd, const std::string& root) {
    // A new open file description: a dup would share the caller's
    // directory offset, and a base listed before would look empty.
    Fd cur(::openat(base_fd, ".", kWalkDirFlags));
    path_.clear();
    if (!cur) return Refuse(root, std::string("cannot open: ") + std::strerror(errno));
    std::string_view rest = root;
    while (!rest.empty()) {
      std::size_t slash = rest.find('/');
      std::string_view comp = rest.substr(0, slash);
      rest = slash == std::string_view::npos ? std::string_view{} : rest.substr(slash + 1);
      if (comp.empty() || comp == ".") continue;
      if (comp == "..") return Refuse(root, "a '..' segment is not allowed");
      Push(comp);
      std::string name(comp);
      struct stat st;
      if (::fstatat(cur.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
        return Refuse(path_, std::string("cannot stat: ") + std::strerror(errno));
      }
      if (!S_ISDIR(st.st_mode)) {
        if (!rest.empty()) return Kind(st) && Refuse("not a directory");
        return Entry(0) && Kind(st);  // the root is a single file: one entry
      }
      Fd next(::openat(cur.get(), name.c_str(), kWalkDirFlags));
      if (!next) return Refuse(path_, std::string("cannot open: ") + std::strerror(errno));
      if (!SameInode(next.get(), st)) return Refuse(path_, "changed while it was checked");
      cur = std::move(next);
    }
    bool short_read_ends = ShortReadEndsListing(cur.get());
    walk_.Share(PendingDir{std::move(cur), short_read_ends, 0, path_}, is_caller_);
    return true;
  }

  // Walks queued directories until the walk is over or stopped.
  void Work() {
    while (std::optional<PendingDir> dir = walk_.queue().Take()) {
      path_ = std::move(dir->path);
      Dir(dir->fd.get(), dir->short_read_ends, dir->depth);
      walk_.queue().Done();
    }
  }

 private:
  bool Refuse(const std::string& path, const std::string& why) {
    walk_.Refuse(path, why);
    return false;
  }
  bool Refuse(const std::string& why) { return Refuse(path_, why); }

  static bool SameInode(int fd, const struct stat& want) {
    struct stat got;
    return ::fstat(fd, &got) == 0 && got.st_dev == want.st_dev && got.st_ino == want.st_ino;
  }

  void Push(std::string_view name) {
    if (!path_.empty()) path_ += '/';
    path_ += name;
  }

  // Refuses anything but a directory or a single-link regular file.
  bool Kind(const struct stat& st) {
    if (S_ISLNK(st.st_mode)) return Refuse("symbolic links are not searched");
    if (S_ISREG(st.st_mode)) {
      if (st.st_nlink > 1) {
        return Refuse("hard-linked file (" + std::to_string(st.st_nlink) + " links)");
      }
      return true;
    }
    if (S_ISDIR(st.st_mode)) return true;
    return Refuse(std::string(SpecialKind(st.st_mode)) + " is not searched");
  }

  // Counts the entry at path_ (at `depth`) and applies the limits; false
  // without a verdict once the other walker has refused the tree.
  bool Entry(std::size_t depth) {
    if (walk_.queue().stopped()) return false;
    std::size_t n = walk_.NextEntry();
    if (n == 0) return false;
    const TreeLimits& limits = walk_.limits();
    if (n > limits.max_entries) {
      return Refuse("more than " + std::to_string(limits.max_entries) +
                    " entries (limit max_tree_entries); the whole tree is refused");
    }
    if (depth > limits.max_depth) {
      return Refuse("deeper than " + std::to_string(limits.max_depth) +
                    " levels (limit max_tree_depth); the whole tree is refused");
    }
    return true;
  }

  // The entries of the directory open at `fd` (path_ names it), at depth+1.
  bool Dir(int fd, bool short_read_ends, std::size_t depth) {
    if (bufs_.size() <= depth) bufs_.resize(depth + 1);
    if (!bufs_[depth]) bufs_[depth] = std::make_unique<char[]>(kListingBytes);
    bool ok = true;
    int err = ListDirectory(fd, short_read_ends, bufs_[depth].get(), kListingBytes,
                            [&](const dirent64& e) {
                              std::size_t keep = path_.size();
                              Push(e.d_name);
                              ok = Child(fd, short_read_ends, e.d_name, e.d_type, depth + 1);
                              if (ok) path_.resize(keep);
                              return ok;
                            });
    if (!ok) return false;
    if (err != 0) return Refuse(std::string("cannot list: ") + std::strerror(err));
    return true;
  }

  bool Child(int dir_fd, bool short_read_ends, const char* name, unsigned char type,
             std::size_t depth) {
    if (!Entry(depth)) return false;
    if (type == DT_DIR) return Descend(dir_fd, short_read_ends, name, depth);
    if (type != DT_REG && type != DT_UNKNOWN) {
      struct stat st {};
      st.st_mode = DTTOIF(type);
      return Kind(st);
    }
    struct stat st;
    if (::fstatat(dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
      return Refuse(std::string("cannot stat: ") + std::strerror(errno));
    }
    if (S_ISDIR(st.st_mode)) return Descend(dir_fd, short_read_ends, name, depth);
    return Kind(st);
  }

  // Opens the subdirectory at path_ and walks it, or shares it while the
  // queue is short.
  bool Descend(int dir_fd, bool short_read_ends, const char* name, std::size_t depth) {
    Subdir sub = OpenSubdir(dir_fd, name, short_read_ends);
    if (!sub.fd) {
      // ELOOP/ENOTDIR: listed as a directory, no longer one.
      if (sub.err == ELOOP || sub.err == ENOTDIR) return Refuse("changed while it was checked");
      return Refuse(std::string("cannot open: ") + std::strerror(sub.err));
    }
    if (walk_.queue().Hungry()) {
      walk_.Share(PendingDir{std::move(sub.fd), sub.short_read_ends, depth, path_}, is_caller_);
      return true;
    }
    return Dir(sub.fd.get(), sub.short_read_ends, depth);
  }

  TreeWalk& walk_;
  const bool is_caller_;
  std::string path_;  // the entry being checked, relative to the base
  std::vector<std::unique_ptr<char[]>> bufs_;  // getdents64 buffer per depth
};

void TreeWalk::Share(PendingDir dir, bool may_start) {
  std::size_t queued = queue_.Push(std::move(dir));
  if (may_start) second_.MaybeStart(queued, [this] { Walker(*this, false).Work(); });
}

}  // namespace

TreeVerdict CheckTrees(int base_fd, const std::vector<std::string>& roots,
                       const TreeLimits& limits) {
  for (const std::string& r : roots) {
    if (!r.empty() && r[0] == '/') {
      TreeVerdict v;
      v.path = r;
      v.reason = "tree check refused '" + r + "': roots are relative to the workspace";
      return v;
    }
  }
  TreeWalk walk(limits);
  Walker caller(walk, true);
  bool ok = true;
  for (const std::string& r : roots) {
    ok = caller.Root(base_fd, r);
    if (!ok) break;
  }
  if (ok) caller.Work();
  return walk.Finish();
}

}  // namespace cordon::supervisor
