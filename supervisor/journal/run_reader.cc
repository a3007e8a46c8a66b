#include "supervisor/journal/run_reader.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <ctime>

#include "policy/digest.h"
#include "supervisor/owned_dir.h"
#include "supervisor/remove_tree.h"
#include "supervisor/walk/dir_listing.h"

namespace cordon::supervisor {
namespace {

constexpr size_t kMaxMeta = 1 << 20;
constexpr size_t kMaxChanges = size_t{512} << 20;

bool Exists(int dir, const char* name) {
  struct stat st;
  return ::fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) == 0;
}

}  // namespace

Result<LoadedRun> LoadRun(const JournalPlace& place, const std::string& id) {
  if (!policy::ValidRunId(id)) return SysError{EINVAL, "run", "\"" + id + "\" is not a run id"};
  LoadedRun r;
  r.dir = place.root + "/runs/" + id;
  Result<Fd> run = OpenDirAt(place.runs.get(), id);
  if (!run) return SysError{ENOENT, "run", "no run " + id + " in " + place.root};
  if (Status s = CheckOwned(run->get(), ::geteuid(), r.dir, S_IFDIR); !s) return s.error();
  // The run holds this lock while it lasts; an undo holds it while it works.
  if (::flock(run->get(), LOCK_EX | LOCK_NB) != 0) {
    return SysError{EBUSY, "run", "run " + id + " is still going (or being undone): nothing was done"};
  }
  r.run = std::move(run.value());
  Result<Fd> slots = OpenDirAt(r.run.get(), "slots");
  if (!slots) return SysError{EINVAL, "run", r.dir + ": slots/ is missing"};
  r.slots = std::move(slots.value());
  auto damaged = [&](const std::string& why) {
    return SysError{EINVAL, "run", "the journal of run " + id + " is damaged (" + why +
                                       "): nothing was done"};
  };
  Result<std::string> meta_text = ReadOwnedFileAt(r.run.get(), "meta.json", kMaxMeta);
  if (!meta_text) return damaged("meta.json: " + Describe(meta_text.error()));
  std::string why;
  auto meta = policy::ParseMeta(meta_text.value(), &why);
  if (!meta) return damaged("meta.json: " + why);
  if (meta->id != id) return damaged("meta.json names another run");
  r.meta = std::move(*meta);
  Result<std::string> changes = ReadOwnedFileAt(r.run.get(), "changes.jsonl", kMaxChanges);
  if (!changes) return damaged("changes.jsonl: " + Describe(changes.error()));
  if (Exists(r.run.get(), "end.json")) {
    Result<std::string> end_text = ReadOwnedFileAt(r.run.get(), "end.json", kMaxChanges);
    if (!end_text) return damaged("end.json: " + Describe(end_text.error()));
    auto end = policy::ParseEnd(end_text.value(), &why);
    if (!end) return damaged("end.json: " + why);
    if (!policy::DigestEquals(policy::Sha256Hex(changes.value()), end->changes_sha256)) {
      return damaged("changes.jsonl was edited after the run: its digest does not match end.json");
    }
    r.end = std::move(*end);
  }
  size_t line_no = 0;
  std::string_view rest = changes.value();
  while (!rest.empty()) {
    size_t nl = rest.find('\n');
    if (nl == std::string_view::npos) return damaged("changes.jsonl ends in a partial line");
    std::string_view line = rest.substr(0, nl);
    rest.remove_prefix(nl + 1);
    ++line_no;
    auto c = policy::ParseChangeLine(line, &why);
    if (!c) return damaged("changes.jsonl line " + std::to_string(line_no) + ": " + why);
    r.changes.push_back(std::move(*c));
  }
  if (r.end && r.end->changes != r.changes.size()) return damaged("end.json counts other changes");
  r.undone = Exists(r.run.get(), "undone.json");
  return r;
}

std::vector<RunSummary> ListRuns(const JournalPlace& place, std::optional<int64_t> named_before) {
  std::vector<RunSummary> out;
  Fd listing(::openat(place.runs.get(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!listing) return out;
  auto names = ListNames(listing.get());
  if (!names) return out;
  for (const std::string& name : names.value()) {
    if (!policy::ValidRunId(name)) continue;
    if (named_before) {
      std::optional<int64_t> began = policy::RunIdStartedS(name);
      if (began && *began >= *named_before) continue;
    }
    RunSummary s;
    s.id = name;
    s.place = place.root;
    Result<Fd> run = OpenDirAt(place.runs.get(), name);
    if (!run) continue;
    if (auto text = ReadOwnedFileAt(run->get(), "meta.json", kMaxMeta)) {
      s.meta = policy::ParseMeta(text.value(), nullptr);
    }
    s.sealed = Exists(run->get(), "end.json");
    s.undone = Exists(run->get(), "undone.json");
    out.push_back(std::move(s));
  }
  std::sort(out.begin(), out.end(), [](const RunSummary& a, const RunSummary& b) {
    int64_t ta = a.meta ? a.meta->started_s : 0, tb = b.meta ? b.meta->started_s : 0;
    return ta != tb ? ta < tb : a.id < b.id;
  });
  return out;
}

Status MarkUndone(LoadedRun& run, bool complete) {
  Fd fd(::openat(run.run.get(), "undone.json", O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC,
                 0600));
  if (!fd) return Errno("create", run.dir + "/undone.json");
  std::string text = "{\"undone\": " + std::to_string(std::time(nullptr)) +
                     ", \"complete\": " + (complete ? "true" : "false") + "}\n";
  if (Status s = WriteAll(fd.get(), text); !s) return s;
  run.undone = true;
  if (!complete) return Ok();
  Result<RemoveStats> removed = RemoveTree(run.dir + "/slots");
  if (!removed) return removed.error();
  return Ok();
}

Status RemoveRun(const JournalPlace& place, const std::string& id) {
  if (!policy::ValidRunId(id)) return SysError{EINVAL, "run", id};
  Result<Fd> run = OpenDirAt(place.runs.get(), id);
  if (!run) return run.error();
  // The run holds this lock while it lasts, an undo while it works.
  if (::flock(run->get(), LOCK_EX | LOCK_NB) != 0) {
    return SysError{EBUSY, "run", id + " is still going (or being undone): its journal is kept"};
  }
  Result<RemoveStats> removed = RemoveTree(place.root + "/runs/" + id);
  if (!removed) return removed.error();
  return Ok();
}

}  // namespace cordon::supervisor
