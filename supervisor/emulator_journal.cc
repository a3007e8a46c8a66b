// The emulator's part in a recoverable run (sensitive.delete: recoverable,
// supervisor/journal/journal.h): a file of the user's in the workspace is
// kept in the run's journal before the call that removes or replaces it,
// and every change to a name there is recorded, so `cordon undo` can take
// the run back. What policy::Decide says to keep (Decision::keep) is kept
// here, before the call is made; a file that cannot be kept is not changed.
#include "supervisor/emulator.h"

#include <spdlog/spdlog.h>

#include "policy/refusal_hint.h"

namespace cordon::supervisor {

void Emulator::NoteCreated(const Located& loc, const struct stat& st) {
  if (Journals(loc) && !loc.rel.empty()) opts_.journal->Created(loc.rel, st);
}

void Emulator::NoteMoved(const Located& from, const Located& to, const struct stat& st) {
  if (Journals(from) && Journals(to)) opts_.journal->Moved(from.rel, to.rel, st);
}

void Emulator::NoteDropped(const Located& loc, const struct stat& st) {
  if (Journals(loc) && !loc.rel.empty()) opts_.journal->Dropped(loc.rel, st);
}

void Emulator::NoteExchanged(const Located& a, const Located& b, const struct stat& a_st,
                             const struct stat& b_st) {
  if (Journals(a) && Journals(b)) opts_.journal->Swapped(a.rel, b.rel, a_st, b_st);
}

namespace {

Reply NotKept(const Located& loc, const SysError& e) {
  std::string why = loc.root->path + "/" + loc.rel + ": the run's journal could not keep it (" +
                    Describe(e) + "), so it is left as it was";
  if (e.err == ENOSPC || e.err == EFBIG) {
    why += "; raise the bound (" + std::string(e.detail) + ") or use sensitive.delete \"ask\"";
  }
  return Reply::Errno(EACCES, why,
                      policy::RefusalHint(policy::Refusal::kNeedsApproval, loc.root->path + "/" + loc.rel));
}

}  // namespace

std::optional<Reply> Emulator::Keep(const Located& loc, int parent, const std::string& name,
                                    const struct stat& st, const char* why) {
  if (Status s = opts_.journal->Save(parent, name, loc.rel, st, why); !s) return NotKept(loc, s.error());
  return std::nullopt;
}

std::optional<Reply> Emulator::KeepCopy(const Located& loc, int fd, const struct stat& st) {
  if (opts_.journal->Kept(st)) return std::nullopt;
  if (Status s = opts_.journal->Copy(fd, loc.rel, st); !s) return NotKept(loc, s.error());
  return std::nullopt;
}

}  // namespace cordon::supervisor
