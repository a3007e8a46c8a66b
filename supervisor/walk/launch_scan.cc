#include "supervisor/walk/launch_scan.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <mutex>
#include <optional>
#include <string_view>
#include <utility>

#include "base/fd.h"
#include "policy/deny_glob.h"
#include "supervisor/walk/dir_listing.h"
#include "supervisor/walk/walk_queue.h"

namespace cordon::supervisor {
namespace {

using policy::ScannedKind;
using policy::ScannedEntry;

// The kind the scan lists a special file as, from its d_type.
bool Special(unsigned char d_type, ScannedKind* kind) {
  switch (d_type) {
    case DT_CHR: *kind = ScannedKind::kCharDevice; return true;
    case DT_BLK: *kind = ScannedKind::kBlockDevice; return true;
    case DT_FIFO: *kind = ScannedKind::kFifo; return true;
    case DT_SOCK: *kind = ScannedKind::kSocket; return true;
    default: return false;
  }
}

unsigned char TypeOf(mode_t mode) {
  if (S_ISDIR(mode)) return DT_DIR;
  if (S_ISREG(mode)) return DT_REG;
  if (S_ISLNK(mode)) return DT_LNK;
  if (S_ISCHR(mode)) return DT_CHR;
  if (S_ISBLK(mode)) return DT_BLK;
  if (S_ISFIFO(mode)) return DT_FIFO;
  if (S_ISSOCK(mode)) return DT_SOCK;
  return DT_UNKNOWN;
}

// What the walkers of one scan share: the bound (for the whole scan), the
// queue of directories waiting to be walked with its stop flag, and what
// was found. As in the protected-path scan, a second walker starts once
// WalkQueue::kTarget directories wait: a small workspace pays no thread.
class Scan {
 public:
  Scan(const std::string& workspace, const std::vector<std::string>& globs,
       std::size_t max_entries, std::size_t max_depth)
      : workspace_(workspace), globs_(globs), max_entries_(max_entries), max_depth_(max_depth) {}
  Scan(const Scan&) = delete;
  Scan& operator=(const Scan&) = delete;

  const std::string& workspace() const { return workspace_; }
  const std::vector<std::string>& globs() const { return globs_; }
  std::size_t max_depth() const { return max_depth_; }
  WalkQueue& queue() { return queue_; }

  bool CountEntry() {
    if (entries_.fetch_add(1, std::memory_order_relaxed) + 1 <= max_entries_) return true;
    Problem("the workspace has more than " + std::to_string(max_entries_) +
            " entries (limits.scanEntries)");
    return false;
  }
  // The first problem ends the scan: what lies past it is not known.
  void Problem(std::string why) {
    {
      std::lock_guard lock(mu_);
      if (out_.problem.empty()) out_.problem = std::move(why);
    }
    queue_.Stop();
  }
  void Merge(std::vector<std::string>& matches, std::vector<ScannedEntry>& entries) {
    std::lock_guard lock(mu_);
    for (std::string& m : matches) out_.matches.push_back(std::move(m));
    for (ScannedEntry& e : entries) out_.entries.push_back(std::move(e));
  }
  void Share(PendingDir dir, bool may_start);

  LaunchScan Finish() {
    second_.Join();
    return std::move(out_);
  }

 private:
  const std::string& workspace_;
  const std::vector<std::string>& globs_;
  const std::size_t max_entries_, max_depth_;
  WalkQueue queue_;
  std::atomic<std::size_t> entries_{0};
  std::mutex mu_;
  LaunchScan out_;  // guarded by mu_
  SecondWalker second_;  // started by the caller's walker only
};

// One thread's walk, depth first, each directory opened beneath its
// parent's fd without following a link: the path listed is the path the
// kernel grant is built from. A subdirectory is walked here or shared, as
// that fd, while the queue is short.
class ScanWalker {
 public:
  ScanWalker(Scan& scan, bool is_caller) : scan_(scan), is_caller_(is_caller) {}

  void Work() {
    while (std::optional<PendingDir> dir = scan_.queue().Take()) {
      Walk(dir->fd.get(), dir->short_read_ends, dir->path, dir->depth);
      scan_.queue().Done();
    }
    scan_.Merge(matches_, entries_);
  }

 private:
  std::string Abs(const std::string& rel) const { return scan_.workspace() + "/" + rel; }

  void DenyLinkTarget(const std::string& path) {
    char buf[PATH_MAX];
    if (::realpath(path.c_str(), buf) == nullptr || path == buf) return;
    const std::string& ws = scan_.workspace();
    std::string_view target = buf;
    if (target.size() > ws.size() && target.starts_with(ws) && target[ws.size()] == '/') {
      matches_.emplace_back(target);
    }
  }

  // Lists the entry when it is a special file or a regular file with more
  // than one name; returns its type (a stat only for regular files and
  // entries the listing does not type), DT_UNKNOWN when it is gone.
  unsigned char Classify(int fd, const dirent64& e, const std::string& child) {
    ScannedKind kind;
    if (Special(e.d_type, &kind)) {
      entries_.push_back({Abs(child), kind, 0, e.d_ino, 1});
      return e.d_type;
    }
    if (e.d_type != DT_REG && e.d_type != DT_UNKNOWN) return e.d_type;
    struct stat st;
    if (::fstatat(fd, e.d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
      // Gone since it was listed: nothing to refuse. Anything else: not known.
      if (errno != ENOENT) scan_.Problem("cannot stat '" + child + "': " + std::strerror(errno));
      return DT_UNKNOWN;
    }
    const unsigned char type = TypeOf(st.st_mode);
    if (Special(type, &kind)) {
      entries_.push_back({Abs(child), kind, st.st_dev, st.st_ino, st.st_nlink});
    } else if (type == DT_REG && st.st_nlink > 1) {
      entries_.push_back({Abs(child), ScannedKind::kLinkedFile, st.st_dev, st.st_ino, st.st_nlink});
    }
    return type;
  }

  // `rel` is the directory's workspace-relative path ("" for the root),
  // `depth` the level of its entries.
  void Walk(int fd, bool short_read_ends, const std::string& rel, std::size_t depth) {
    const std::vector<std::string>& globs = scan_.globs();
    std::vector<std::string> subdirs;
    int err = ListDirectory(fd, short_read_ends, listing_, sizeof listing_, [&](const dirent64& e) {
      if (scan_.queue().stopped() || !scan_.CountEntry()) return false;
      std::string child = rel.empty() ? std::string(e.d_name) : rel + "/" + e.d_name;
      // An entry past the bound, not a directory at it: an empty directory
      // at the last level is whole (as the tree check counts).
      if (depth > scan_.max_depth()) {
        scan_.Problem("the workspace is deeper than " + std::to_string(scan_.max_depth()) +
                      " levels at '" + child + "' (limits.treeDepth)");
        return false;
      }
      const unsigned char type = Classify(fd, e, child);
      if (!globs.empty() && policy::MatchesDenyGlob(globs, child)) {
        matches_.push_back(Abs(child));
        // A link is read through to what it names, which the kernel grants
        // by that name: a target in the workspace is denied with it.
        if (type == DT_LNK) DenyLinkTarget(matches_.back());
        return true;  // denied whole: nothing beneath needs looking at
      }
      if (type != DT_DIR) return true;
      subdirs.push_back(std::move(child));
      return true;
    });
    if (err != 0) {
      scan_.Problem("cannot list '" + (rel.empty() ? "." : rel) + "': " + std::strerror(err));
    }
    for (std::string& child : subdirs) {
      if (scan_.queue().stopped()) return;
      const char* name = child.c_str() + (rel.empty() ? 0 : rel.size() + 1);
      Subdir sub = OpenSubdir(fd, name, short_read_ends);
      if (!sub.fd) {
        if (sub.err == ENOENT) continue;  // gone since it was listed: nothing to deny
        scan_.Problem("cannot open '" + child + "': " + std::strerror(sub.err));
        return;
      }
      if (scan_.queue().Hungry()) {
        scan_.Share(PendingDir{std::move(sub.fd), sub.short_read_ends, depth + 1, std::move(child)},
                    is_caller_);
        continue;
      }
      Walk(sub.fd.get(), sub.short_read_ends, child, depth + 1);
    }
  }

  Scan& scan_;
  const bool is_caller_;
  std::vector<std::string> matches_;
  std::vector<ScannedEntry> entries_;
  alignas(dirent64) char listing_[kListingBytes];
};

void Scan::Share(PendingDir dir, bool may_start) {
  std::size_t queued = queue_.Push(std::move(dir));
  if (may_start) second_.MaybeStart(queued, [this] { ScanWalker(*this, false).Work(); });
}

}  // namespace

LaunchScan ScanWorkspace(const std::string& workspace, const std::vector<std::string>& globs,
                         std::size_t max_entries, std::size_t max_depth) {
  LaunchScan out;
  Fd root(OpenWalkDir(AT_FDCWD, workspace.c_str()));
  // A workspace that is not there yet (a session's, made after load) holds
  // nothing to refuse.
  if (!root && errno == ENOENT) return out;
  if (!root) {
    out.problem = std::string("cannot open the workspace: ") + std::strerror(errno);
    return out;
  }
  Scan scan(workspace, globs, max_entries, max_depth);
  const bool short_read_ends = ShortReadEndsListing(root.get());
  // Depth 1 is the level of the root's entries (the limit counts levels).
  scan.Share(PendingDir{std::move(root), short_read_ends, 1, ""}, true);
  ScanWalker(scan, true).Work();
  out = scan.Finish();
  // A match with more than one name is read by its other names too.
  for (std::string& other : policy::OtherNamesOfMatches(out.matches, out.entries)) {
    out.matches.push_back(std::move(other));
  }
  std::sort(out.matches.begin(), out.matches.end());
  out.matches.erase(std::unique(out.matches.begin(), out.matches.end()), out.matches.end());
  // The order the walkers found them in is not the tree's: sort for explain.
  std::sort(out.entries.begin(), out.entries.end(),
            [](const ScannedEntry& a, const ScannedEntry& b) { return a.path < b.path; });
  return out;
}

}  // namespace cordon::supervisor
