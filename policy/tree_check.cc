#include "policy/tree_check.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <string_view>

#include "policy/fd.h"

namespace cordon::policy {
namespace {

constexpr int kDirFlags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;

std::string Join(const std::string& dir, std::string_view name) {
  if (dir.empty() || dir == ".") return std::string(name);
  std::string out = dir;
  out += '/';
  out += name;
  return out;
}

class Walker {
 public:
  explicit Walker(const TreeLimits& limits) : limits_(limits) {}

  // Checks one root; false once the tree is refused (verdict filled in).
  bool Root(int base_fd, const std::string& root) {
    Fd cur(::fcntl(base_fd, F_DUPFD_CLOEXEC, 0));
    if (!cur) return Refuse(root, std::string("cannot open: ") + std::strerror(errno));
    std::string rel;
    std::string_view rest = root;
    while (!rest.empty()) {
      std::size_t slash = rest.find('/');
      std::string_view comp = rest.substr(0, slash);
      rest = slash == std::string_view::npos ? std::string_view{} : rest.substr(slash + 1);
      if (comp.empty() || comp == ".") continue;
      if (comp == "..") return Refuse(root, "a '..' segment is not allowed");
      rel = Join(rel, comp);
      struct stat st;
      std::string name(comp);
      if (::fstatat(cur.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
        return Refuse(rel, std::string("cannot stat: ") + std::strerror(errno));
      }
      if (!rest.empty() || S_ISDIR(st.st_mode)) {
        if (!S_ISDIR(st.st_mode)) return Kind(rel, st);
        Fd next(::openat(cur.get(), name.c_str(), kDirFlags));
        if (!next) return Refuse(rel, std::string("cannot open: ") + std::strerror(errno));
        if (!SameInode(next.get(), st)) return Refuse(rel, "changed while it was checked");
        cur = std::move(next);
      } else {
        // The root is a single file: it counts as one entry.
        return Entry(rel, st, 0);
      }
    }
    return Dir(std::move(cur), rel.empty() ? "." : rel, 0);
  }

  TreeVerdict Take() && { return std::move(v_); }

 private:
  bool Refuse(const std::string& path, const std::string& why) {
    v_.ok = false;
    v_.path = path;
    v_.reason = "tree check refused the search at '" + path + "': " + why;
    return false;
  }

  static bool SameInode(int fd, const struct stat& want) {
    struct stat got;
    return ::fstat(fd, &got) == 0 && got.st_dev == want.st_dev && got.st_ino == want.st_ino;
  }

  // Refuses anything but a directory or a single-link regular file.
  bool Kind(const std::string& rel, const struct stat& st) {
    if (S_ISLNK(st.st_mode)) return Refuse(rel, "symbolic links are not searched");
    if (S_ISREG(st.st_mode)) {
      if (st.st_nlink > 1) {
        return Refuse(rel, "hard-linked file (" + std::to_string(st.st_nlink) + " links)");
      }
      return true;
    }
    if (S_ISDIR(st.st_mode)) return true;
    const char* what = S_ISFIFO(st.st_mode)                          ? "a fifo"
                       : S_ISSOCK(st.st_mode)                        ? "a socket"
                       : (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)) ? "a device"
                                                                     : "a special file";
    return Refuse(rel, std::string(what) + " is not searched");
  }

  // Counts one entry at `depth` and applies the limits.
  bool Entry(const std::string& rel, const struct stat& st, std::size_t depth) {
    if (++v_.entries > limits_.max_entries) {
      return Refuse(rel, "more than " + std::to_string(limits_.max_entries) +
                             " entries (limit max_tree_entries); the whole tree is refused");
    }
    if (depth > limits_.max_depth) {
      return Refuse(rel, "deeper than " + std::to_string(limits_.max_depth) +
                             " levels (limit max_tree_depth); the whole tree is refused");
    }
    return Kind(rel, st);
  }

  bool Dir(Fd dir_fd, const std::string& rel, std::size_t depth) {
    std::unique_ptr<DIR, int (*)(DIR*)> d(::fdopendir(dir_fd.get()), ::closedir);
    if (!d) return Refuse(rel, std::string("cannot list: ") + std::strerror(errno));
    dir_fd.release();  // owned by the DIR now
    int fd = ::dirfd(d.get());
    for (;;) {
      errno = 0;
      dirent* e = ::readdir(d.get());
      if (e == nullptr) {
        if (errno != 0) return Refuse(rel, std::string("cannot list: ") + std::strerror(errno));
        return true;
      }
      std::string_view name = e->d_name;
      if (name == "." || name == "..") continue;
      std::string child = Join(rel, name);
      struct stat st;
      if (::fstatat(fd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
        return Refuse(child, std::string("cannot stat: ") + std::strerror(errno));
      }
      if (!Entry(child, st, depth + 1)) return false;
      if (!S_ISDIR(st.st_mode)) continue;
      Fd sub(::openat(fd, e->d_name, kDirFlags));
      if (!sub) return Refuse(child, std::string("cannot open: ") + std::strerror(errno));
      if (!SameInode(sub.get(), st)) return Refuse(child, "changed while it was checked");
      if (!Dir(std::move(sub), child, depth + 1)) return false;
    }
  }

  const TreeLimits& limits_;
  TreeVerdict v_;
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
