#include "supervisor/journal/undo.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <map>

#include "supervisor/journal/attr_state.h"
#include "supervisor/journal/journal.h"
#include "supervisor/write_roots.h"

namespace cordon::supervisor {
namespace {

struct Name {
  Fd parent;
  std::string leaf;
};

Result<Name> Split(int ws, const std::string& rel) {
  const size_t slash = rel.rfind('/');
  auto parent = WriteRoots::OpenBeneath(ws, slash == std::string::npos ? "" : rel.substr(0, slash),
                                        O_PATH | O_DIRECTORY, 0);
  if (!parent) return parent.error();
  return Name{std::move(parent.value()),
              slash == std::string::npos ? rel : rel.substr(slash + 1)};
}

class Undoer {
 public:
  Undoer(int ws, int slots) : ws_(ws), slots_(slots) {}

  void Step(const policy::UndoStep& s) {
    Status r = Do(s);
    if (r) {
      ++out_.done;
      if (s.act == policy::UndoAct::kSetAttr) {
        out_.attrs.push_back(policy::OldAttrText(s.attr) + " of " + s.path);
      }
    } else {
      std::optional<uint64_t> slot;
      if (s.act == policy::UndoAct::kRestore || s.act == policy::UndoAct::kPutCopy) slot = s.slot;
      out_.failed.push_back({s.path, Describe(r.error()), slot});
    }
  }
  UndoOutcome Take() { return std::move(out_); }

 private:
  // The inode now standing for the run's `ino` (a copy put back is another).
  uint64_t Actual(uint64_t ino) const {
    auto it = renamed_.find(ino);
    return it == renamed_.end() ? ino : it->second;
  }
  Status Expect(const Name& n, uint64_t ino, struct stat* st = nullptr) {
    struct stat now;
    if (::fstatat(n.parent.get(), n.leaf.c_str(), &now, AT_SYMLINK_NOFOLLOW) != 0) {
      return Errno("lstat", n.leaf);
    }
    if (now.st_ino != Actual(ino)) return SysError{ESTALE, "changed meanwhile", n.leaf};
    if (st) *st = now;
    return Ok();
  }

  Status Do(const policy::UndoStep& s) {
    auto at = Split(ws_, s.path);
    if (!at) return at.error();
    const std::string slot = std::to_string(s.slot);
    switch (s.act) {
      case policy::UndoAct::kRemove: {
        struct stat st;
        if (Status e = Expect(*at, s.ino, &st); !e) return e;
        if (::unlinkat(at->parent.get(), at->leaf.c_str(), S_ISDIR(st.st_mode) ? AT_REMOVEDIR : 0) != 0) {
          return Errno(S_ISDIR(st.st_mode) ? "rmdir" : "unlink", s.path);
        }
        return Ok();
      }
      case policy::UndoAct::kMove: {
        if (Status e = Expect(*at, s.ino); !e) return e;
        auto to = Split(ws_, s.to);
        if (!to) return to.error();
        if (::renameat2(at->parent.get(), at->leaf.c_str(), to->parent.get(), to->leaf.c_str(),
                        RENAME_NOREPLACE) != 0) {
          return Errno("rename back", s.to);
        }
        return Ok();
      }
      case policy::UndoAct::kRestore:
        if (::renameat2(slots_, slot.c_str(), at->parent.get(), at->leaf.c_str(), RENAME_NOREPLACE) != 0) {
          return Errno("restore", s.path);
        }
        return Ok();
      case policy::UndoAct::kPutCopy: {
        if (Status e = Expect(*at, s.ino); !e) return e;
        struct stat copy;
        if (::fstatat(slots_, slot.c_str(), &copy, AT_SYMLINK_NOFOLLOW) != 0) return Errno("lstat", slot);
        if (::renameat(slots_, slot.c_str(), at->parent.get(), at->leaf.c_str()) != 0) {
          return Errno("restore", s.path);
        }
        renamed_[s.ino] = copy.st_ino;
        return Ok();
      }
      case policy::UndoAct::kSwap: {
        if (Status e = Expect(*at, s.other_ino); !e) return e;
        auto to = Split(ws_, s.to);
        if (!to) return to.error();
        if (Status e = Expect(*to, s.ino); !e) return e;
        if (::renameat2(at->parent.get(), at->leaf.c_str(), to->parent.get(), to->leaf.c_str(),
                        RENAME_EXCHANGE) != 0) {
          return Errno("exchange back", s.path);
        }
        return Ok();
      }
      case policy::UndoAct::kSetAttr:
        return SetAttr(*at, s);
    }
    return SysError{EINVAL, "unknown step"};
  }

  // The entry held, no link followed, and only if it is the file the run
  // changed (or the copy put back in its place): the value set on it.
  Status SetAttr(const Name& at, const policy::UndoStep& s) {
    Fd held(::openat(at.parent.get(), at.leaf.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC));
    if (!held) return Errno("open", s.path);
    struct stat st;
    if (::fstat(held.get(), &st) != 0) return Errno("fstat", s.path);
    const bool copy = renamed_.count(s.ino) > 0;
    if (st.st_ino != Actual(s.ino) || (!copy && st.st_dev != s.dev)) {
      return SysError{ESTALE, "another file there now, left as it is", s.path};
    }
    return SetOldAttr(held.get(), s.attr);
  }

  int ws_;
  int slots_;
  std::map<uint64_t, uint64_t> renamed_;
  UndoOutcome out_;
};

}  // namespace

policy::NameStates ObserveNames(int workspace_fd, const std::vector<std::string>& names) {
  policy::NameStates out;
  for (const std::string& name : names) {
    policy::Observed o;
    struct stat st;
    if (auto at = Split(workspace_fd, name);
        at && ::fstatat(at->parent.get(), at->leaf.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) {
      o = {true, st.st_ino, static_cast<uint64_t>(st.st_size),
           static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec,
           KeptTypeOf(st.st_mode)};
    }
    out[name] = o;
  }
  return out;
}

Status CheckSlots(int slots_fd, const policy::UndoPlan& plan) {
  for (const policy::UndoStep& s : plan.steps) {
    if (s.act != policy::UndoAct::kRestore && s.act != policy::UndoAct::kPutCopy) continue;
    struct stat st;
    if (::fstatat(slots_fd, std::to_string(s.slot).c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
      return SysError{ENOENT, "journal", "the kept copy of " + s.path + " (slot " +
                                             std::to_string(s.slot) + ") is missing"};
    }
  }
  return Ok();
}

UndoOutcome ApplyUndo(int workspace_fd, int slots_fd, const policy::UndoPlan& plan) {
  Undoer u(workspace_fd, slots_fd);
  for (const policy::UndoStep& s : plan.steps) u.Step(s);
  return u.Take();
}

}  // namespace cordon::supervisor
