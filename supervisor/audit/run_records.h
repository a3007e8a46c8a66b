// The run records on disk (policy/run_record.h): one directory a run,
//
//   ${XDG_STATE_HOME:-~/.local/state}/cordon/runs/<id>/run.json
//   ${XDG_STATE_HOME:-~/.local/state}/cordon/runs/<id>/audit.jsonl  (the default log)
//
// owned by the user, mode 0700, never a link; the run's tool is denied all
// of it. `cordon runs` and `cordon audit verify` read them back. A run holds
// its directory locked (flock LOCK_EX) while it lasts, so that nothing
// removes the record of a run still going (run_index.h, `cordon runs prune`).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "base/fd.h"
#include "base/result.h"
#include "policy/run_record.h"

namespace cordon::supervisor {

// DefaultStateHome() + "/cordon/runs".
std::string RunsRoot();

struct RunDir {
  std::string path;  // RunsRoot()/<id>
  Fd fd;             // held locked until the run's cordon exits
  Fd root;           // RunsRoot()
  Fd record;  // run.json, once written
};

// Makes RunsRoot()/<id> (creating the root, 0700, as OpenOwnedDirPath) and
// locks it.
Result<RunDir> CreateRunDir(const std::string& id);

// run.json in `dir`: made at the first call, rewritten in place at the
// next (the record only grows, from the run's start to its end). In place,
// not a new file renamed over it: every inode a launch makes costs ext4 a
// scan for recently deleted ones, the largest part of a run's own launch
// cost once measured. A reader that meets a record being rewritten sees
// one that does not parse, as it would after a crash: `runs list` says so.
Status WriteRunRecord(RunDir& dir, const policy::RunRecord& r);

struct ListedRun {
  std::string id;
  std::string dir;
  std::optional<policy::RunRecord> record;  // absent: unreadable (error says why)
  std::string error;
};

// Every run recorded under RunsRoot(), oldest first; none when it is missing.
std::vector<ListedRun> ListRunRecords();

// RunsRoot() when it exists, checked (owned by us, a directory, no link).
Result<Fd> OpenRunsRoot();

// The directory of run `id` (a checked id, no link), open.
Result<Fd> OpenRunDir(const std::string& id);

// The record of run `id` in the runs root `root`, read and checked.
Result<policy::RunRecord> ReadRunRecordAt(int root, const std::string& id);

// The record of run `id`, read and checked.
Result<policy::RunRecord> LoadRunRecord(const std::string& id);

// Removes the run's directory: its record, its default log and the control
// socket a killed run left; nothing else. EBUSY (nothing removed) while the
// run is still going; ENOTEMPTY (the directory left, with what cordon did
// not make) when it holds anything else; ENOENT when there is no such run.
Status RemoveRunRecordAt(int root, const std::string& id);
Status RemoveRunRecord(const std::string& id);

}  // namespace cordon::supervisor
