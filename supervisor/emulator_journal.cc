// The emulator's part in a recoverable run (sensitive.delete: recoverable,
// supervisor/journal/journal.h): a file of the user's in the workspace is
// kept in the run's journal before the call that removes or replaces it,
// and every change to a name there is recorded, so `cordon undo` can take
// the run back. What policy::Decide says to keep (Decision::keep) is kept
// here, before the call is made; a file that cannot be kept is not changed,
// except a write in place too large to copy, which an approver may allow
// (RunGates::AskWrite, on a deferred worker). A metadata change of a file
// of the user's keeps the old value of what it alters (KeepAttrs).
#include <spdlog/spdlog.h>
#include <sys/stat.h>

#include "policy/attr_keep.h"
#include "policy/refusal_hint.h"
#include "supervisor/attr_apply.h"
#include "supervisor/caps.h"
#include "supervisor/delete_preview.h"
#include "supervisor/emulator.h"
#include "supervisor/journal/attr_state.h"

namespace cordon::supervisor {

namespace {

std::string AbsOf(const Located& loc) {
  if (loc.rel.empty()) return loc.root->path;
  return (loc.root->path == "/" ? "" : loc.root->path) + "/" + loc.rel;
}

}  // namespace

void Emulator::Observe(const char* kind, const Located& loc, const Located* to, bool kept) {
  if (!opts_.observer) return;
  ChangeEvent c;
  c.kind = kind;
  c.path = AbsOf(loc);
  if (to) c.to = AbsOf(*to);
  c.kept = kept;
  opts_.observer->Changed(c);
}

void Emulator::NoteAttrChanged(const Located& loc, policy::AttrOp op, bool kept) {
  // A truncate is a change of content (NoteWritten, Keep).
  if (const char* kind = policy::AttrChangeKind(op)) Observe(kind, loc, nullptr, kept);
}

void Emulator::NoteCreated(const Located& loc, const struct stat& st, bool observed) {
  if (Journals(loc) && !loc.rel.empty()) opts_.journal->Created(loc.rel, st);
  if (observed) Observe("created", loc, nullptr, false);
}

void Emulator::NoteMoved(const Located& from, const Located& to, const struct stat& st) {
  if (Journals(from) && Journals(to)) opts_.journal->Moved(from.rel, to.rel, st);
  Observe("renamed", from, &to, false);
}

void Emulator::NoteDropped(const Located& loc, const struct stat& st) {
  if (Journals(loc) && !loc.rel.empty()) opts_.journal->Dropped(loc.rel, st);
  Observe("deleted", loc, nullptr, false);
}

void Emulator::NoteExchanged(const Located& a, const Located& b, const struct stat& a_st,
                             const struct stat& b_st) {
  if (Journals(a) && Journals(b)) opts_.journal->Swapped(a.rel, b.rel, a_st, b_st);
  Observe("exchanged", a, &b, false);
}

void Emulator::NoteWritten(const Located& loc, const struct stat& st, bool truncated) {
  if (created_.Contains(st.st_dev, st.st_ino)) return;  // part of its creation
  Observe(truncated ? "overwritten" : "modified", loc, nullptr, false);
}

namespace {

Reply NotKept(const Located& loc, const SysError& e) {
  std::string why = AbsOf(loc) + ": the run's journal could not keep it (" +
                    Describe(e) + "), so it is left as it was";
  if (e.err == ENOSPC || e.err == EFBIG) {
    why += "; raise the bound (" + std::string(e.detail) + ") or use sensitive.delete \"ask\"";
  }
  return Reply::Errno(EACCES, why,
                      policy::RefusalHint(policy::Refusal::kNeedsApproval, AbsOf(loc)));
}

}  // namespace

std::optional<Reply> Emulator::Keep(const Located& loc, int parent, const std::string& name,
                                    const struct stat& st, const char* why) {
  if (Status s = opts_.journal->Save(parent, name, loc.rel, st, why); !s) return NotKept(loc, s.error());
  const std::string_view reason = why;
  Observe(reason == "truncate" ? "overwritten" : reason == "replace" ? "replaced" : "deleted", loc,
          nullptr, true);
  return std::nullopt;
}

std::optional<Reply> Emulator::KeepForBypass(const Located& loc, int parent, int fd,
                                             const struct stat& st, const char* why, bool* moved) {
  if (moved != nullptr) *moved = false;
  if (!Journals(loc) || loc.rel.empty()) return std::nullopt;
  EntryStat e;
  if (!StatEntry(fd, "", e)) return Reply::Errno(errno);
  if (!S_ISREG(e.st.st_mode) || BornInRun(e)) return std::nullopt;
  if (std::string_view(why) != "truncate") {
    if (auto refused = Keep(loc, parent, loc.name, st, why)) return refused;
    if (moved != nullptr) *moved = true;
    return std::nullopt;
  }
  if (opts_.journal->Kept(st)) return std::nullopt;
  if (Status s = opts_.journal->Copy(fd, loc.rel, st); !s) return NotKept(loc, s.error());
  Observe("modified", loc, nullptr, true);
  return std::nullopt;
}

bool Emulator::EntryBornInRun(int target) {
  EntryStat e;
  return StatEntry(target, "", e) && BornInRun(e);
}

policy::Keep Emulator::AttrKeep(const Located& loc, int target, const struct stat& st) {
  if (!Journals(loc) || loc.rel.empty()) return policy::Keep::kNothing;
  policy::EntryFacts e = Facts(st, loc);
  e.born_in_run = EntryBornInRun(target);
  return policy::MetadataKeep(e, Place(loc), DecideSettings());
}

std::optional<Reply> Emulator::KeepAttrs(const Located& loc, int target, const AttrArgs& args) {
  struct stat st;
  if (::fstat(target, &st) != 0) return Reply::Errno(errno);
  if (SetIdRefused(args, S_ISDIR(st.st_mode))) return std::nullopt;  // refused: nothing changes
  const bool setid = (st.st_mode & (S_ISUID | S_ISGID)) != 0;
  for (policy::AttrKind kind : policy::AttrsAltered(args.op, args.xattr_name, setid)) {
    const std::string name = kind == policy::AttrKind::kXattr ? args.xattr_name : "";
    auto read = [&]() -> Result<policy::OldAttr> {
      // Reading the old value is the supervisor's business, as a preview is.
      SupervisorPermissions raised;
      return ReadOldAttr(target, kind, name);
    };
    if (Status s = opts_.journal->KeepAttr(loc.rel, st, kind, name, read); !s) {
      return NotKept(loc, s.error());
    }
  }
  return std::nullopt;
}

Reply Emulator::KeepCopy(const Located& loc, std::shared_ptr<Fd> fd, const struct stat& st,
                         const Request& req, const std::function<bool()>& valid,
                         std::function<Reply()> then) {
  if (opts_.journal->Kept(st) || written_unkept_.Contains(st.st_dev, st.st_ino)) return then();
  Status s = opts_.journal->Copy(fd->get(), loc.rel, st);
  if (s) {
    Observe("modified", loc, nullptr, true);
    return then();
  }
  if (s.error().err != EFBIG) return NotKept(loc, s.error());
  // Too large to copy and no reflink: the write needs a person's or a
  // host's word, as a delete does under sensitive.delete "ask".
  const std::string path = AbsOf(loc);
  const std::string bound = std::to_string(opts_.journal->limits().max_copy_bytes);
  const std::string todo = "; to let such writes go unkept raise limits.journalCopyBytes (" +
                           bound + " bytes) or use --sensitive-delete allow";
  std::string why = "write in place to " + path + " (existed before the run): larger than " +
                    "limits.journalCopyBytes, so the journal cannot keep a copy";
  auto refused = [path, todo](const std::string& why) {
    return Reply::Errno(EACCES, why + todo,
                        policy::RefusalHint(policy::Refusal::kNeedsApproval, path));
  };
  if (!gates().CanAsk(Ask::kWrite)) return refused(why);
  // The question waits: the rest holds the file opened for the tool.
  return Later([this, req, valid, loc, fd, st, why, path, refused, then = std::move(then)] {
    Result<policy::DeletePreview> preview = SysError{EBADF, "preview"};
    {
      SupervisorPermissions raised;
      preview = MakeWritePreview(fd->get(), loc.rel);
    }
    if (!preview) {
      return refused(why + " (" + Describe(preview.error()) + ", refused without asking)");
    }
    if (Status s = gates().AskWrite(req, preview.value(), valid); !s) {
      return refused(why + ": " + GateRefusal(s.error()));
    }
    if (Status s = Recheck(fd->get(), -1, nullptr, preview.value()); !s) {
      return refused(why + ": the file changed after the preview (" + Describe(s.error()) + ")");
    }
    written_unkept_.Insert(st.st_dev, st.st_ino);
    Observe("modified", loc, nullptr, false);
    spdlog::warn("{}: written in place unkept, as approved: cordon undo cannot take it back", path);
    return then();
  });
}

}  // namespace cordon::supervisor
