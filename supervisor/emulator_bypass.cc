// Per-operation bypass (seed 004; policy/bypass.h decides which refusals
// may be offered): a write-open, an unlink, an rmdir, a mkdir or a rename
// (of a file, or of a directory to a free name) the policy refused inside
// the workspace is sent to the approver as "run this one operation outside
// the policy" (metadata and links: emulator_bypass_more.cc), with the preview shape of a sensitive
// delete (the operation, the path, the identity held). Only an allowed-once for that request id and
// preview digest grants (RunGates::AskBypass); the supervisor then rechecks the identity and
// performs exactly that operation beneath the workspace's root (openat2 RESOLVE_BENEATH, no
// symlink, no mount crossed; the fd handed over with ADDFD), as the tool's credentials. The reply
// says `bypassed`, and so does the audit record.
#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>

#include "policy/bypass.h"
#include "supervisor/bypass_reply.h"
#include "supervisor/creation_umask.h"
#include "supervisor/delete_preview.h"
#include "supervisor/emulator.h"

namespace cordon::supervisor {
namespace {

constexpr uint64_t kBareTmpfile = 020000000;
// What of the tool's open flags the approver is shown and approves.
constexpr uint64_t kAskedFlags = O_ACCMODE | O_CREAT | O_EXCL | O_TRUNC | O_APPEND;

}  // namespace

std::optional<Emulator::BypassEnd> Emulator::BypassEndAt(policy::FileOp op, const Named& path,
                                                         policy::RefusedBy by,
                                                         bool directory) const {
  if (!gates().CanAsk(Ask::kBypass) || path.abs.empty()) return std::nullopt;  // nobody to ask
  const WriteRoot* ws = nullptr;
  for (const WriteRoot& r : rules().roots.roots()) {
    if (r.workspace) ws = &r;
  }
  if (ws == nullptr) ws = rules().bypass_workspace.get();  // the read-only profile
  policy::Covered c = policy::CoverPath(rules().roots.rules(), path.abs);
  if (ws == nullptr || c.path.empty()) return std::nullopt;
  BypassEnd end;
  policy::BypassFacts& f = end.facts;
  f.allow_bypass = opts_.allow_bypass;
  f.can_ask = gates().CanAsk(Ask::kBypass);
  f.op = op;
  f.directory = directory;
  f.in_workspace = policy::IsWithin(c.path, ws->path) && c.path != ws->path;
  f.dotdot = policy::HasParentSegment(path.raw);
  f.credential = policy::IsCredentialPath(opts_.credentials, c.path);
  f.refused_by = by == policy::RefusedBy::kOther ? policy::RefusedByRule(c) : by;
  end.allowed = c.err == 0 && by == policy::RefusedBy::kOther;
  if (!f.in_workspace) return end;  // no place to hold: never offered
  Located& loc = end.loc;
  loc.root = ws;
  loc.rel = ws->path == "/" ? c.path.substr(1) : c.path.substr(ws->path.size() + 1);
  const size_t slash = loc.rel.rfind('/');
  loc.parent_rel = slash == std::string::npos ? "." : loc.rel.substr(0, slash);
  loc.name = slash == std::string::npos ? loc.rel : loc.rel.substr(slash + 1);
  // What is there (a metadata change's, a rename's and a link's rule look):
  // lstat beneath the workspace's root, no link followed on the way.
  auto there = WriteRoots::OpenBeneath(*loc.root, loc.rel, O_PATH | O_NOFOLLOW, 0);
  struct stat st;
  if (there && ::fstat(there->get(), &st) == 0) {
    const policy::EntryFacts e = Facts(st, loc);
    f.entry = e.kind;
    f.nlink = e.nlink;
    f.pinned = e.pinned;
    f.holds_rules =
        S_ISDIR(st.st_mode) && (policy::HoldsRuleBeneath(rules().roots.rules(), c.path) ||
                                policy::HoldsRuleBeneath(opts_.credentials, c.path));
  } else if (!there && there.error().err == ENOENT) {
    f.entry = policy::EntryKind::kAbsent;
  }
  return end;
}

std::optional<Located> Emulator::BypassPlace(policy::FileOp op, const Named& path,
                                             policy::RefusedBy by, bool directory) const {
  std::optional<BypassEnd> end = BypassEndAt(op, path, by, directory);
  if (!end || !policy::BypassEligible(end->facts)) return std::nullopt;
  return std::move(end->loc);
}

Emulator::LocatedPair Emulator::BypassRenamePlaces(const Named& from, const Named& to,
                                                   policy::RefusedBy from_by,
                                                   policy::RefusedBy to_by) const {
  std::optional<BypassEnd> a = BypassEndAt(policy::FileOp::kRename, from, from_by);
  std::optional<BypassEnd> b = BypassEndAt(policy::FileOp::kRename, to, to_by);
  if (!a || !b) return std::nullopt;
  a->facts.directory = a->facts.entry == policy::EntryKind::kDirectory;
  b->facts.directory = b->facts.entry == policy::EntryKind::kDirectory;
  policy::RenameEnds ends{a->facts, b->facts, a->allowed, b->allowed};
  if (!policy::BypassRenameEligible(ends)) return std::nullopt;
  return std::make_pair(std::move(a->loc), std::move(b->loc));
}

Reply Emulator::BypassOpen(const Request& req, const Located& loc, uint64_t flags, uint64_t mode,
                           const std::string& rule, Reply refused,
                           const std::function<bool()>& valid) {
  if (flags & (O_PATH | kBareTmpfile)) return NotOffered(std::move(refused), "not a named file");
  return Later([this, req, loc, flags, mode, rule, valid,
                no = Hold(std::move(refused))]() -> Reply {
    Reply refused = std::move(*no);
    // Held without following a link: what the approver is shown is what is
    // opened, or a name with nothing there yet.
    auto held = WriteRoots::OpenBeneath(*loc.root, loc.rel, O_PATH | O_NOFOLLOW, 0);
    if (!held && held.error().err != ENOENT)
      return NotOffered(std::move(refused), Describe(held.error()));
    if (!held && !(flags & O_CREAT)) return Reply::Errno(ENOENT);
    if (held && (flags & O_CREAT) && (flags & O_EXCL)) return Reply::Errno(EEXIST);
    auto preview =
        MakeBypassPreview(held ? held->get() : -1, loc.rel, "open", flags & kAskedFlags, rule);
    if (!preview) return NotOffered(std::move(refused), Describe(preview.error()));
    if (Status s = gates().AskBypass(req, preview.value(), valid); !s) {
      return Refused(std::move(refused), s.error());
    }
    // Exactly the operation approved: the tool's flags, no link followed,
    // beneath the workspace's root. O_NONBLOCK until the identity is known
    // (a FIFO swapped in cannot stall this thread); O_TRUNC once installed.
    const uint64_t base =
        (flags & ~static_cast<uint64_t>(O_TRUNC | O_CREAT | O_EXCL)) | O_NOCTTY | O_NOFOLLOW;
    const std::string what = "open for writing " + loc.rel;
    if (held) {
      auto fd = WriteRoots::OpenBeneath(*loc.root, loc.rel, base | O_NONBLOCK, 0);
      if (!fd) return Reply::Errno(fd.error().err, what + ": bypass allowed, open failed");
      if (Status s = Recheck(fd->get(), -1, nullptr, preview.value()); !s) {
        return Reply::Errno(EACCES, what + ": the file changed after the preview (" +
                                        Describe(s.error()) + "): not bypassed");
      }
      constexpr uint64_t kStatusFlags = O_APPEND | O_DIRECT | O_NOATIME | O_NONBLOCK;
      if (::fcntl(fd->get(), F_SETFL, static_cast<int>(flags & kStatusFlags)) != 0) {
        return Reply::Errno(errno);
      }
      struct stat st;
      if (::fstat(fd->get(), &st) != 0) return Reply::Errno(errno);
      const bool writes = (flags & O_ACCMODE) != O_RDONLY || (flags & O_TRUNC);
      // Written over: a recoverable run's journal keeps a copy first.
      if (writes) {
        if (auto no = KeepForBypass(loc, -1, fd->get(), st, "truncate")) return std::move(*no);
        NoteWritten(loc, st, flags & O_TRUNC);
      }
      Reply r =
          Bypassed(what + ": " + policy::BypassOperation(preview.value()) + " (" + rule + ")");
      r.install = std::move(fd.value());
      r.install_flags = (flags & O_CLOEXEC) ? O_CLOEXEC : 0;
      r.truncate_installed = (flags & O_TRUNC) != 0;
      return r;
    }
    auto umask = umask_.Get(req.tid, valid);
    if (!umask) return Reply::Errno(EACCES, "stale");
    CreationUmask creation(umask.value());
    // O_EXCL: the name must still be free, as the approver was shown.
    auto fd = WriteRoots::OpenBeneath(*loc.root, loc.rel, base | O_CREAT | O_EXCL,
                                      creation.Mode(static_cast<mode_t>(mode)));
    if (!fd) {
      return Reply::Errno(fd.error().err == EEXIST ? EACCES : fd.error().err,
                          what + ": not bypassed (" + Describe(fd.error()) + ")");
    }
    if (!creation.FixMode(fd->get(), static_cast<mode_t>(mode))) return Reply::Errno(errno);
    struct stat st;
    if (::fstat(fd->get(), &st) != 0) return Reply::Errno(errno);
    Born(st);
    NoteCreated(loc, st);
    Reply r = Bypassed(what + ": " + policy::BypassOperation(preview.value()) + " (" + rule + ")");
    r.install = std::move(fd.value());
    r.install_flags = (flags & O_CLOEXEC) ? O_CLOEXEC : 0;
    r.undo = UndoCreate(loc, st);
    return r;
  });
}

Reply Emulator::BypassUnlink(const Request& req, const Located& loc, int flags,
                             const std::string& rule, Reply refused,
                             const std::function<bool()>& valid) {
  return Later([this, req, loc, flags, rule, valid, no = Hold(std::move(refused))]() -> Reply {
    Reply refused = std::move(*no);
    const bool dir = (flags & AT_REMOVEDIR) != 0;
    auto parent = WriteRoots::OpenParent(loc);
    if (!parent) return NotOffered(std::move(refused), Describe(parent.error()));
    // Held for the preview and the recheck, as a sensitive delete's; a
    // directory as one, no link followed.
    Fd fd(::openat(parent->get(), loc.name.c_str(),
                   O_RDONLY | O_NOFOLLOW | O_CLOEXEC | (dir ? O_DIRECTORY : O_NONBLOCK)));
    if (!fd && errno == ENOENT) return Reply::Errno(ENOENT);
    if (!fd) {
      return NotOffered(std::move(refused), dir ? "not a directory the preview can hold"
                                                : "cannot hold the file for a preview");
    }
    // Only an empty directory is offered (rmdir(2) would fail); the refusal
    // stands, and says nothing of what a refused directory holds.
    if (dir && HasEntries(loc)) return NotOffered(std::move(refused), "the directory has entries");
    const char* op = dir ? "rmdir" : "unlink";
    auto preview = MakeBypassPreview(fd.get(), loc.rel, op, 0, rule);
    if (!preview) return NotOffered(std::move(refused), Describe(preview.error()));
    if (Status s = gates().AskBypass(req, preview.value(), valid); !s) {
      return Refused(std::move(refused), s.error());
    }
    const std::string what = (dir ? "remove directory " : "delete ") + loc.rel;
    struct stat st;
    if (::fstat(fd.get(), &st) != 0) return Reply::Errno(errno);
    // No await between this recheck and the unlink. An entry made in a
    // directory since the preview changed its mtime (and rmdir refuses one
    // anyway).
    if (Status s = Recheck(fd.get(), parent->get(), loc.name.c_str(), preview.value()); !s) {
      return Reply::Errno(EACCES, what + (dir ? ": the directory" : ": the file") +
                                      " changed after the preview (" + Describe(s.error()) +
                                      "): not bypassed");
    }
    // A recoverable run's journal takes the user's file instead (moved,
    // so no unlink); anything else goes.
    bool kept = false;
    if (!dir) {
      if (auto no = KeepForBypass(loc, parent->get(), fd.get(), st, "delete", &kept))
        return std::move(*no);
    }
    if (!kept) {
      if (::unlinkat(parent->get(), loc.name.c_str(), dir ? AT_REMOVEDIR : 0) != 0) {
        return Reply::Errno(errno);
      }
      NoteDropped(loc, st);
    }
    Gone(st);
    return Bypassed(what + ": " + op + " (" + rule + ")");
  });
}

Reply Emulator::BypassRename(const Request& req, const Located& from, const Located& to,
                             unsigned flags, const std::string& rule, Reply refused,
                             const std::function<bool()>& valid) {
  return Later([this, req, from, to, flags, rule, valid, no = Hold(std::move(refused))]() -> Reply {
    Reply refused = std::move(*no);
    auto pf = WriteRoots::OpenParent(from);
    if (!pf) return NotOffered(std::move(refused), Describe(pf.error()));
    auto pt = WriteRoots::OpenParent(to);
    if (!pt) return NotOffered(std::move(refused), Describe(pt.error()));
    // Both held for the preview and the recheck, no link followed: the file
    // or directory moved, and the file it replaces (as a delete's).
    constexpr int kHold = O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK;
    Fd src(::openat(pf->get(), from.name.c_str(), kHold));
    if (!src && errno == ENOENT) return Reply::Errno(ENOENT);
    if (!src) return NotOffered(std::move(refused), "cannot hold the file for a preview");
    Fd dst(::openat(pt->get(), to.name.c_str(), kHold));
    if (!dst && errno != ENOENT) {
      return NotOffered(std::move(refused), "cannot hold the file it would replace");
    }
    if (dst && (flags & RENAME_NOREPLACE)) return Reply::Errno(EEXIST);
    // A directory (the one judged, or one swapped in since) moves only to
    // a free name and with no rule beneath it (policy::BypassRenameEligible):
    // the facts looked at again on what is held.
    struct stat held {};
    if (::fstat(src.get(), &held) != 0) return Reply::Errno(errno);
    if (S_ISDIR(held.st_mode)) {
      const std::string abs = (from.root->path == "/" ? "" : from.root->path) + "/" + from.rel;
      if (dst) return NotOffered(std::move(refused), "a directory moves only to a free name");
      if (policy::HoldsRuleBeneath(rules().roots.rules(), abs) ||
          policy::HoldsRuleBeneath(opts_.credentials, abs)) {
        return NotOffered(std::move(refused), "a rule lies beneath the directory");
      }
    }
    auto preview = MakeRenamePreview(src.get(), from.rel, dst ? dst.get() : -1, to.rel, rule);
    if (!preview) return NotOffered(std::move(refused), Describe(preview.error()));
    if (Status s = gates().AskBypass(req, preview.value(), valid); !s) {
      return Refused(std::move(refused), s.error());
    }
    const std::string what = "rename " + from.rel + " -> " + to.rel;
    struct stat st, replaced{};
    if (::fstat(src.get(), &st) != 0 || (dst && ::fstat(dst.get(), &replaced) != 0)) {
      return Reply::Errno(errno);
    }
    // No await between this recheck and the rename. A name that was free
    // must still be: RENAME_NOREPLACE.
    if (Status s = RecheckRename(src.get(), pf->get(), from.name.c_str(), dst ? dst.get() : -1,
                                 pt->get(), to.name.c_str(), preview.value());
        !s) {
      return Reply::Errno(
          EACCES, what + ": changed after the preview (" + Describe(s.error()) + "): not bypassed");
    }
    // The file it replaces: a recoverable run's journal takes it first,
    // then the name is free, as the rename below then insists.
    bool kept = false;
    if (dst) {
      if (auto no = KeepForBypass(to, pt->get(), dst.get(), replaced, "replace", &kept)) {
        return std::move(*no);
      }
    }
    const unsigned performed = flags | (dst && !kept ? 0 : RENAME_NOREPLACE);
    if (::renameat2(pf->get(), from.name.c_str(), pt->get(), to.name.c_str(), performed) != 0) {
      const int err = errno;
      return Reply::Errno(err == EEXIST && !(flags & RENAME_NOREPLACE) ? EACCES : err,
                          what + ": not bypassed (" + std::strerror(err) + ")");
    }
    if (dst) {
      if (!kept) NoteDropped(to, replaced);
      Gone(replaced);
    }
    NoteMoved(from, to, st);
    return Bypassed(what + ": " + policy::BypassOperation(preview.value()) + " (" + rule + ")");
  });
}

Reply Emulator::BypassMkdir(const Request& req, const Located& loc, mode_t mode,
                            const std::string& rule, Reply refused,
                            const std::function<bool()>& valid) {
  return Later([this, req, loc, mode, rule, valid, no = Hold(std::move(refused))]() -> Reply {
    Reply refused = std::move(*no);
    auto parent = WriteRoots::OpenParent(loc);
    if (!parent) return NotOffered(std::move(refused), Describe(parent.error()));
    auto preview = MakeBypassPreview(-1, loc.rel, "mkdir", 0, rule);
    if (!preview) return NotOffered(std::move(refused), Describe(preview.error()));
    if (Status s = gates().AskBypass(req, preview.value(), valid); !s) {
      return Refused(std::move(refused), s.error());
    }
    const std::string what = "make directory " + loc.rel;
    auto umask = umask_.Get(req.tid, valid);
    if (!umask) return Reply::Errno(EACCES, "stale");
    const CreationUmask creation(umask.value());
    // Through the parent held beneath the workspace's root; the name must
    // still be free, as the approver was shown.
    if (::mkdirat(parent->get(), loc.name.c_str(), creation.Mode(mode)) != 0) {
      const int err = errno;
      return Reply::Errno(err == EEXIST ? EACCES : err,
                          what + ": not bypassed (" + std::strerror(err) + ")");
    }
    Fd made(::openat(parent->get(), loc.name.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC));
    if (!made) return Reply::Errno(errno);
    if (!creation.exact() && !creation.FixMode(made.get(), mode)) return Reply::Errno(errno);
    struct stat st;
    if (::fstat(made.get(), &st) != 0) return Reply::Errno(errno);
    Born(st);
    NoteCreated(loc, st);
    if (loc.root->own_entries_only) made_shared_ = true;
    return Bypassed(what + ": mkdir (" + rule + ")");
  });
}

}  // namespace cordon::supervisor
