#include "supervisor/walk/launch_scan.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <ctime>
#include <mutex>
#include <optional>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "base/fd.h"
#include "policy/deny_glob.h"
#include "supervisor/walk/dir_listing.h"
#include "supervisor/walk/walk_queue.h"

namespace cordon::supervisor {
namespace {

using policy::CachedDir;
using policy::CachedFlag;
using policy::CachedMatch;
using policy::ScannedEntry;
using policy::ScannedKind;

policy::StatTimes TimesOf(const struct stat& st) {
  return {st.st_mtim.tv_sec, st.st_mtim.tv_nsec, st.st_ctim.tv_sec, st.st_ctim.tv_nsec};
}

// The kind the scan lists a special file as, from its d_type.
bool Special(unsigned char d_type, ScannedKind* kind) {
  switch (d_type) {
    case DT_CHR:
      *kind = ScannedKind::kCharDevice;
      return true;
    case DT_BLK:
      *kind = ScannedKind::kBlockDevice;
      return true;
    case DT_FIFO:
      *kind = ScannedKind::kFifo;
      return true;
    case DT_SOCK:
      *kind = ScannedKind::kSocket;
      return true;
    default:
      return false;
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

// What one scan keeps: the bound (for the whole scan), the queue the walk
// starts from with its stop flag, and what was found. One walker: the
// launch's scan is a stat a directory, and a second thread on two cores
// cost more CPU than it saved (both walkers meet on the same dentries),
// and on a busy machine (a CI runner, a build beside) the launch waited
// for it to be scheduled: 27-34 ms a launch on the kit tree, 5.7-6.7 ms
// with one (bench/floor_launcher, load 3).
class Scan {
 public:
  Scan(const std::string& workspace, const std::vector<std::string>& globs, std::size_t max_entries,
       std::size_t max_depth, const policy::ScanCache* cache, std::int64_t start_s)
      : workspace_(workspace),
        globs_(globs),
        max_entries_(max_entries),
        max_depth_(max_depth),
        start_s_(start_s) {
    if (cache == nullptr) return;
    cached_.reserve(cache->dirs.size());
    for (const CachedDir& d : cache->dirs) cached_.emplace(d.rel, &d);
  }
  Scan(const Scan&) = delete;
  Scan& operator=(const Scan&) = delete;

  const std::string& workspace() const { return workspace_; }
  const std::vector<std::string>& globs() const { return globs_; }
  std::size_t max_depth() const { return max_depth_; }
  std::int64_t start_s() const { return start_s_; }
  WalkQueue& queue() { return queue_; }

  // The earlier scan's record of the directory at `rel`, if any.
  const CachedDir* Cached(const std::string& rel) const {
    auto it = cached_.find(rel);
    return it == cached_.end() ? nullptr : it->second;
  }

  bool CountEntry() { return CountEntries(1); }
  bool CountEntries(std::size_t n) {
    if (entries_.fetch_add(n, std::memory_order_relaxed) + n <= max_entries_) return true;
    Problem("the workspace has more than " + std::to_string(max_entries_) +
            " entries; raise limits.scanEntries in the policy or narrow the workspace");
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
  void Merge(std::vector<std::string>& matches, std::vector<ScannedEntry>& entries,
             std::vector<CachedDir>& dirs, std::vector<const CachedDir*>& kept, std::size_t listed,
             std::size_t reused, bool changed) {
    std::lock_guard lock(mu_);
    kept_.insert(kept_.end(), kept.begin(), kept.end());
    for (std::string& m : matches) out_.matches.push_back(std::move(m));
    for (ScannedEntry& e : entries) out_.entries.push_back(std::move(e));
    for (CachedDir& d : dirs) out_.dirs.push_back(std::move(d));
    out_.dirs_listed += listed;
    out_.dirs_reused += reused;
    changed_ = changed_ || changed;
  }
  void Share(PendingDir dir) { queue_.Push(std::move(dir)); }

  LaunchScan Finish() {
    out_.changed = changed_ || cached_.size() != out_.dirs.size() + kept_.size();
    // Copies of the records kept whole only when a new cache is written.
    if (out_.changed) {
      for (const CachedDir* d : kept_) out_.dirs.push_back(*d);
    } else {
      out_.dirs.clear();
    }
    return std::move(out_);
  }

 private:
  const std::string& workspace_;
  const std::vector<std::string>& globs_;
  const std::size_t max_entries_, max_depth_;
  const std::int64_t start_s_;
  std::unordered_map<std::string_view, const CachedDir*> cached_;  // read-only once walking
  std::vector<const CachedDir*> kept_;                             // guarded by mu_
  WalkQueue queue_;
  std::atomic<std::size_t> entries_{0};
  std::mutex mu_;
  LaunchScan out_;        // guarded by mu_
  bool changed_ = false;  // guarded by mu_
};

// The walk, depth first, each directory opened beneath its parent's fd
// without following a link: the path listed is the path the kernel grant
// is built from. A directory the cache holds unchanged is not listed
// (Reuse).
class ScanWalker {
 public:
  explicit ScanWalker(Scan& scan) : scan_(scan) {}

  void Work() {
    while (std::optional<PendingDir> dir = scan_.queue().Take()) {
      Walk(dir->fd.get(), dir->short_read_ends, dir->path, dir->depth);
      scan_.queue().Done();
    }
    scan_.Merge(matches_, entries_, dirs_, kept_, listed_, reused_, changed_);
  }

 private:
  std::string Abs(const std::string& rel) const { return scan_.workspace() + "/" + rel; }
  static std::string Child(const std::string& rel, std::string_view name) {
    std::string out;
    SetChild(out, rel, name);
    return out;
  }
  static void SetChild(std::string& out, const std::string& rel, std::string_view name) {
    out.assign(rel);
    if (!rel.empty()) out += '/';
    out += name;
  }

  void DenyLinkTarget(const std::string& path) {
    char buf[PATH_MAX];
    if (::realpath(path.c_str(), buf) == nullptr || path == buf) return;
    const std::string& ws = scan_.workspace();
    std::string_view target = buf;
    if (target.size() > ws.size() && target.starts_with(ws) && target[ws.size()] == '/') {
      matches_.emplace_back(target);
    }
  }

  void AddMatch(CachedDir& d, const std::string& child, std::string_view name, bool link) {
    matches_.push_back(Abs(child));
    d.matches.push_back({std::string(name), link});
    // A link is read through to what it names, which the kernel grants
    // by that name: a target in the workspace is denied with it.
    if (link) DenyLinkTarget(matches_.back());
  }

  // Lists the entry (and flags it in `d`) when `st` is a special file or a
  // regular file with more than one name.
  void Flag(CachedDir& d, const std::string& child, std::string_view name, const struct stat& st) {
    ScannedKind kind;
    const unsigned char type = TypeOf(st.st_mode);
    if (Special(type, &kind)) {
      entries_.push_back({Abs(child), kind, st.st_dev, st.st_ino, st.st_nlink});
    } else if (type == DT_REG && st.st_nlink > 1) {
      kind = ScannedKind::kLinkedFile;
      entries_.push_back({Abs(child), kind, st.st_dev, st.st_ino, st.st_nlink});
    } else {
      return;
    }
    d.flagged.push_back({std::string(name), kind, st.st_ino, st.st_nlink});
  }

  // Flags the listed entry when it is a special file or a regular file
  // with more than one name; returns its type (a stat only for regular
  // files and entries the listing does not type), DT_UNKNOWN when gone.
  unsigned char Classify(int fd, CachedDir& d, const dirent64& e, const std::string& child) {
    if (e.d_type != DT_REG && e.d_type != DT_UNKNOWN && e.d_type != DT_CHR && e.d_type != DT_BLK &&
        e.d_type != DT_FIFO && e.d_type != DT_SOCK) {
      return e.d_type;
    }
    struct stat st;
    if (::fstatat(fd, e.d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
      // Gone since it was listed: nothing to refuse. Anything else: not known.
      if (errno != ENOENT) scan_.Problem("cannot stat '" + child + "': " + std::strerror(errno));
      return DT_UNKNOWN;
    }
    Flag(d, child, e.d_name, st);
    return TypeOf(st.st_mode);
  }

  // `rel` is the directory's workspace-relative path ("" for the root),
  // `depth` the level of its entries.
  void Walk(int fd, bool short_read_ends, const std::string& rel, std::size_t depth) {
    struct stat st;
    if (::fstat(fd, &st) != 0) {
      scan_.Problem("cannot stat '" + (rel.empty() ? "." : rel) + "': " + std::strerror(errno));
      return;
    }
    CachedDir d;
    d.rel = rel;
    d.dev = st.st_dev;
    d.ino = st.st_ino;
    d.times = TimesOf(st);
    const CachedDir* old = scan_.Cached(rel);
    const bool reused = old != nullptr && old->dev == d.dev && old->ino == d.ino &&
                        old->times == d.times && Reuse(fd, *old, d, depth);
    if (!reused && !List(fd, short_read_ends, d, depth)) return;
    std::string child;  // one buffer for the loop (no allocation a subdirectory)
    for (const std::string& name : reused ? old->subdirs : d.subdirs) {
      if (scan_.queue().stopped()) return;
      SetChild(child, rel, name);
      if (ReuseLeaf(fd, name, child, depth + 1)) continue;
      Subdir sub = OpenSubdir(fd, name.c_str(), short_read_ends);
      if (!sub.fd) {
        if (sub.err == ENOENT) continue;  // gone since it was listed: nothing to deny
        scan_.Problem("cannot open '" + child + "': " + std::strerror(sub.err));
        return;
      }
      Walk(sub.fd.get(), sub.short_read_ends, child, depth + 1);
    }
    Keep(reused ? old : nullptr, std::move(d));
  }

  // What the next scan may start from: the cached record itself when
  // nothing in it moved (no copy), else `d`. One that changed in the second
  // before the scan may change again unseen (policy::SettledBefore): it is
  // listed next time.
  void Keep(const CachedDir* old, CachedDir d) {
    if (old != nullptr && d.flagged == old->flagged) {
      kept_.push_back(old);
      return;
    }
    changed_ = true;
    if (old != nullptr) d.subdirs = old->subdirs;
    if (policy::SettledBefore(d.times, scan_.start_s())) dirs_.push_back(std::move(d));
  }

  // A subdirectory the cache holds unchanged with nothing to look at
  // inside (no subdirectory, nothing flagged) is taken from the cache on a
  // stat through its parent, not opened: most directories of a package
  // tree are such leaves. False when it is not one.
  bool ReuseLeaf(int parent, const std::string& name, const std::string& child, std::size_t depth) {
    const CachedDir* old = scan_.Cached(child);
    if (old == nullptr || !old->subdirs.empty() || !old->flagged.empty()) return false;
    struct stat st;
    if (::fstatat(parent, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISDIR(st.st_mode) ||
        st.st_dev != old->dev || st.st_ino != old->ino || TimesOf(st) != old->times) {
      return false;
    }
    if (old->matches.empty()) {
      // Nothing of it to list or flag: Reuse and Keep without a record
      // to copy it into (most directories of a tree are such leaves).
      ++reused_;
      if (!scan_.CountEntries(old->entries)) return true;
      if (depth > scan_.max_depth() && old->entries > 0) {
        DeeperThanBound(child);
        return true;
      }
      kept_.push_back(old);
      return true;
    }
    CachedDir d;
    d.rel = child;
    d.dev = old->dev;
    d.ino = old->ino;
    d.times = old->times;
    Reuse(-1, *old, d, depth);
    Keep(old, std::move(d));
    return true;
  }

  void DeeperThanBound(const std::string& rel) {
    scan_.Problem("the workspace is deeper than " + std::to_string(scan_.max_depth()) +
                  " levels in '" + rel + "'; raise limits.treeDepth in the policy");
  }

  // Lists the directory into `d`; false when the scan stops.
  bool List(int fd, bool short_read_ends, CachedDir& d, std::size_t depth) {
    ++listed_;
    changed_ = true;
    const std::vector<std::string>& globs = scan_.globs();
    int err = ListDirectory(fd, short_read_ends, listing_, sizeof listing_, [&](const dirent64& e) {
      if (scan_.queue().stopped() || !scan_.CountEntry()) return false;
      ++d.entries;
      std::string child = Child(d.rel, e.d_name);
      // An entry past the bound, not a directory at it: an empty directory
      // at the last level is whole (as the tree check counts).
      if (depth > scan_.max_depth()) {
        scan_.Problem("the workspace is deeper than " + std::to_string(scan_.max_depth()) +
                      " levels at '" + child + "'; raise limits.treeDepth in the policy");
        return false;
      }
      const unsigned char type = Classify(fd, d, e, child);
      if (!globs.empty() && policy::MatchesDenyGlob(globs, child)) {
        // Denied whole: nothing beneath needs looking at. A flagged match
        // stays flagged: its other names go with it.
        AddMatch(d, child, e.d_name, type == DT_LNK);
        return true;
      }
      if (type == DT_DIR) d.subdirs.emplace_back(e.d_name);
      return true;
    });
    if (err != 0) {
      scan_.Problem("cannot list '" + (d.rel.empty() ? "." : d.rel) + "': " + std::strerror(err));
    }
    return !scan_.queue().stopped();
  }

  // Takes the unchanged directory from the cache: its entries counted, its
  // flagged entries stat'ed again, its matches as they were (its
  // subdirectories are the cached ones). False (nothing taken) when a flagged name no longer names
  // the inode recorded, or no longer a flaggable one: then it is listed.
  bool Reuse(int fd, const CachedDir& old, CachedDir& d, std::size_t depth) {
    std::vector<std::pair<const CachedFlag*, struct stat>> now;
    for (const CachedFlag& f : old.flagged) {
      struct stat st;
      if (::fstatat(fd, f.name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 || st.st_ino != f.ino ||
          S_ISDIR(st.st_mode) || S_ISLNK(st.st_mode)) {
        return false;
      }
      now.emplace_back(&f, st);
    }
    ++reused_;
    if (!scan_.CountEntries(old.entries)) return true;
    d.entries = old.entries;
    if (depth > scan_.max_depth() && old.entries > 0) {
      DeeperThanBound(d.rel);
      return true;
    }
    // A link count that moved shows in d.flagged (Keep).
    for (const auto& [f, st] : now) Flag(d, Child(d.rel, f->name), f->name, st);
    for (const CachedMatch& m : old.matches) AddMatch(d, Child(d.rel, m.name), m.name, m.link);
    return true;
  }

  Scan& scan_;
  std::vector<std::string> matches_;
  std::vector<ScannedEntry> entries_;
  std::vector<CachedDir> dirs_;
  std::vector<const CachedDir*> kept_;
  std::size_t listed_ = 0, reused_ = 0;
  bool changed_ = false;
  alignas(dirent64) char listing_[kListingBytes];
};

}  // namespace

LaunchScan ScanWorkspace(const std::string& workspace, const std::vector<std::string>& globs,
                         std::size_t max_entries, std::size_t max_depth, ScanFrom from) {
  LaunchScan out;
  // Taken before the first directory is looked at (policy::SettledBefore).
  const std::int64_t start_s = from.start_s != 0 ? from.start_s : std::time(nullptr);
  // Another workspace's record, or one of other globs, says nothing here.
  const policy::ScanCache* cache = from.cache;
  if (cache != nullptr && (cache->workspace != workspace || cache->globs != globs)) cache = nullptr;
  Fd root(OpenWalkDir(AT_FDCWD, workspace.c_str()));
  // A workspace that is not there yet (a session's, made after load) holds
  // nothing to refuse.
  if (!root && errno == ENOENT) {
    out.changed = false;
    return out;
  }
  if (!root) {
    out.problem = std::string("cannot open the workspace: ") + std::strerror(errno);
    return out;
  }
  Scan scan(workspace, globs, max_entries, max_depth, cache, start_s);
  const bool short_read_ends = ShortReadEndsListing(root.get());
  // Depth 1 is the level of the root's entries (the limit counts levels).
  scan.Share(PendingDir{std::move(root), short_read_ends, 1, ""});
  ScanWalker(scan).Work();
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
  if (out.changed)
    std::sort(out.dirs.begin(), out.dirs.end(),
              [](const policy::CachedDir& a, const policy::CachedDir& b) { return a.rel < b.rel; });
  return out;
}

}  // namespace cordon::supervisor
