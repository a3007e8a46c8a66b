#include "supervisor/walk/glob_scan.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>

#include <algorithm>
#include <set>
#include <utility>
#include <cstring>
#include <string_view>

#include "base/fd.h"
#include "policy/deny_glob.h"
#include "supervisor/walk/dir_listing.h"

namespace cordon::supervisor {
namespace {

// One walk, depth first, each directory opened beneath its parent's fd
// without following a link: the path matched is the path the kernel grant
// is built from.
class GlobWalker {
 public:
  GlobWalker(const std::string& workspace, const std::vector<std::string>& globs,
             std::size_t max_entries, std::size_t max_depth)
      : workspace_(workspace), globs_(globs), max_entries_(max_entries), max_depth_(max_depth) {}

  GlobScan Run() {
    Fd root(::open(workspace_.c_str(), kWalkDirFlags));
    if (!root) {
      Problem(std::string("cannot open the workspace: ") + std::strerror(errno));
    } else {
      const bool short_read_ends = ShortReadEndsListing(root.get());
      Walk(root.get(), short_read_ends, "", 1);
      // A match with more than one name is read by its other names too:
      // a second pass finds them (only then, as it stats every file).
      if (!linked_.empty() && !Stopped()) {
        link_pass_ = true;
        entries_ = 0;
        Fd again(::open(workspace_.c_str(), kWalkDirFlags));
        if (again) Walk(again.get(), short_read_ends, "", 1);
      }
    }
    std::sort(scan_.matches.begin(), scan_.matches.end());
    scan_.matches.erase(std::unique(scan_.matches.begin(), scan_.matches.end()),
                        scan_.matches.end());
    return std::move(scan_);
  }

 private:
  void Problem(std::string why) {
    if (scan_.problem.empty()) scan_.problem = std::move(why);
  }
  bool Stopped() const { return !scan_.problem.empty(); }

  // A regular match with other names: its inode, for the second pass.
  void NoteLinks(int dir_fd, const char* name) {
    struct stat st;
    if (::fstatat(dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) &&
        st.st_nlink > 1) {
      linked_.insert({st.st_dev, st.st_ino});
    }
  }
  bool IsLinkedMatch(int dir_fd, const char* name) const {
    struct stat st;
    return ::fstatat(dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) &&
           st.st_nlink > 1 && linked_.count({st.st_dev, st.st_ino}) > 0;
  }

  void DenyLinkTarget(const std::string& path) {
    char buf[PATH_MAX];
    if (::realpath(path.c_str(), buf) == nullptr || path == buf) return;
    std::string_view target = buf;
    if (target.size() > workspace_.size() && target.starts_with(workspace_) &&
        target[workspace_.size()] == '/') {
      scan_.matches.emplace_back(target);
    }
  }

  // `rel` is the directory's workspace-relative path ("" for the root),
  // `depth` the level of its entries.
  void Walk(int fd, bool short_read_ends, const std::string& rel, std::size_t depth) {
    std::vector<std::string> subdirs;
    int err = ListDirectory(fd, short_read_ends, listing_, sizeof listing_, [&](const dirent64& e) {
      if (++entries_ > max_entries_) {
        Problem("the workspace has more than " + std::to_string(max_entries_) +
                " entries (limits.scanEntries)");
        return false;
      }
      std::string child = rel.empty() ? std::string(e.d_name) : rel + "/" + e.d_name;
      const bool match = policy::MatchesDenyGlob(globs_, child);
      if (e.d_type == DT_REG || e.d_type == DT_UNKNOWN) {
        if (match && !link_pass_) NoteLinks(fd, e.d_name);
        if (!match && link_pass_ && IsLinkedMatch(fd, e.d_name)) {
          scan_.matches.push_back(workspace_ + "/" + child);
        }
      }
      if (match && link_pass_) return true;
      if (match) {
        scan_.matches.push_back(workspace_ + "/" + child);
        // A link is read through to what it names, which the kernel grants
        // by that name: a target in the workspace is denied with it.
        if (e.d_type == DT_LNK || e.d_type == DT_UNKNOWN) DenyLinkTarget(scan_.matches.back());
        return true;  // denied whole: nothing beneath needs looking at
      }
      bool is_dir = e.d_type == DT_DIR;
      if (e.d_type == DT_UNKNOWN) {
        struct stat st;
        is_dir = ::fstatat(fd, e.d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode);
      }
      if (!is_dir) return true;
      if (depth + 1 > max_depth_) {
        Problem("the workspace is deeper than " + std::to_string(max_depth_) +
                " levels at '" + child + "' (limits.treeDepth)");
        return false;
      }
      subdirs.push_back(std::move(child));
      return true;
    });
    if (err != 0) Problem("cannot list '" + (rel.empty() ? "." : rel) + "': " + std::strerror(err));
    for (const std::string& child : subdirs) {
      if (Stopped()) return;
      const char* name = child.c_str() + (rel.empty() ? 0 : rel.size() + 1);
      Subdir sub = OpenSubdir(fd, name, short_read_ends);
      if (!sub.fd) {
        if (sub.err == ENOENT) continue;  // gone since it was listed: nothing to deny
        Problem("cannot open '" + child + "': " + std::strerror(sub.err));
        return;
      }
      Walk(sub.fd.get(), sub.short_read_ends, child, depth + 1);
    }
  }

  const std::string& workspace_;
  const std::vector<std::string>& globs_;
  const std::size_t max_entries_, max_depth_;
  std::size_t entries_ = 0;
  bool link_pass_ = false;
  std::set<std::pair<dev_t, ino_t>> linked_;  // regular matches with nlink > 1
  GlobScan scan_;
  alignas(dirent64) char listing_[kListingBytes];
};

}  // namespace

GlobScan FindDenyGlobMatches(const std::string& workspace, const std::vector<std::string>& globs,
                             std::size_t max_entries, std::size_t max_depth) {
  if (globs.empty()) return {};
  return GlobWalker(workspace, globs, max_entries, max_depth).Run();
}

}  // namespace cordon::supervisor
