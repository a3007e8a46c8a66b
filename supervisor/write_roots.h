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
#include "policy/policy.h"

namespace cordon::supervisor {

struct WriteRoot {
  std::string path;  // absolute, realpath: the directory held
  Fd fd;             // O_PATH | O_DIRECTORY
  bool workspace = false;
  // A directory the host shares (/dev/shm): the tool may make files at its
  // top level and use, rename and remove those it made, nothing else there.
  bool own_entries_only = false;
  // A grant of one file (--rw FILE): `path` is its directory and this its
  // name. The file may be opened for writing and its metadata changed;
  // nothing may be created, removed, renamed or linked beside it, nor the
  // file itself, as Landlock's rights on a file alone allow.
  std::string only_entry;
  // The file grants are replaceable (PathRule::replaceable): every such
  // grant of one directory shares this root, and their names may be made,
  // removed and renamed onto each other (a regular file only: Decide).
  bool entries_may_change = false;
  // Held for a disposable rule (the private cache): its entries are all the
  // tool's own (policy::PlaceFacts::disposable).
  bool disposable = false;
};

// Where an absolute path lands: a root and the path relative to it ("" for
// the root itself), split into parent and final name.
struct Located {
  const WriteRoot* root = nullptr;
  std::string rel;
  std::string parent_rel;  // "." when the parent is the root
  std::string name;        // empty when rel is empty
};

// What a call would change at a path: a file's content or metadata, or the
// directory entry itself (create, remove, rename, link, bind).
enum class Change { kContent, kEntry };

class WriteRoots {
 public:
  // `rules`: the policy's effective rules. The path is decided by the one
  // rule lookup (policy::CoveringRule): it must be covered by a rule that
  // grants (read-write; with `reads`, any rule but a denial). Each granting
  // rule on a directory is held open as a root; one on a regular file is
  // held as its directory, limited to that entry (WriteRoot::only_entry).
  // The rules that do not grant and lie beneath a root are pinned: their
  // inodes and their ancestors' up to the root, so renaming a parent cannot
  // move them out of the way. `shared`: directories opened as
  // own_entries_only roots, granted read-write.
  static Result<WriteRoots> Open(std::vector<policy::PathRule> rules,
                                 const std::string& workspace,
                                 const std::vector<std::string>& shared = {}, bool reads = false);

  // True for the inode of an excluded path or a directory on the way to one:
  // it may not be renamed, deleted or linked.
  bool IsPinned(dev_t dev, ino_t ino) const;
  // False when nothing is pinned: no inode needs checking.
  bool HasPins() const { return !pinned_.empty(); }

  // Lexical only: refuses a raw ".." segment (EACCES), normalises "." and
  // repeated slashes, and finds the covering rule and its root (EACCES when
  // the rule does not grant, or no rule covers the path; when the path lies
  // below the top level of an own_entries_only root; for a kEntry change
  // of a single-file grant).
  Result<Located> Locate(const std::string& abs_path, Change change = Change::kEntry) const;

  // openat2 beneath the root: ELOOP/EXDEV (a symlink or mount on the way)
  // become EACCES, a policy refusal; other errors are the kernel's own.
  static Result<Fd> OpenBeneath(const WriteRoot& root, const std::string& rel, uint64_t flags,
                                uint64_t mode) {
    return OpenBeneath(root.fd.get(), rel, flags, mode);
  }
  static Result<Fd> OpenBeneath(int root_fd, const std::string& rel, uint64_t flags, uint64_t mode);

  // The parent directory of `loc`, opened beneath its root.
  static Result<Fd> OpenParent(const Located& loc);

  const std::vector<WriteRoot>& roots() const { return roots_; }
  const std::vector<policy::PathRule>& rules() const { return rules_; }

 private:
  bool Grants(policy::Access a) const {
    return a == policy::Access::kReadWrite || (reads_ && a == policy::Access::kReadOnly);
  }

  std::vector<WriteRoot> roots_;
  std::vector<policy::PathRule> rules_;
  std::vector<long> rule_root_;  // rules_[i]'s index in roots_, -1 when it has none
  bool reads_ = false;
  std::set<std::pair<dev_t, ino_t>> pinned_;
};

// "/a/./b//c" -> "/a/b/c" (policy::NormalizePath); false when a raw ".."
// segment is present, or the path is not absolute or too long.
bool NormaliseNoDotDot(const std::string& in, std::string& out);

}  // namespace cordon::supervisor
