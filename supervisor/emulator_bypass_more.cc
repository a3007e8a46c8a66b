// Per-operation bypass of a metadata change and of a link (policy/bypass.h
// decides which refusals may be offered; emulator_bypass.cc has the rest).
//
// A chmod, chown, utimes or xattr call the policy refused on a regular
// single-link file or a directory inside the workspace (by path, or by a
// descriptor: fchmod, fchown, futimens, fsetxattr, fremovexattr, judged at
// the path the descriptor leads to, whose file must be the one held): its arguments are
// read once (AttrArgs) and the preview carries them (the mode; the owner;
// both timestamps, UTIME_NOW and UTIME_OMIT by name; the xattr's name and
// its value's SHA-256), so an answer for one change is no answer for
// another. For an allowed-once the file held is rechecked and changed by
// ChangeAttr, the code an allowed change runs, with those arguments.
//
// A link: a new, free name a rule refuses, for a regular single-link file
// the tool may write. The preview names both; for an allowed-once the
// source's identity and name are rechecked and the inode held is linked
// (through /proc/self/fd, AT_SYMLINK_FOLLOW: the file previewed, whatever
// took its name since). The file then has two names, and like every
// hard-linked file the supervisor refuses writes, deletes and metadata
// changes to either for the rest of the run.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>

#include "policy/bypass.h"
#include "supervisor/attr_apply.h"
#include "supervisor/bypass_reply.h"
#include "supervisor/delete_preview.h"
#include "supervisor/emulator.h"
#include "supervisor/tool_fd.h"

namespace cordon::supervisor {

Reply Emulator::BypassAttr(const Request& req, const Named& path, int kind, policy::RefusedBy by,
                           const std::string& rule, Reply refused,
                           const std::function<bool()>& valid, const struct stat* fd_file) {
  std::optional<BypassEnd> end = BypassEndAt(policy::FileOp::kMetadata, path, by);
  if (!end) return refused;
  Result<AttrArgs> args = ReadAttrArgs(req, valid);
  if (!args) return refused;
  end->facts.attr = args->op;
  end->facts.directory = end->facts.entry == policy::EntryKind::kDirectory;
  if (!policy::BypassEligible(end->facts)) return refused;
  if (SetIdRefused(args.value(), end->facts.directory)) {
    return NotOffered(std::move(refused), "set-id bits");
  }
  std::optional<std::pair<dev_t, ino_t>> fd_id;
  if (fd_file != nullptr) fd_id = std::make_pair(fd_file->st_dev, fd_file->st_ino);
  return Later([this, req, kind, loc = std::move(end->loc), args = std::move(args.value()), rule,
                valid, abs = path.abs, fd_id, no = Hold(std::move(refused))]() -> Reply {
    Reply refused = std::move(*no);
    // Held without following a link: what the approver is shown is what
    // is changed.
    auto held = WriteRoots::OpenBeneath(*loc.root, loc.rel, O_PATH | O_NOFOLLOW, 0);
    if (!held && held.error().err == ENOENT && !fd_id) return Reply::Errno(ENOENT);
    if (!held) return NotOffered(std::move(refused), Describe(held.error()));
    // An fd form: the file at that path must be the one the tool holds.
    struct stat now;
    if (fd_id &&
        (::fstat(held->get(), &now) != 0 || std::make_pair(now.st_dev, now.st_ino) != *fd_id)) {
      return NotOffered(std::move(refused), "the descriptor's file is not the one at its path");
    }
    auto preview =
        MakeBypassPreview(held->get(), loc.rel, AttrBypassOp(args.op), 0, rule, AttrArgsText(args));
    if (!preview) return NotOffered(std::move(refused), Describe(preview.error()));
    if (Status s = gates().AskBypass(req, preview.value(), valid); !s) {
      return Refused(std::move(refused), s.error());
    }
    const std::string what = "change metadata of " + loc.rel;
    struct stat st;
    if (::fstat(held->get(), &st) != 0) return Reply::Errno(errno);
    // No await between this recheck and the change, made on the fd held.
    if (Status s = Recheck(held->get(), -1, nullptr, preview.value()); !s) {
      return Reply::Errno(
          EACCES, what + ": changed after the preview (" + Describe(s.error()) + "): not bypassed");
    }
    // As an allowed change: a recoverable run's journal keeps what it
    // alters first (policy::MetadataKeep).
    BeforeAttr keep;
    const bool keeps = AttrKeep(loc, held->get(), st) == policy::Keep::kAttr;
    if (keeps) keep = [&](const AttrArgs& a) { return KeepAttrs(loc, held->get(), a); };
    Reply done = ChangeAttr(req, kind, held->get(), st, abs, &args, valid, keep);
    if (done.error != 0) return done;
    NoteAttrChanged(loc, args.op, keeps);
    return Bypassed(what + ": " + policy::BypassOperation(preview.value()) + " (" + rule + ")");
  });
}

Emulator::LocatedPair Emulator::BypassLinkPlaces(const Named& from, const Named& to,
                                                 policy::RefusedBy from_by,
                                                 policy::RefusedBy to_by) const {
  std::optional<BypassEnd> a = BypassEndAt(policy::FileOp::kLink, from, from_by);
  std::optional<BypassEnd> b = BypassEndAt(policy::FileOp::kLink, to, to_by);
  if (!a || !b) return std::nullopt;
  if (!policy::BypassLinkEligible({a->facts, b->facts, a->allowed})) return std::nullopt;
  return std::make_pair(std::move(a->loc), std::move(b->loc));
}

Reply Emulator::BypassLink(const Request& req, const Located& from, const Located& to,
                           const std::string& rule, Reply refused,
                           const std::function<bool()>& valid) {
  return Later([this, req, from, to, rule, valid, no = Hold(std::move(refused))]() -> Reply {
    Reply refused = std::move(*no);
    auto pf = WriteRoots::OpenParent(from);
    if (!pf) return NotOffered(std::move(refused), Describe(pf.error()));
    auto pt = WriteRoots::OpenParent(to);
    if (!pt) return NotOffered(std::move(refused), Describe(pt.error()));
    Fd src(::openat(pf->get(), from.name.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK));
    if (!src && errno == ENOENT) return Reply::Errno(ENOENT);
    if (!src) return NotOffered(std::move(refused), "cannot hold the file for a preview");
    struct stat there;
    if (::fstatat(pt->get(), to.name.c_str(), &there, AT_SYMLINK_NOFOLLOW) == 0) {
      return Reply::Errno(EEXIST);
    }
    auto preview = MakeRenamePreview(src.get(), from.rel, -1, to.rel, rule, "link");
    if (!preview) return NotOffered(std::move(refused), Describe(preview.error()));
    if (Status s = gates().AskBypass(req, preview.value(), valid); !s) {
      return Refused(std::move(refused), s.error());
    }
    const std::string what = "link " + from.rel + " -> " + to.rel;
    struct stat st;
    if (::fstat(src.get(), &st) != 0) return Reply::Errno(errno);
    // No await between this recheck and the link. The name must still be
    // free, as the approver was shown (linkat never replaces).
    if (Status s = Recheck(src.get(), pf->get(), from.name.c_str(), preview.value()); !s) {
      return Reply::Errno(
          EACCES, what + ": changed after the preview (" + Describe(s.error()) + "): not bypassed");
    }
    if (::linkat(AT_FDCWD, ProcPath(src.get()).c_str(), pt->get(), to.name.c_str(),
                 AT_SYMLINK_FOLLOW) != 0) {
      const int err = errno;
      return Reply::Errno(err == EEXIST ? EACCES : err,
                          what + ": not bypassed (" + std::strerror(err) + ")");
    }
    NoteCreated(to, st);
    return Bypassed(what + ": " + policy::BypassOperation(preview.value()) + " (" + rule + ")");
  });
}

}  // namespace cordon::supervisor
