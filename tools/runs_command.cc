#include "tools/runs_command.h"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <climits>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <optional>

#include "policy/undo_plan.h"
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
  for (supervisor::JournalPlace& place : places) {
    for (const supervisor::RunSummary& r : supervisor::ListRuns(place)) {
      if (!id.empty()) {
        if (r.id == id) return Found{std::move(place), r.id};
        continue;
      }
      if (!r.meta || r.undone) continue;
      if (r.meta->workspace != workspace) {
        if (r.meta->workspace_dev == ws.st_dev && r.meta->workspace_ino == ws.st_ino) {
          moved_from = r.meta->workspace;
        }
        continue;
      }
      if (r.meta->started_s >= best_time) {
        best_time = r.meta->started_s;
        best = Found{supervisor::JournalPlace{place.root, Fd(::dup(place.runs.get()))}, r.id};
      }
    }
  }
  if (best) return best;
  if (!id.empty()) {
    spdlog::error("no run {} recorded for {} (cordon runs list shows the runs)", id, workspace);
  } else if (!moved_from.empty()) {
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

int List(const std::string& workspace_arg, bool all) {
  auto workspace = WorkspaceOf(workspace_arg);
  if (!workspace) return kExitCordonError;
  for (supervisor::JournalPlace& place : supervisor::ExistingJournalPlaces(*workspace)) {
    for (const supervisor::RunSummary& r : supervisor::ListRuns(place)) {
      if (!r.meta) {
        std::printf("%s  (unreadable)  %s\n", r.id.c_str(), r.place.c_str());
        continue;
      }
      if (!all && r.meta->workspace != *workspace) continue;
      const char* state = r.undone ? "undone" : r.sealed ? "ended" : "unfinished";
      std::printf("%s  %s  %-10s  %s  %s\n", r.id.c_str(), When(r.meta->started_s).c_str(), state,
                  r.meta->workspace.c_str(), Command(r.meta->argv).c_str());
    }
  }
  return 0;
}

const char* Verb(const policy::Change& c) {
  switch (c.op) {
    case policy::ChangeOp::kSave:
      return c.why == "truncate" ? "overwritten (old kept)" : c.why == "replace" ? "replaced (old kept)" : "deleted (kept)";
    case policy::ChangeOp::kCopy: return "modified (copy kept)";
    case policy::ChangeOp::kCreate: return "created";
    case policy::ChangeOp::kMove: return "renamed";
    case policy::ChangeOp::kDrop: return "removed (made in the run)";
    case policy::ChangeOp::kSwap: return "exchanged";
  }
  return "?";
}

int Show(const std::string& workspace_arg, const std::string& id) {
  auto run = OpenRun(workspace_arg, id, nullptr);
  if (!run) return kExitCordonError;
  std::printf("run %s  %s  %s\n  workspace %s\n  command %s\n", run->meta.id.c_str(),
              When(run->meta.started_s).c_str(),
              run->undone ? "undone" : run->end ? "ended" : "unfinished",
              run->meta.workspace.c_str(), Command(run->meta.argv).c_str());
  for (const policy::Change& c : run->changes) {
    if (c.op == policy::ChangeOp::kMove || c.op == policy::ChangeOp::kSwap) {
      std::printf("  %-28s %s -> %s\n", Verb(c), c.path.c_str(), c.to.c_str());
    } else {
      std::printf("  %-28s %s\n", Verb(c), c.path.c_str());
    }
  }
  return 0;
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

int Prune(const std::string& workspace_arg, const std::string& older_than) {
  const int64_t age = ParseAge(older_than);
  if (age < 0) {
    spdlog::error("--older-than {}: give an age such as 30d, 12h, 45m or 10s", older_than);
    return kExitCordonError;
  }
  auto workspace = WorkspaceOf(workspace_arg);
  if (!workspace) return kExitCordonError;
  const int64_t cutoff = std::time(nullptr) - age;
  size_t removed = 0, failed = 0;
  for (supervisor::JournalPlace& place : supervisor::ExistingJournalPlaces(*workspace)) {
    for (const supervisor::RunSummary& r : supervisor::ListRuns(place)) {
      if (!r.meta || r.meta->started_s > cutoff) continue;
      if (Status s = supervisor::RemoveRun(place, r.id); !s) {
        spdlog::error("run {}: {}", r.id, Describe(s.error()));
        ++failed;
      } else {
        ++removed;
      }
    }
  }
  std::printf("%zu run journal(s) removed\n", removed);
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
  CLI::App* runs = app.add_subcommand("runs", "the recoverable runs of a workspace");
  runs->require_subcommand(1);
  runs->add_option("--workspace", o->workspace, "the workspace (default: the current directory)");
  CLI::App* list = runs->add_subcommand("list", "the runs recorded, oldest first");
  list->add_flag("--all", o->all, "every workspace's runs in the same journal places");
  list->callback([o, &exit_code] { exit_code = List(o->workspace, o->all); });
  CLI::App* show = runs->add_subcommand("show", "what a run changed");
  show->add_option("run", o->run, "the run (default: the last one)");
  show->callback([o, &exit_code] { exit_code = Show(o->workspace, o->run); });
  CLI::App* prune = runs->add_subcommand("prune", "remove the journals of older runs");
  prune->add_option("--older-than", o->older_than, "an age: 30d, 12h, 45m, 10s")->required();
  prune->callback([o, &exit_code] { exit_code = Prune(o->workspace, o->older_than); });
}

}  // namespace cordon::tools
