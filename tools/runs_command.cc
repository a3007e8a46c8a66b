#include "tools/runs_command.h"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <climits>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <map>
#include <optional>

#include "policy/attr_keep.h"
#include "policy/audit_record.h"
#include "policy/run_retention.h"
#include "policy/undo_plan.h"
#include "supervisor/audit/audit_log.h"
#include "supervisor/audit/run_records.h"
#include "supervisor/journal/journal_place.h"
#include "supervisor/journal/run_reader.h"
#include "supervisor/journal/undo.h"
#include "supervisor/launcher.h"

namespace cordon::tools {
namespace {

using supervisor::kExitCordonError;

// The workspace named (or the current directory), as a realpath.
std::optional<std::string> WorkspaceOf(const std::string& given) {
  std::string dir = given.empty() ? "." : given;
  char real[PATH_MAX];
  if (::realpath(dir.c_str(), real) == nullptr) {
    spdlog::error("{}: {}", dir, std::strerror(errno));
    return std::nullopt;
  }
  return std::string(real);
}

std::string When(int64_t s) {
  std::time_t t = s;
  struct tm tm {};
  ::localtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", &tm);
  return buf;
}

std::string Command(const std::vector<std::string>& argv) {
  std::string out;
  for (const std::string& a : argv) out += (out.empty() ? "" : " ") + a;
  return out;
}

// The run to act on, found in the journal places of `workspace` (the last
// one not yet undone there when `id` is empty). Says why when there is none.
struct Found {
  supervisor::JournalPlace place;
  std::string id;
};
std::optional<Found> FindRun(const std::string& workspace, const std::string& id) {
  std::vector<supervisor::JournalPlace> places = supervisor::ExistingJournalPlaces(workspace);
  std::optional<Found> best;
  int64_t best_time = -1;
  struct stat ws {};
  (void)::stat(workspace.c_str(), &ws);
  std::string moved_from;
  // Runs recorded at this path (undone or not): the workspace did not
  // move, whatever an old record of a removed directory whose inode number
  // it now has says.
  bool recorded_here = false;
  for (supervisor::JournalPlace& place : places) {
    for (const supervisor::RunSummary& r : supervisor::ListRuns(place)) {
      if (!id.empty()) {
        if (r.id == id) return Found{std::move(place), r.id};
        continue;
      }
      if (!r.meta) continue;
      if (r.meta->workspace != workspace) {
        if (!r.undone && r.meta->workspace_dev == ws.st_dev && r.meta->workspace_ino == ws.st_ino) {
          moved_from = r.meta->workspace;
        }
        continue;
      }
      recorded_here = true;
      if (r.undone) continue;
      if (r.meta->started_s >= best_time) {
        best_time = r.meta->started_s;
        best = Found{supervisor::JournalPlace{place.root, Fd(::dup(place.runs.get()))}, r.id};
      }
    }
  }
  if (best) return best;
  if (!id.empty()) {
    spdlog::error("no run {} recorded for {} (cordon runs list shows the runs)", id, workspace);
  } else if (!moved_from.empty() && !recorded_here) {
    spdlog::error("the runs of this directory were recorded at {}: the workspace moved; move it "
                  "back to undo them (nothing was done)",
                  moved_from);
  } else {
    spdlog::error("no recoverable run recorded for {} that is not undone already", workspace);
  }
  return std::nullopt;
}

// The run `id` (empty: the last) of the workspace named, read and
// checked; says why when there is none.
std::optional<supervisor::LoadedRun> OpenRun(const std::string& workspace_arg,
                                             const std::string& id, std::string* workspace_out) {
  auto workspace = WorkspaceOf(workspace_arg);
  if (!workspace) return std::nullopt;
  auto found = FindRun(*workspace, id);
  if (!found) return std::nullopt;
  auto run = supervisor::LoadRun(found->place, found->id);
  if (!run) {
    spdlog::error("{}", Describe(run.error()));
    return std::nullopt;
  }
  if (workspace_out) *workspace_out = *workspace;
  return std::move(run.value());
}

int Undo(const std::string& workspace_arg, const std::string& id) {
  std::string workspace_real;
  auto run = OpenRun(workspace_arg, id, &workspace_real);
  if (!run) return kExitCordonError;
  const std::string& run_id = run->meta.id;
  if (run->undone) {
    spdlog::error("run {} was undone already (nothing was done)", run_id);
    return kExitCordonError;
  }
  // The workspace must be the directory the run changed.
  struct stat ws;
  if (::stat(run->meta.workspace.c_str(), &ws) != 0 || ws.st_dev != run->meta.workspace_dev ||
      ws.st_ino != run->meta.workspace_ino) {
    spdlog::error("run {} changed {}, which is no longer that directory (moved or replaced): "
                  "nothing was done",
                  run_id, run->meta.workspace);
    return kExitCordonError;
  }
  if (!workspace_arg.empty() && run->meta.workspace != workspace_real) {
    spdlog::error("run {} changed {}, not {}: nothing was done", run_id, run->meta.workspace,
                  workspace_real);
    return kExitCordonError;
  }
  Fd ws_fd(::open(run->meta.workspace.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!ws_fd) {
    spdlog::error("{}: {}", run->meta.workspace, std::strerror(errno));
    return kExitCordonError;
  }
  std::optional<policy::NameStates> at_end;
  if (run->end) at_end = run->end->names;
  else spdlog::warn("run {} did not end cleanly: changes made after it cannot be told apart", run_id);
  policy::NameStates now = supervisor::ObserveNames(ws_fd.get(), policy::NamesOf(run->changes));
  policy::UndoPlan plan = policy::PlanUndo(run->changes, at_end, now);
  if (Status s = supervisor::CheckSlots(run->slots.get(), plan); !s) {
    spdlog::error("the journal of run {} is damaged ({}): nothing was done", run_id,
                  Describe(s.error()));
    return kExitCordonError;
  }
  supervisor::UndoOutcome out = supervisor::ApplyUndo(ws_fd.get(), run->slots.get(), plan);
  std::vector<policy::UndoConflict> left = plan.conflicts;
  left.insert(left.end(), out.failed.begin(), out.failed.end());
  std::printf("run %s: %zu change(s) taken back in %s\n", run_id.c_str(), out.done,
              run->meta.workspace.c_str());
  for (const std::string& a : out.attrs) std::printf("  set back: %s\n", a.c_str());
  for (const policy::UndoConflict& c : left) {
    std::printf("  kept as it is: %s (%s)%s\n", c.path.c_str(), c.why.c_str(),
                c.slot ? (" - the old version is " + run->dir + "/slots/" + std::to_string(*c.slot)).c_str()
                       : "");
  }
  if (Status s = supervisor::MarkUndone(run.value(), left.empty()); !s) {
    spdlog::warn("cannot mark run {} undone: {}", run_id, Describe(s.error()));
  }
  return left.empty() ? 0 : 1;
}

// The journal's view of each recoverable run (undone or not), by id.
std::map<std::string, supervisor::RunSummary> JournalRuns(const std::string& workspace) {
  std::map<std::string, supervisor::RunSummary> out;
  for (supervisor::JournalPlace& place : supervisor::ExistingJournalPlaces(workspace)) {
    for (supervisor::RunSummary& r : supervisor::ListRuns(place)) out[r.id] = std::move(r);
  }
  return out;
}

const char* UndoState(const std::map<std::string, supervisor::RunSummary>& journals,
                      const std::string& id) {
  auto it = journals.find(id);
  if (it == journals.end()) return "-";
  return it->second.undone ? "undone" : "undoable";
}

// Every run of the workspace (--all: of every workspace): the run records
// (tools/run_services.h), then recoverable runs recorded in a journal only.
int List(const std::string& workspace_arg, bool all) {
  auto workspace = WorkspaceOf(workspace_arg);
  if (!workspace) return kExitCordonError;
  std::map<std::string, supervisor::RunSummary> journals = JournalRuns(*workspace);
  for (const supervisor::ListedRun& r : supervisor::ListRunRecords()) {
    if (!r.record) {
      if (all) std::printf("%s  (unreadable: %s)\n", r.id.c_str(), r.error.c_str());
      continue;
    }
    const policy::RunMeta& m = r.record->meta;
    if (!all && m.workspace != *workspace) continue;
    const std::string state =
        r.record->ended_s ? "exit " + std::to_string(r.record->exit_status) : "unfinished";
    std::printf("%s  %s  %-10s  %-8s  %s  %s\n", r.id.c_str(), When(m.started_s).c_str(),
                state.c_str(), UndoState(journals, r.id), m.workspace.c_str(),
                Command(m.argv).c_str());
    journals.erase(r.id);
  }
  for (const auto& [id, r] : journals) {
    if (!r.meta) {
      std::printf("%s  (unreadable)  %s\n", id.c_str(), r.place.c_str());
      continue;
    }
    if (!all && r.meta->workspace != *workspace) continue;
    std::printf("%s  %s  %-10s  %-8s  %s  %s\n", id.c_str(), When(r.meta->started_s).c_str(),
                r.sealed ? "ended" : "unfinished", r.undone ? "undone" : "undoable",
                r.meta->workspace.c_str(), Command(r.meta->argv).c_str());
  }
  return 0;
}

std::string Verb(const std::string& kind, bool kept) {
  if (kind == "deleted") return kept ? "deleted (kept)" : "deleted";
  if (kind == "modified") return kept ? "modified (copy kept)" : "modified";
  if (kind == "overwritten") return kept ? "overwritten (old kept)" : "overwritten";
  if (kind == "replaced") return kept ? "replaced (old kept)" : "replaced";
  if (kind == "created" || kind == "renamed" || kind == "exchanged") return kind;
  // A metadata change: "mode changed (old kept)" when undo can set it back.
  if (policy::AttrChangeNamed(kind)) return kept ? kind + " (old kept)" : kind;
  return "?";
}

// The run `id` (empty: the workspace's last) from its record and its
// audit log: what it changed, what was refused, whether the log is whole.
int Show(const std::string& workspace_arg, const std::string& id) {
  auto workspace = WorkspaceOf(workspace_arg);
  if (!workspace) return kExitCordonError;
  std::optional<policy::RunRecord> rec;
  if (!id.empty()) {
    auto loaded = supervisor::LoadRunRecord(id);
    if (!loaded) {
      spdlog::error("{} (cordon runs list shows the runs)", Describe(loaded.error()));
      return kExitCordonError;
    }
    rec = std::move(loaded.value());
  } else {
    for (supervisor::ListedRun& r : supervisor::ListRunRecords()) {
      if (r.record && r.record->meta.workspace == *workspace) rec = std::move(r.record);
    }
    if (!rec) {
      spdlog::error("no run recorded for {}", *workspace);
      return kExitCordonError;
    }
  }
  const policy::RunMeta& m = rec->meta;
  std::printf("run %s  %s  %s\n  workspace %s\n  command %s\n", m.id.c_str(),
              When(m.started_s).c_str(),
              rec->ended_s ? ("exit " + std::to_string(rec->exit_status)).c_str() : "unfinished",
              m.workspace.c_str(), Command(m.argv).c_str());
  if (rec->audit_path.empty()) {
    std::printf("  no audit log (--audit none): its changes were not recorded\n");
    return 0;
  }
  auto bytes = supervisor::ReadAuditLog(rec->audit_path);
  if (!bytes) {
    spdlog::error("run {}: its audit log: {}", m.id, Describe(bytes.error()));
    return kExitCordonError;
  }
  const policy::VerifyReport chain = policy::VerifyAuditBytes(bytes.value());
  std::string whole = chain.intact ? "" : "BROKEN at record " + std::to_string(chain.broken_line) +
                                              ": " + chain.why;
  if (whole.empty() && rec->anchor) whole = policy::CheckAnchor(bytes.value(), *rec->anchor);
  size_t refused = 0, kernel = 0;
  const std::vector<policy::RunLogRecord> records = policy::RunRecordsIn(bytes.value(), m.id);
  for (const policy::RunLogRecord& r : records) {
    if (r.kind == "decision" && r.refused) ++refused;
    if (r.kind == "landlock") {
      ++kernel;
      std::printf("  %-24s %s (%s)\n", "refused by the kernel", r.path.c_str(), r.blockers.c_str());
    }
    if (r.kind != "change") continue;
    const std::string verb = Verb(r.change, r.kept);
    if (r.to.empty())
      std::printf("  %-24s %s\n", verb.c_str(), r.path.c_str());
    else
      std::printf("  %-24s %s -> %s\n", verb.c_str(), r.path.c_str(), r.to.c_str());
  }
  const std::string by_kernel =
      kernel > 0 ? ", " + std::to_string(kernel) + " by the kernel (Landlock's own records)"
                 : " (what the kernel refused alone is in the log only where cordon may read "
                   "kernel audit: cordon doctor)";
  std::printf("  %zu call(s) refused by the supervisor%s\n  audit log %s: %s\n", refused,
              by_kernel.c_str(), rec->audit_path.c_str(),
              whole.empty() ? (rec->anchor ? "intact, anchored" : "intact (the run did not end)")
                            : whole.c_str());
  return whole.empty() ? 0 : 1;
}

// "30d", "12h", "45m", "10s" (a bare number: days) in seconds; -1 if bad.
int64_t ParseAge(const std::string& s) {
  if (s.empty()) return -1;
  size_t used = 0;
  long long n = 0;
  try {
    n = std::stoll(s, &used);
  } catch (...) {
    return -1;
  }
  if (n < 0) return -1;
  std::string unit = s.substr(used);
  const int64_t mult = unit.empty() || unit == "d" ? 86400 : unit == "h" ? 3600 : unit == "m" ? 60 : unit == "s" ? 1 : -1;
  if (mult < 0 || n > INT64_MAX / 86400) return -1;
  return n * mult;
}

// The journals and records of the workspace's runs that began AGE ago or
// earlier: the decision a run's end takes (policy::ChooseRunsToRemove,
// tools/run_retention.h), with an age alone and no bound on how many.
int Prune(const std::string& workspace_arg, const std::string& older_than) {
  const int64_t age = ParseAge(older_than);
  if (age < 0) {
    spdlog::error("--older-than {}: give an age such as 30d, 12h, 45m or 10s", older_than);
    return kExitCordonError;
  }
  auto workspace = WorkspaceOf(workspace_arg);
  if (!workspace) return kExitCordonError;
  const int64_t now = std::time(nullptr);
  const policy::RetentionBound bound{age, std::nullopt};
  auto choose = [&](std::vector<policy::RunFact> facts) {
    return policy::ChooseRunsToRemove(std::move(facts), bound, now, "", SIZE_MAX);
  };
  size_t removed = 0, failed = 0;
  // A run still going is kept (one line); one gone meanwhile was removed
  // by another cordon's end.
  auto count = [&](const std::string& id, const Status& s, size_t& done) {
    if (s) {
      ++done;
    } else if (s.error().err == EBUSY) {
      spdlog::warn("{}", Describe(s.error()));
    } else if (s.error().err != ENOENT) {
      spdlog::error("run {}: {}", id, Describe(s.error()));
      ++failed;
    }
  };
  for (supervisor::JournalPlace& place : supervisor::ExistingJournalPlaces(*workspace)) {
    const std::vector<supervisor::RunSummary> listed = supervisor::ListRuns(place);
    std::vector<policy::RunFact> facts;  // viewing `listed`
    for (const supervisor::RunSummary& r : listed) {
      if (r.meta) facts.push_back({r.id, r.meta->started_s});
    }
    for (const policy::RunToRemove& r : choose(std::move(facts))) {
      count(r.id, supervisor::RemoveRun(place, r.id), removed);
    }
  }
  // The run records (and their default logs) of this workspace's older runs.
  size_t records = 0;
  const std::vector<supervisor::ListedRun> listed = supervisor::ListRunRecords();
  std::vector<policy::RunFact> facts;  // viewing `listed`
  for (const supervisor::ListedRun& r : listed) {
    if (r.record && r.record->meta.workspace == *workspace) {
      facts.push_back({r.id, r.record->meta.started_s});
    }
  }
  for (const policy::RunToRemove& r : choose(std::move(facts))) {
    count(r.id, supervisor::RemoveRunRecord(r.id), records);
  }
  std::printf("%zu run journal(s) removed, %zu run record(s) removed\n", removed, records);
  return failed ? kExitCordonError : 0;
}

}  // namespace

void RegisterUndo(CLI::App& app, int& exit_code) {
  struct Opts {
    std::string workspace, run;
  };
  auto* o = new Opts;  // lives as long as the process
  CLI::App* undo = app.add_subcommand(
      "undo", "take a recoverable run back: restore what it removed or replaced, remove what it made");
  undo->add_option("--workspace", o->workspace, "the workspace (default: the current directory)");
  undo->add_option("run", o->run, "the run (default: the last one in the workspace)");
  undo->callback([o, &exit_code] { exit_code = Undo(o->workspace, o->run); });
}

void RegisterRuns(CLI::App& app, int& exit_code) {
  struct Opts {
    std::string workspace, run, older_than;
    bool all = false;
  };
  auto* o = new Opts;
  CLI::App* runs = app.add_subcommand("runs", "the runs of a workspace: what each changed");
  runs->require_subcommand(1);
  runs->add_option("--workspace", o->workspace, "the workspace (default: the current directory)");
  CLI::App* list = runs->add_subcommand("list", "the runs recorded, oldest first");
  list->add_flag("--all", o->all, "every workspace's runs in the same journal places");
  list->callback([o, &exit_code] { exit_code = List(o->workspace, o->all); });
  CLI::App* show = runs->add_subcommand("show", "what a run changed");
  show->add_option("run", o->run, "the run (default: the last one)");
  show->callback([o, &exit_code] { exit_code = Show(o->workspace, o->run); });
  CLI::App* prune = runs->add_subcommand(
      "prune", "remove the journals, records and default audit logs of this workspace's older runs");
  prune->add_option("--older-than", o->older_than, "an age: 30d, 12h, 45m, 10s")->required();
  prune->callback([o, &exit_code] { exit_code = Prune(o->workspace, o->older_than); });
}

}  // namespace cordon::tools
