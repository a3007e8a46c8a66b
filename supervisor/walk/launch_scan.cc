#include "supervisor/walk/launch_scan.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstring>
#include <ctime>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "base/fd.h"
#include "policy/deny_glob.h"
#include "supervisor/walk/dir_listing.h"

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

constexpr std::uint32_t kNone = UINT32_MAX;

// One scan, depth first on one walker: the launch's scan is a stat a
// directory, and a second thread on two cores cost more CPU than it saved
// (both walkers meet on the same dentries), and on a busy machine (a CI
// runner, a build beside) the launch waited for it to be scheduled: 27-34
// ms a launch on the kit tree, 5.7-6.7 ms with one (bench/floor_launcher,
// load 3). Each directory is opened beneath its parent's fd without
// following a link: the path listed is the path the kernel grant is built
// from. As it walks it writes the record the next scan starts from
// (`next_`, in the order walked: preorder).
class Scan {
 public:
  Scan(const std::string& workspace, const std::vector<std::string>& globs, std::size_t max_entries,
       std::size_t max_depth, const policy::ScanCache* cache, std::int64_t start_s)
      : workspace_(workspace),
        globs_(globs),
        max_entries_(max_entries),
        max_depth_(max_depth),
        start_s_(start_s),
        cache_(cache) {
    if (cache != nullptr) next_.dirs.reserve(cache->dirs.size());
  }
  Scan(const Scan&) = delete;
  Scan& operator=(const Scan&) = delete;

  // Depth 1 is the level of the root's entries (the limit counts levels).
  void Root(int fd, bool short_read_ends, const struct stat& st) {
    Walk(fd, short_read_ends, st, "", 1, cache_ != nullptr ? 0 : kNone, 0, "");
  }

  void Problem(std::string why) {
    if (out_.problem.empty()) out_.problem = std::move(why);
  }

  LaunchScan Finish() {
    out_.changed = changed_ || cache_ == nullptr || cache_->dirs.size() != next_.dirs.size();
    out_.dirs_listed = listed_;
    out_.dirs_reused = reused_;
    if (out_.changed) {
      next_.workspace = workspace_;
      next_.globs = globs_;
      out_.next = std::move(next_);
    }
    return std::move(out_);
  }

 private:
  // The first problem ends the scan: what lies past it is not known.
  bool stopped() const { return !out_.problem.empty(); }

  std::string Abs(const std::string& rel) const { return workspace_ + "/" + rel; }
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
  // `name` with its NUL, for the *at calls; false when it cannot be a name.
  static bool CName(std::string_view name, char (&buf)[NAME_MAX + 1]) {
    if (name.size() > NAME_MAX) return false;
    std::memcpy(buf, name.data(), name.size());
    buf[name.size()] = '\0';
    return true;
  }

  bool CountEntries(std::size_t n) {
    entries_ += n;
    if (entries_ <= max_entries_) return true;
    Problem("the workspace has more than " + std::to_string(max_entries_) +
            " entries; raise limits.scanEntries in the policy or narrow the workspace");
    return false;
  }
  void DeeperThanBound(const std::string& rel) {
    Problem("the workspace is deeper than " + std::to_string(max_depth_) + " levels in '" + rel +
            "'; raise limits.treeDepth in the policy");
  }

  // The next cache's record of a directory (its flags and matches follow,
  // before any subdirectory's record): its index.
  std::uint32_t Begin(std::uint32_t parent, std::string_view name, const struct stat& st) {
    CachedDir d;
    d.parent = parent;
    d.name = next_.AddName(name);
    d.flags.off = static_cast<std::uint32_t>(next_.flags.size());
    d.matches.off = static_cast<std::uint32_t>(next_.matches.size());
    d.dev = st.st_dev;
    d.ino = st.st_ino;
    d.times = TimesOf(st);
    next_.dirs.push_back(d);
    return static_cast<std::uint32_t>(next_.dirs.size() - 1);
  }
  // Its subtree ends here. One changed in the second before the scan may
  // change again unseen (policy::SettledBefore): it is listed next time.
  void End(std::uint32_t me) {
    CachedDir& d = next_.dirs[me];
    d.end = static_cast<std::uint32_t>(next_.dirs.size());
    d.unsettled = policy::SettledBefore(d.times, start_s_) ? 0 : 1;
  }

  void DenyLinkTarget(const std::string& path) {
    char buf[PATH_MAX];
    if (::realpath(path.c_str(), buf) == nullptr || path == buf) return;
    std::string_view target = buf;
    if (target.size() > workspace_.size() && target.starts_with(workspace_) &&
        target[workspace_.size()] == '/') {
      out_.matches.emplace_back(target);
    }
  }

  void AddMatch(std::uint32_t me, const std::string& child, std::string_view name, bool link) {
    out_.matches.push_back(Abs(child));
    next_.matches.push_back({next_.AddName(name), link ? 1u : 0u});
    ++next_.dirs[me].matches.len;
    // A link is read through to what it names, which the kernel grants
    // by that name: a target in the workspace is denied with it.
    if (link) DenyLinkTarget(out_.matches.back());
  }

  // Lists the entry (and flags it in record `me`) when `st` is a special
  // file or a regular file with more than one name.
  void Flag(std::uint32_t me, const std::string& child, std::string_view name,
            const struct stat& st) {
    ScannedKind kind;
    const unsigned char type = TypeOf(st.st_mode);
    if (type == DT_REG && st.st_nlink > 1) {
      kind = ScannedKind::kLinkedFile;
    } else if (!Special(type, &kind)) {
      return;
    }
    out_.entries.push_back({Abs(child), kind, st.st_dev, st.st_ino, st.st_nlink});
    next_.flags.push_back(
        {next_.AddName(name), static_cast<std::uint32_t>(kind), 0, st.st_ino, st.st_nlink});
    ++next_.dirs[me].flags.len;
  }

  // Flags the listed entry when it is a special file or a regular file
  // with more than one name; returns its type (a stat only for regular
  // files and entries the listing does not type), DT_UNKNOWN when gone.
  unsigned char Classify(int fd, std::uint32_t me, const dirent64& e, const std::string& child) {
    if (e.d_type != DT_REG && e.d_type != DT_UNKNOWN && e.d_type != DT_CHR && e.d_type != DT_BLK &&
        e.d_type != DT_FIFO && e.d_type != DT_SOCK) {
      return e.d_type;
    }
    struct stat st;
    if (::fstatat(fd, e.d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
      // Gone since it was listed: nothing to refuse. Anything else: not known.
      if (errno != ENOENT) Problem("cannot stat '" + child + "': " + std::strerror(errno));
      return DT_UNKNOWN;
    }
    Flag(me, child, e.d_name, st);
    return TypeOf(st.st_mode);
  }

  // The directory open at `fd` (stat'ed as `st`), `rel` below the
  // workspace ("" for the root), `name` in record `parent` of the next
  // cache; `old` is the cache's record of it, or kNone. `depth` is the
  // level of its entries.
  void Walk(int fd, bool short_read_ends, const struct stat& st, const std::string& rel,
            std::size_t depth, std::uint32_t old, std::uint32_t parent, std::string_view name) {
    const std::uint32_t me = Begin(parent, name, st);
    const CachedDir* o = old == kNone ? nullptr : &cache_->dirs[old];
    const bool reused = o != nullptr && o->unsettled == 0 && o->dev == st.st_dev &&
                        o->ino == st.st_ino && o->times == TimesOf(st) &&
                        Reuse(fd, *o, me, rel, depth);
    std::vector<std::string> subdirs;  // listed: the names of its subdirectories
    if (!reused && !List(fd, short_read_ends, me, rel, depth, subdirs)) return;
    std::string child;  // one buffer for the loop (no allocation a subdirectory)
    if (reused) {
      // Its subdirectories are the records of its subtree, by index.
      for (std::uint32_t j = old + 1; j < o->end && !stopped(); j = cache_->dirs[j].end) {
        const std::string_view sub = cache_->Name(cache_->dirs[j].name);
        SetChild(child, rel, sub);
        Enter(fd, short_read_ends, sub, child, depth + 1, j, me);
      }
    } else {
      // Listed: its subdirectories' records in the cache, by name.
      std::unordered_map<std::string_view, std::uint32_t> known;
      for (std::uint32_t j = o != nullptr ? old + 1 : 0; o != nullptr && j < o->end;
           j = cache_->dirs[j].end) {
        known.emplace(cache_->Name(cache_->dirs[j].name), j);
      }
      for (const std::string& sub : subdirs) {
        if (stopped()) break;
        const auto it = known.find(sub);
        SetChild(child, rel, sub);
        Enter(fd, short_read_ends, sub, child, depth + 1, it == known.end() ? kNone : it->second,
              me);
      }
    }
    End(me);
  }

  // The subdirectory `name` of the directory open at `parent_fd` (record
  // `parent`); `old` as for Walk. A leaf the cache holds unchanged with
  // nothing flagged is taken from the cache on a stat through its parent,
  // not opened: most directories of a package tree are such leaves.
  void Enter(int parent_fd, bool parent_short_read_ends, std::string_view name,
             const std::string& rel, std::size_t depth, std::uint32_t old, std::uint32_t parent) {
    char cname[NAME_MAX + 1];
    if (!CName(name, cname)) {
      Problem("cannot open '" + rel + "': " + std::strerror(ENAMETOOLONG));
      return;
    }
    const CachedDir* o = old == kNone ? nullptr : &cache_->dirs[old];
    struct stat st;
    if (o != nullptr && o->end == old + 1 && o->flags.len == 0 && o->unsettled == 0 &&
        ::fstatat(parent_fd, cname, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode) &&
        st.st_dev == o->dev && st.st_ino == o->ino && TimesOf(st) == o->times) {
      ReuseLeaf(*o, rel, name, depth, parent, st);
      return;
    }
    Subdir sub = OpenSubdir(parent_fd, cname, parent_short_read_ends);
    if (!sub.fd) {
      if (sub.err != ENOENT) {  // gone since it was listed: nothing to deny
        Problem("cannot open '" + rel + "': " + std::strerror(sub.err));
      }
      return;
    }
    if (::fstat(sub.fd.get(), &st) != 0) {
      Problem("cannot stat '" + rel + "': " + std::strerror(errno));
      return;
    }
    Walk(sub.fd.get(), sub.short_read_ends, st, rel, depth, old, parent, name);
  }

  void ReuseLeaf(const CachedDir& o, const std::string& rel, std::string_view name,
                 std::size_t depth, std::uint32_t parent, const struct stat& st) {
    ++reused_;
    if (!CountEntries(o.entries)) return;
    if (depth > max_depth_ && o.entries > 0) {
      DeeperThanBound(rel);
      return;
    }
    const std::uint32_t me = Begin(parent, name, st);
    next_.dirs[me].entries = o.entries;
    for (std::uint32_t k = o.matches.off; k < o.matches.off + o.matches.len; ++k) {
      const CachedMatch& m = cache_->matches[k];
      const std::string_view match = cache_->Name(m.name);
      AddMatch(me, Child(rel, match), match, m.link == 1);
    }
    End(me);
  }

  // Lists the directory into record `me`; false when the scan stops.
  bool List(int fd, bool short_read_ends, std::uint32_t me, const std::string& rel,
            std::size_t depth, std::vector<std::string>& subdirs) {
    ++listed_;
    changed_ = true;
    std::uint64_t entries = 0;
    int err = ListDirectory(fd, short_read_ends, listing_, sizeof listing_, [&](const dirent64& e) {
      if (stopped() || !CountEntries(1)) return false;
      ++entries;
      std::string child = Child(rel, e.d_name);
      // An entry past the bound, not a directory at it: an empty directory
      // at the last level is whole (as the tree check counts).
      if (depth > max_depth_) {
        Problem("the workspace is deeper than " + std::to_string(max_depth_) + " levels at '" +
                child + "'; raise limits.treeDepth in the policy");
        return false;
      }
      const unsigned char type = Classify(fd, me, e, child);
      if (!globs_.empty() && policy::MatchesDenyGlob(globs_, child)) {
        // Denied whole: nothing beneath needs looking at. A flagged match
        // stays flagged: its other names go with it.
        AddMatch(me, child, e.d_name, type == DT_LNK);
        return true;
      }
      if (type == DT_DIR) subdirs.emplace_back(e.d_name);
      return true;
    });
    next_.dirs[me].entries = entries;
    if (err != 0) Problem("cannot list '" + (rel.empty() ? "." : rel) + "': " + std::strerror(err));
    return !stopped();
  }

  // Takes the unchanged directory from the cache into record `me`: its
  // entries counted, its flagged entries stat'ed again, its matches as they
  // were. False (nothing taken) when a flagged name no longer names the
  // inode recorded, or no longer a flaggable one: then it is listed.
  bool Reuse(int fd, const CachedDir& o, std::uint32_t me, const std::string& rel,
             std::size_t depth) {
    std::vector<struct stat> now(o.flags.len);
    for (std::uint32_t k = 0; k < o.flags.len; ++k) {
      const CachedFlag& f = cache_->flags[o.flags.off + k];
      char cname[NAME_MAX + 1];
      if (!CName(cache_->Name(f.name), cname) ||
          ::fstatat(fd, cname, &now[k], AT_SYMLINK_NOFOLLOW) != 0 || now[k].st_ino != f.ino ||
          S_ISDIR(now[k].st_mode) || S_ISLNK(now[k].st_mode)) {
        return false;
      }
    }
    ++reused_;
    if (!CountEntries(o.entries)) return true;
    next_.dirs[me].entries = o.entries;
    if (depth > max_depth_ && o.entries > 0) {
      DeeperThanBound(rel);
      return true;
    }
    for (std::uint32_t k = 0; k < o.flags.len; ++k) {
      const std::string_view name = cache_->Name(cache_->flags[o.flags.off + k].name);
      Flag(me, Child(rel, name), name, now[k]);
    }
    // A link count that moved, or a file no longer flaggable, is a change.
    if (!SameFlags(o, next_.dirs[me])) changed_ = true;
    for (std::uint32_t k = o.matches.off; k < o.matches.off + o.matches.len; ++k) {
      const CachedMatch& m = cache_->matches[k];
      const std::string_view match = cache_->Name(m.name);
      AddMatch(me, Child(rel, match), match, m.link == 1);
    }
    return true;
  }

  bool SameFlags(const CachedDir& o, const CachedDir& d) const {
    if (o.flags.len != d.flags.len) return false;
    for (std::uint32_t k = 0; k < o.flags.len; ++k) {
      const CachedFlag& a = cache_->flags[o.flags.off + k];
      const CachedFlag& b = next_.flags[d.flags.off + k];
      if (a.kind != b.kind || a.ino != b.ino || a.nlink != b.nlink ||
          cache_->Name(a.name) != next_.Name(b.name)) {
        return false;
      }
    }
    return true;
  }

  const std::string& workspace_;
  const std::vector<std::string>& globs_;
  const std::size_t max_entries_, max_depth_;
  const std::int64_t start_s_;
  const policy::ScanCache* cache_;
  policy::ScanCache next_;
  LaunchScan out_;
  std::size_t entries_ = 0, listed_ = 0, reused_ = 0;
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
  struct stat st;
  if (::fstat(root.get(), &st) != 0) {
    scan.Problem(std::string("cannot stat '.': ") + std::strerror(errno));
  } else {
    scan.Root(root.get(), ShortReadEndsListing(root.get()), st);
  }
  out = scan.Finish();
  // A match with more than one name is read by its other names too.
  for (std::string& other : policy::OtherNamesOfMatches(out.matches, out.entries)) {
    out.matches.push_back(std::move(other));
  }
  std::sort(out.matches.begin(), out.matches.end());
  out.matches.erase(std::unique(out.matches.begin(), out.matches.end()), out.matches.end());
  // In the order of the path, for explain.
  std::sort(out.entries.begin(), out.entries.end(),
            [](const ScannedEntry& a, const ScannedEntry& b) { return a.path < b.path; });
  return out;
}

}  // namespace cordon::supervisor
