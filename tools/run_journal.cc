#include "tools/run_journal.h"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <set>
#include <sstream>

#include "supervisor/remove_tree.h"

namespace cordon::tools {

namespace {

// A mount point as /proc/self/mountinfo writes it: space, tab, newline
// and backslash as octal escapes.
std::string UnescapeMountPoint(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 3 < s.size()) {
      out += static_cast<char>(std::strtol(s.substr(i + 1, 3).c_str(), nullptr, 8));
      i += 3;
    } else {
      out += s[i];
    }
  }
  return out;
}

// Every journal place there is on this machine for this user, realpaths:
// the state home's, and .cordon-journal-UID at the top of every mount (a
// run's workspace may be on one mount while an earlier run's journal sits
// on another that this run is granted). `missing` gets this workspace's
// candidates that do not exist yet (its parent's realpath and the name):
// denied too, so a tool cannot make one it could read when a later run
// puts its journal there.
std::set<std::string> JournalPlacesOnMachine(const std::string& workspace,
                                             std::set<std::string>& missing) {
  std::set<std::string> out;
  auto add = [&](const std::string& path) {
    // Where lstat fails realpath does too (the same lookups, and realpath
    // also needs the last one to exist): one syscall for the usual answer,
    // no journal on that mount, where realpath reads every component.
    struct stat st;
    char real[PATH_MAX];
    if (::lstat(path.c_str(), &st) == 0 && ::realpath(path.c_str(), real) != nullptr) {
      out.insert(real);
      return true;
    }
    return false;
  };
  for (const std::string& c : supervisor::JournalCandidates(workspace)) {
    if (add(c)) continue;
    const size_t slash = c.rfind('/');
    char parent[PATH_MAX];
    if (slash == std::string::npos || ::realpath(c.substr(0, slash).c_str(), parent) == nullptr) {
      continue;
    }
    const std::string dir = parent;
    missing.insert((dir == "/" ? "" : dir) + c.substr(slash));
  }
  const std::string name = "/.cordon-journal-" + std::to_string(::geteuid());
  std::ifstream mountinfo("/proc/self/mountinfo");
  for (std::string line; std::getline(mountinfo, line);) {
    std::istringstream fields(line);
    std::string id, parent, devno, root, point;
    if (!(fields >> id >> parent >> devno >> root >> point)) continue;
    point = UnescapeMountPoint(point);
    add(point == "/" ? name : point + name);
  }
  return out;
}

// The tool may not read, change, list or link into any run's journal, in
// any run: a read-only run or one that keeps no journal is denied them as
// much as a recoverable one. Unlisted: a grant of a directory above a
// journal does not let the tool list it (policy/fs_plan.h). A grant at or
// beneath a journal place is dropped, whoever wrote it.
void DenyJournals(policy::Policy& p) {
  std::set<std::string> missing;
  const std::set<std::string> places = JournalPlacesOnMachine(p.workspace, missing);
  for (const std::string& place : places) {
    std::erase_if(p.paths, [&](const policy::PathRule& r) {
      if (r.access == policy::Access::kDenied || !policy::IsWithin(r.path, place)) return false;
      spdlog::warn("{} ({}) is in the run journals ({}): not granted", r.path, r.source, place);
      return true;
    });
    p.paths.push_back(policy::PathRule::DeniedUnlisted(place, "the run journals"));
  }
  for (const std::string& place : missing) {
    p.paths.push_back({place, policy::Access::kDenied, false, "the run journals"});
  }
}

std::shared_ptr<supervisor::Journal> OpenJournal(policy::Policy& p,
                                                 const std::vector<std::string>& argv,
                                                 const std::string& run_id) {
  if (p.profile != policy::Profile::kWorkspaceWrite ||
      p.sensitive_delete != policy::SensitiveDelete::kRecoverable) {
    return nullptr;
  }
  auto fall_back = [&](const std::string& why) -> std::shared_ptr<supervisor::Journal> {
    spdlog::warn(
        "this run is not recoverable ({}): deleting or replacing a file that existed "
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
  policy::RunMeta meta;
  meta.id = run_id;
  meta.workspace = p.workspace;
  meta.workspace_dev = ws.st_dev;
  meta.workspace_ino = ws.st_ino;
  meta.started_s = std::time(nullptr);
  meta.argv = argv;
  supervisor::JournalLimits limits{p.limits.max_journal_bytes, p.limits.max_journal_copy_bytes};
  auto journal = supervisor::Journal::Create(std::move(place.value()), meta, limits);
  if (!journal) return fall_back("cannot create its journal: " + Describe(journal.error()));
  spdlog::debug("run {}: journal {}", meta.id, journal.value()->dir());
  return journal.value();
}

}  // namespace

std::shared_ptr<supervisor::Journal> OpenRunJournal(policy::Policy& p,
                                                    const std::vector<std::string>& argv,
                                                    const std::string& run_id) {
  std::shared_ptr<supervisor::Journal> journal = OpenJournal(p, argv, run_id);
  DenyJournals(p);
  return journal;
}

void CloseRunJournal(const std::shared_ptr<supervisor::Journal>& j, const policy::Policy& p,
                     int status) {
  if (!j) return;
  const supervisor::JournalStats stats = j->Stats();
  if (stats.changes == 0) {
    if (!j->Materialized()) return;
    if (auto removed = supervisor::RemoveTree(j->dir()); !removed) {
      spdlog::warn("cannot remove the empty journal {}: {}", j->dir(), Describe(removed.error()));
    }
    return;
  }
  Fd ws(::open(p.workspace.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  Status sealed = ws ? j->Seal(ws.get(), status) : Status(Errno("open", p.workspace));
  if (!sealed) {
    spdlog::error(
        "run {}: the journal's end could not be written ({}); cordon undo can still "
        "take it back, without telling later changes apart",
        j->meta().id, Describe(sealed.error()));
  }
  if (stats.kept > 0 || stats.attrs > 0) {
    spdlog::info(
        "run {} kept {} file(s) and {} old metadata value(s) of yours before changing them: "
        "`cordon runs show {}` lists its changes, `cordon undo {}` takes them back",
        j->meta().id, stats.kept, stats.attrs, j->meta().id, j->meta().id);
  }
  if (stats.refused_at_bound > 0) {
    spdlog::warn(
        "run {}: {} change(s) were refused because the journal reached its bound "
        "(limits.journalBytes)",
        j->meta().id, stats.refused_at_bound);
  }
}

}  // namespace cordon::tools
