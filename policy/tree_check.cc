#include "policy/tree_check.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <string_view>
#include <vector>

#include "policy/dir_listing.h"
#include "policy/fd.h"

namespace cordon::policy {
namespace {

constexpr int kDirFlags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;

// One getdents64(2) buffer; records are 8-byte aligned in it.
constexpr std::size_t kListBytes = 32 * 1024;

const char* SpecialKind(mode_t mode) {
  return S_ISFIFO(mode)                       ? "a fifo"
         : S_ISSOCK(mode)                     ? "a socket"
         : (S_ISCHR(mode) || S_ISBLK(mode))   ? "a device"
                                              : "a special file";
}

// The walk lists each directory with getdents64 on its fd and trusts the
// entry type the filesystem reports: a directory is opened (O_NOFOLLOW |
// O_DIRECTORY, so whatever it has become since cannot be a link) and walked
// by that fd; a link or special file is refused without a stat. Regular
// files and DT_UNKNOWN (filesystems that do not report types) get an
// fstatat: the link count is only known from it. One path buffer and one
// listing buffer per level serve the whole walk.
class Walker {
 public:
  explicit Walker(const TreeLimits& limits) : limits_(limits) {}

  // Checks one root; false once the tree is refused (verdict filled in).
  bool Root(int base_fd, const std::string& root) {
    Fd cur(::fcntl(base_fd, F_DUPFD_CLOEXEC, 0));
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
      Fd next(::openat(cur.get(), name.c_str(), kDirFlags));
      if (!next) return Refuse(path_, std::string("cannot open: ") + std::strerror(errno));
      if (!SameInode(next.get(), st)) return Refuse(path_, "changed while it was checked");
      cur = std::move(next);
    }
    return Dir(cur.get(), ShortReadEndsListing(cur.get()), 0);
  }

  TreeVerdict Take() && { return std::move(v_); }

 private:
  bool Refuse(const std::string& path, const std::string& why) {
    v_.ok = false;
    v_.path = path.empty() ? "." : path;
    v_.reason = "tree check refused the search at '" + v_.path + "': " + why;
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

  // Counts the entry at path_ (at `depth`) and applies the limits.
  bool Entry(std::size_t depth) {
    if (++v_.entries > limits_.max_entries) {
      return Refuse("more than " + std::to_string(limits_.max_entries) +
                    " entries (limit max_tree_entries); the whole tree is refused");
    }
    if (depth > limits_.max_depth) {
      return Refuse("deeper than " + std::to_string(limits_.max_depth) +
                    " levels (limit max_tree_depth); the whole tree is refused");
    }
    return true;
  }

  // The entries of the directory open at `fd` (path_ names it), at depth+1.
  bool Dir(int fd, bool short_read_ends, std::size_t depth) {
    if (bufs_.size() <= depth) bufs_.resize(depth + 1);
    if (!bufs_[depth]) bufs_[depth] = std::make_unique<char[]>(kListBytes);
    bool ok = true;
    int err = ListDirectory(fd, short_read_ends, bufs_[depth].get(), kListBytes,
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

  bool Descend(int dir_fd, bool short_read_ends, const char* name, std::size_t depth) {
    Subdir sub = OpenSubdir(dir_fd, name, short_read_ends);
    if (!sub.fd) {
      // ELOOP/ENOTDIR: listed as a directory, no longer one.
      if (sub.err == ELOOP || sub.err == ENOTDIR) return Refuse("changed while it was checked");
      return Refuse(std::string("cannot open: ") + std::strerror(sub.err));
    }
    return Dir(sub.fd.get(), sub.short_read_ends, depth);
  }

  const TreeLimits& limits_;
  TreeVerdict v_;
  std::string path_;  // the entry being checked, relative to the base
  std::vector<std::unique_ptr<char[]>> bufs_;  // getdents64 buffer per depth
};

}  // namespace

TreeVerdict CheckTrees(int base_fd, const std::vector<std::string>& roots,
                       const TreeLimits& limits) {
  Walker w(limits);
  for (const std::string& r : roots) {
    if (!r.empty() && r[0] == '/') {
      TreeVerdict v;
      v.path = r;
      v.reason = "tree check refused '" + r + "': roots are relative to the workspace";
      return v;
    }
    if (!w.Root(base_fd, r)) return std::move(w).Take();
  }
  TreeVerdict v = std::move(w).Take();
  v.ok = true;
  return v;
}

}  // namespace cordon::policy
