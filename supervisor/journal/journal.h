// A recoverable run's journal (issue 26), as the supervisor writes it: a
// file of the user's that the run removes or replaces is moved into it
// (rename(2), O(1), the inode kept), one written in place is copied into it
// first (a reflink where the filesystem has them), and every change to a
// name in the workspace is recorded (policy/journal_change.h), so that
// `cordon undo` can take the run back and `cordon runs show` say what it did.
//
//   PLACE/runs/<id>/meta.json      the run (policy/journal_run.h)
//   PLACE/runs/<id>/changes.jsonl  the changes, in the order they were made
//   PLACE/runs/<id>/slots/<n>      what was kept
//   PLACE/runs/<id>/end.json       how each name stood when the run ended
//
// A metadata change of a file of the user's keeps the old value of what it
// alters in its record (policy/attr_keep.h), once per file and attribute.
//
// Bounded: limits.journalBytes for what one run keeps, limits.journalCopyBytes
// for one copy (not a reflink). Past a bound nothing is dropped, of this run
// or an earlier one: past the journal's the change is refused, past the
// copy bound the write is asked about (emulator_journal.cc).
//
// Thread-safe: the emulator's threads record concurrently; a save and its
// record are made under one lock, so the record's order is the order of
// the renames.
#pragma once

#include <sys/stat.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "base/fd.h"
#include "base/result.h"
#include "policy/journal_change.h"
#include "policy/journal_run.h"
#include "policy/undo_plan.h"
#include "supervisor/journal/journal_place.h"

namespace cordon::supervisor {

struct JournalLimits {
  uint64_t max_bytes = uint64_t{4} << 30;       // limits.journalBytes
  uint64_t max_copy_bytes = uint64_t{64} << 20;  // limits.journalCopyBytes
};

struct JournalStats {
  uint64_t changes = 0;           // records written
  uint64_t kept = 0;              // saves and copies
  uint64_t refused_at_bound = 0;  // saves and copies refused at limits.journalBytes
  uint64_t attrs = 0;             // old attribute values recorded
};

class Journal {
 public:
  // The journal of run meta.id in `place` for the workspace at
  // meta.workspace. runs/<meta.id> is made on the first change; EACCES now
  // when `place` cannot take it.
  static Result<std::shared_ptr<Journal>> Create(JournalPlace place, const policy::RunMeta& meta,
                                                 JournalLimits limits);
  ~Journal();
  Journal(const Journal&) = delete;
  Journal& operator=(const Journal&) = delete;

  const std::string& dir() const { return dir_; }
  // Whether dir() exists: the run changed something, or tried to.
  bool Materialized() const;
  const std::string& place() const { return place_root_; }
  // The place again, for the end-of-run sweep of older journals
  // (tools/run_retention.cc): its runs/ on a new fd (invalid if dup fails).
  JournalPlace OpenPlace() const;
  const policy::RunMeta& meta() const { return meta_; }
  const JournalLimits& limits() const { return limits_; }

  // Moves `name` in `parent` (lstat `st`, at workspace-relative `rel`) into
  // the journal. ENOSPC when the bound would be passed (nothing moved).
  Status Save(int parent, const std::string& name, const std::string& rel, const struct stat& st,
              const char* why);
  // Keeps a copy of the regular file `fd` (at `rel`, fstat `st`) before it
  // is written in place: once per inode a run. A reflink whatever the size
  // where the filesystem shares extents; else a copy, EFBIG past the copy
  // bound (the caller asks instead), ENOSPC past the journal's (nothing kept).
  Status Copy(int fd, const std::string& rel, const struct stat& st);
  // Whether the file's old content is kept already (Copy, or it was saved).
  bool Kept(const struct stat& st) const;
  // Records the value attribute `kind` (`name`: an xattr's) of the file at
  // `rel` (`st`: its identity and type; existing before the run) has before
  // a metadata change alters it, as `read` reads it: once per file and
  // attribute a run (the first old value is the one undo sets back), later
  // calls reading and recording nothing. An xattr's value counts toward
  // limits.journalBytes (ENOSPC past it) and one larger than
  // limits.journalCopyBytes is not kept (EFBIG); then, or when `read`
  // fails, nothing is recorded and the caller leaves the file unchanged.
  Status KeepAttr(const std::string& rel, const struct stat& st, policy::AttrKind kind,
                  const std::string& name, const std::function<Result<policy::OldAttr>()>& read);

  void Created(const std::string& rel, const struct stat& st);
  void Moved(const std::string& from, const std::string& to, const struct stat& st);
  void Dropped(const std::string& rel, const struct stat& st);
  // `a` and `b` exchanged: `a_st` was at a (now at b), `b_st` at b.
  void Swapped(const std::string& a, const std::string& b, const struct stat& a_st,
               const struct stat& b_st);

  // The run ended with `exit_status`: how each name stands now, beneath
  // `workspace_fd` (no link followed), goes to end.json with the digest of
  // the changes. Once; later calls do nothing.
  Status Seal(int workspace_fd, int exit_status);

  JournalStats Stats() const;

 private:
  Journal(JournalPlace place, policy::RunMeta meta, JournalLimits limits);
  // With mu_ held: makes dir() on first use. False when it cannot be made
  // or written (said once, and write_failed_ is set).
  bool Materialize();
  void Append(const policy::Change& c);  // with mu_ held
  // With mu_ held: `st`, at `rel`, is kept as `slot` (a save or a copy).
  void AppendKept(policy::ChangeOp op, const std::string& rel, const struct stat& st,
                  uint64_t slot, uint64_t size, const char* why);
  bool Reserve(uint64_t bytes);           // with mu_ held

  std::string place_root_;
  Fd runs_;
  Fd run_;
  Fd slots_;
  Fd changes_;
  std::string dir_;
  policy::RunMeta meta_;
  JournalLimits limits_;
  mutable std::mutex mu_;
  uint64_t next_slot_ = 1;
  uint64_t bytes_ = 0;
  uint64_t lines_ = 0;
  uint64_t refused_ = 0;
  uint64_t kept_count_ = 0;
  bool sealed_ = false;
  bool write_failed_ = false;
  std::set<std::pair<dev_t, ino_t>> kept_;
  // KeepAttr's: the file, the attribute and an xattr's name.
  std::set<std::tuple<dev_t, ino_t, policy::AttrKind, std::string>> attrs_kept_;
  uint64_t attrs_count_ = 0;
  policy::NameTracker names_;  // where each changed name stands now
};

// A run id for a run starting now: UTC time to the second, its microseconds
// and the pid ("20261206T071500Z-042137-1234"). Ids sort as their runs
// began: `cordon undo` takes the newest run first and retention keeps the
// newest, and two runs in one second are told apart by the microseconds
// (fixed width), never by the pids, which wrap and differ in width.
std::string NewRunId();

// The type an lstat mode records.
policy::KeptType KeptTypeOf(mode_t mode);

}  // namespace cordon::supervisor
