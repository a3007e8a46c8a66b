// The directories a tool may change, each held open (O_PATH) for the whole
// run, and race-free resolution beneath them: every path the supervisor acts
// on is opened with openat2 RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
// RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV from one of these fds, so a
// symlink or rename race by the tool can only ever land inside the root.
// Immutable after Open(); safe to use from several threads.
#pragma once

#include <sys/types.h>

#include <set>
#include <string>
#include <utility>
#include <vector>

#include "base/fd.h"
#include "base/result.h"

namespace cordon::supervisor {

struct WriteRoot {
  std::string path;  // absolute, realpath
  Fd fd;             // O_PATH | O_DIRECTORY
  bool workspace = false;
  // A directory the host shares (/dev/shm): the tool may make files at its
  // top level and use, rename and remove those it made, nothing else there.
  bool own_entries_only = false;
};

// Where an absolute path lands: a root and the path relative to it ("" for
// the root itself), split into parent and final name.
struct Located {
  const WriteRoot* root = nullptr;
  std::string rel;
  std::string parent_rel;  // "." when the parent is the root
  std::string name;        // empty when rel is empty
};

class WriteRoots {
 public:
  // `excluded`: paths inside the roots the tool may not change (denied,
  // read-only, protected). Their inodes and their ancestors' up to the root
  // are pinned, so renaming a parent cannot move them out of the way.
  // `shared`: directories opened as own_entries_only roots.
  static Result<WriteRoots> Open(const std::vector<std::string>& paths,
                                 const std::string& workspace,
                                 const std::vector<std::string>& excluded = {},
                                 const std::vector<std::string>& shared = {});

  // True for the inode of an excluded path or a directory on the way to one:
  // it may not be renamed, deleted or linked.
  bool IsPinned(dev_t dev, ino_t ino) const;
  // False when nothing is pinned: no inode needs checking.
  bool HasPins() const { return !pinned_.empty(); }

  // Lexical only: refuses a raw ".." segment (EACCES), normalises "." and
  // repeated slashes, and finds the root (EACCES when none holds it, or
  // when the path lies below the top level of an own_entries_only root).
  Result<Located> Locate(const std::string& abs_path) const;

  // openat2 beneath the root: ELOOP/EXDEV (a symlink or mount on the way)
  // become EACCES, a policy refusal; other errors are the kernel's own.
  static Result<Fd> OpenBeneath(const WriteRoot& root, const std::string& rel, uint64_t flags,
                                uint64_t mode);

  // The parent directory of `loc`, opened beneath its root.
  static Result<Fd> OpenParent(const Located& loc);

  const std::vector<WriteRoot>& roots() const { return roots_; }

 private:
  std::vector<WriteRoot> roots_;
  std::vector<std::string> excluded_;
  std::set<std::pair<dev_t, ino_t>> pinned_;
};

// "/a/./b//c" -> "/a/b/c"; false when a raw ".." segment is present.
bool NormaliseNoDotDot(const std::string& in, std::string& out);

}  // namespace cordon::supervisor
