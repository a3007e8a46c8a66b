#include "tools/run_journal.h"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <ctime>

#include "supervisor/journal/run_reader.h"
#include "supervisor/remove_tree.h"

namespace cordon::tools {

namespace {

// The age bound: this workspace's runs older than `days` lose their
// journals, each named (nothing is dropped unsaid).
void PruneOldRuns(const supervisor::JournalPlace& place, const std::string& workspace, size_t days) {
  const int64_t cutoff = std::time(nullptr) - static_cast<int64_t>(days) * 86400;
  for (const supervisor::RunSummary& r : supervisor::ListRuns(place)) {
    if (!r.meta || r.meta->workspace != workspace || r.meta->started_s >= cutoff) continue;
    if (Status s = supervisor::RemoveRun(place, r.id); !s) {
      spdlog::warn("run {}: its journal is older than limits.journalDays ({}) but could not be "
                   "removed: {}",
                   r.id, days, Describe(s.error()));
    } else {
      spdlog::warn("removed the journal of run {} ({} days old, limits.journalDays = {}): it can "
                   "no longer be undone",
                   r.id, (std::time(nullptr) - r.meta->started_s) / 86400, days);
    }
  }
}

}  // namespace

std::shared_ptr<supervisor::Journal> OpenRunJournal(policy::Policy& p,
                                                    const std::vector<std::string>& argv,
                                                    const std::string& run_id) {
  if (p.profile != policy::Profile::kWorkspaceWrite ||
      p.sensitive_delete != policy::SensitiveDelete::kRecoverable) {
    return nullptr;
  }
  auto fall_back = [&](const std::string& why) -> std::shared_ptr<supervisor::Journal> {
    spdlog::warn("this run is not recoverable ({}): deleting or replacing a file that existed "
                 "before the run needs approval (sensitive.delete \"ask\")",
                 why);
    p.sensitive_delete = policy::SensitiveDelete::kAsk;
    return nullptr;
  };
  struct stat ws;
  if (::stat(p.workspace.c_str(), &ws) != 0) return fall_back("cannot stat the workspace");
  auto place = supervisor::OpenJournalPlace(p.workspace);
  if (!place) {
    return fall_back("no place for its journal on the workspace's mount, outside it: " +
                     Describe(place.error()));
  }
  PruneOldRuns(place.value(), p.workspace, p.limits.max_journal_days);
  policy::RunMeta meta;
  meta.id = run_id;
  meta.workspace = p.workspace;
  meta.workspace_dev = ws.st_dev;
  meta.workspace_ino = ws.st_ino;
  meta.started_s = std::time(nullptr);
  meta.argv = argv;
  const std::string root = place->root;
  supervisor::JournalLimits limits{p.limits.max_journal_bytes, p.limits.max_journal_copy_bytes};
  auto journal = supervisor::Journal::Create(std::move(place.value()), meta, limits);
  if (!journal) return fall_back("cannot create its journal: " + Describe(journal.error()));
  // The tool may not read, change or link into any run's journal.
  p.paths.push_back({root, policy::Access::kDenied, false, "the run journals"});
  spdlog::debug("run {}: journal {}", meta.id, journal.value()->dir());
  return journal.value();
}

void CloseRunJournal(const std::shared_ptr<supervisor::Journal>& j, const policy::Policy& p,
                     int status) {
  if (!j) return;
  const supervisor::JournalStats stats = j->Stats();
  if (stats.changes == 0) {
    if (auto removed = supervisor::RemoveTree(j->dir()); !removed) {
      spdlog::warn("cannot remove the empty journal {}: {}", j->dir(), Describe(removed.error()));
    }
    return;
  }
  Fd ws(::open(p.workspace.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  Status sealed = ws ? j->Seal(ws.get(), status) : Status(Errno("open", p.workspace));
  if (!sealed) {
    spdlog::error("run {}: the journal's end could not be written ({}); cordon undo can still "
                  "take it back, without telling later changes apart",
                  j->meta().id, Describe(sealed.error()));
  }
  if (stats.kept > 0) {
    spdlog::info("run {} kept {} file(s) of yours before changing them: `cordon runs show {}` "
                 "lists its changes, `cordon undo {}` takes them back",
                 j->meta().id, stats.kept, j->meta().id, j->meta().id);
  }
  if (stats.refused_at_bound > 0) {
    spdlog::warn("run {}: {} change(s) were refused because the journal reached its bound "
                 "(limits.journalBytes)",
                 j->meta().id, stats.refused_at_bound);
  }
}

}  // namespace cordon::tools
