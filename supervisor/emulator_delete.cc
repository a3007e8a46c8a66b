// unlink(2), unlinkat(2) and rmdir(2): the path resolved once, the place
// and the entry decided by policy::Decide, and the decision performed on
// the parent held beneath its root: unlinkat, the journal's keep
// (sensitive.delete "recoverable"), or, for the user's file under "ask",
// a question to the run's gates on a deferred worker (AskDelete: preview,
// allowed-once, recheck, unlinkat on the held parent).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "policy/refusal_hint.h"
#include "supervisor/caps.h"
#include "supervisor/delete_preview.h"
#include "supervisor/emulator.h"

namespace cordon::supervisor {

Reply Emulator::Unlink(const Request& req, int dirfd, uint64_t path, int flags,
                       const std::function<bool()>& valid) {
  if (flags & ~AT_REMOVEDIR) return Reply::Errno(EINVAL);
  Named named;
  auto p = ResolvePath(req, dirfd, path, false, Change::kEntry, &named);
  if (!valid()) return Reply::Errno(EACCES, "stale");
  if (!p) {
    Reply refused = Reply::NameRefused("delete: ", p.error());
    auto at = named.abs.empty() ? std::nullopt
                                : BypassPlace(policy::FileOp::kDelete, named,
                                              policy::RefusedBy::kOther, flags & AT_REMOVEDIR);
    if (!at) return refused;
    return BypassUnlink(req, *at, flags, p.error().op, std::move(refused), valid);
  }
  const std::string what = "delete " + p->abs;
  policy::FileRequest q;
  q.op = policy::FileOp::kDelete;
  q.want_dir = flags & AT_REMOVEDIR;
  q.place = Place(p->loc);
  const policy::Settings settings = DecideSettings();
  // What the place alone refuses (a root has no parent to look in).
  if (auto d = policy::Decide(q, settings); d.verdict == policy::Verdict::kRefuse) {
    // rmdir of a protected directory: one the tool sees holds entries
    // would not be removed anyway, and ENOTEMPTY is what git's
    // rmdir(".git") expects (git stash), not a refusal worth a line.
    if (d.by == policy::RefusedBy::kProtectedPath && q.want_dir && HoldsWhatToolSees(*p, q)) {
      d = policy::Decide(q, settings);
      if (d.err == ENOTEMPTY) return Reply::Refused(d, what, p->abs);
    }
    Reply refused = Reply::Refused(d, what, p->abs);
    auto at = BypassPlace(policy::FileOp::kDelete, named, d.by, flags & AT_REMOVEDIR);
    if (!at) return refused;
    return BypassUnlink(req, *at, flags, d.rule, std::move(refused), valid);
  }
  auto parent = WriteRoots::OpenParent(p->loc);
  if (!parent) return Reply::Errno(parent.error().err);
  EntryStat entry;
  if (!StatEntry(parent->get(), p->name(), entry)) return Reply::Errno(errno);
  const struct stat& st = entry.st;
  q.entry = Facts(st, p->loc);
  q.entry.born_in_run = BornInRun(entry);
  policy::Decision d = policy::Decide(q, settings);
  if ((d.verdict != policy::Verdict::kAllow || d.keep == policy::Keep::kMove) && q.want_dir &&
      S_ISDIR(st.st_mode)) {
    q.entry.has_entries = HasEntries(p->loc);
    d = policy::Decide(q, settings);
  }
  switch (d.verdict) {
    case policy::Verdict::kRefuse:
      return Reply::Refused(d, what, p->abs);
    case policy::Verdict::kAsk: {
      // The question waits for a person: the rest of the call, holding the
      // parent and the name resolved here, runs on a worker of its own.
      auto held = std::make_shared<Fd>(std::move(parent.value()));
      return Later([this, req, valid, held, loc = p->loc, abs = p->abs, st, dir = q.want_dir] {
        return AskDelete(req, held, loc, abs, st, dir, valid);
      });
    }
    case policy::Verdict::kAllow:
      break;
  }
  if (d.keep == policy::Keep::kMove) {
    // The kernel's answer to "file/" first: the name alone is moved.
    if (p->slash && !S_ISDIR(st.st_mode)) return Reply::Errno(ENOTDIR);
    if (auto refused = Keep(p->loc, parent->get(), p->loc.name, st, "delete"))
      return std::move(*refused);
    Gone(st);
    return Reply{};
  }
  if (::unlinkat(parent->get(), p->name().c_str(), flags) != 0) return Reply::Errno(errno);
  NoteDropped(p->loc, st);
  Gone(st);
  return Reply{};
}

Reply Emulator::AskDelete(const Request& req, const std::shared_ptr<Fd>& parent, const Located& loc,
                          const std::string& abs, const struct stat& st, bool dir,
                          const std::function<bool()>& valid) {
  const std::string& rel = loc.rel;
  auto refused = [&](std::string why) {
    return Reply::Errno(EACCES, std::move(why),
                        policy::RefusalHint(policy::Refusal::kNeedsApproval, abs));
  };
  // The preview is the supervisor's: a file the tool may delete but not
  // read is shown too. The unlink below is the tool's. O_NONBLOCK: a FIFO
  // swapped in cannot stall us; MakePreview refuses it.
  Fd fd;
  Result<policy::DeletePreview> preview = SysError{EBADF, "preview"};
  struct stat held {};
  {
    SupervisorPermissions raised;
    fd = Fd(::openat(parent->get(), loc.name.c_str(),
                     O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | (dir ? O_DIRECTORY : 0)));
    if (fd && ::fstat(fd.get(), &held) == 0 && held.st_dev == st.st_dev &&
        held.st_ino == st.st_ino) {
      preview = dir ? MakeDirPreview(fd.get(), rel) : MakePreview(fd.get(), rel);
    }
  }
  if (!fd) return refused("delete " + rel + ": cannot hold the file for a preview");
  // What is asked about is the entry decided on (a name swapped since is
  // decided again when the tool retries).
  if (held.st_dev != st.st_dev || held.st_ino != st.st_ino) {
    return refused("delete " + rel + ": the file changed after the decision (not asked)");
  }
  if (!preview) {
    return refused("delete " + rel + ": " + Describe(preview.error()) +
                   " (refused without asking)");
  }
  if (Status s = gates().AskDelete(req, preview.value(), valid); !s) {
    // The one line the user sees for it (RefusalLog, with the hint).
    return refused(s.error().err == ESRCH ? "delete " + rel + ": " + GateRefusal(s.error())
                                          : "delete of " + rel + " (existed before the run): " +
                                                GateRefusal(s.error()));
  }
  // No await between this recheck and the unlink.
  if (Status s = Recheck(fd.get(), parent->get(), loc.name.c_str(), preview.value()); !s) {
    return refused("delete " + rel + ": the file changed after the preview (" +
                   Describe(s.error()) + ")");
  }
  if (::unlinkat(parent->get(), loc.name.c_str(), dir ? AT_REMOVEDIR : 0) != 0) {
    return refused("delete " + rel + ": " + Describe(Errno("unlinkat")));
  }
  Observe("deleted", loc, nullptr, false);
  Gone(st);
  return Reply{};
}

}  // namespace cordon::supervisor
