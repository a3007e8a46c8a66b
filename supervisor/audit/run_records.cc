#include "supervisor/audit/run_records.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>

#include "supervisor/owned_dir.h"
#include "supervisor/walk/dir_listing.h"
#include "supervisor/workspace_store.h"

namespace cordon::supervisor {
namespace {

constexpr char kRecord[] = "run.json";
constexpr size_t kMaxRecord = 1 << 20;
// What a run's directory holds: its record, its default log, and the
// control socket of a run whose cordon was killed (control_socket.h).
constexpr const char* kRunFiles[] = {kRecord, "audit.jsonl", "control.sock"};

Result<policy::RunRecord> ReadRecord(int run_dir, const std::string& id) {
  auto text = ReadOwnedFileAt(run_dir, kRecord, kMaxRecord);
  if (!text) return text.error();
  std::string why;
  auto r = policy::ParseRunRecord(text.value(), &why);
  if (!r) return SysError{EBADMSG, "run record", id + ": " + why};
  if (r->meta.id != id) return SysError{EBADMSG, "run record", id + ": names run " + r->meta.id};
  return std::move(*r);
}

}  // namespace

std::string RunsRoot() { return DefaultStateHome() + "/cordon/runs"; }

// The root when it exists (never created here).
Result<Fd> OpenRunsRoot() {
  Fd fd(::open(RunsRoot().c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!fd) return Errno("open", RunsRoot());
  if (Status s = CheckOwned(fd.get(), ::geteuid(), RunsRoot(), S_IFDIR); !s) return s.error();
  return fd;
}

Result<RunDir> CreateRunDir(const std::string& id) {
  if (!policy::ValidRunId(id)) return SysError{EINVAL, "run record", "bad run id " + id};
  if (!StateHomeUsable()) {
    return SysError{ENOENT, "run records", "the state home's directory does not exist"};
  }
  Result<OwnedDir> root = OpenOwnedDirPath(RunsRoot(), "run records");
  if (!root) return root.error();
  if (::mkdirat(root->fd.get(), id.c_str(), 0700) != 0) return Errno("mkdir", root->path + "/" + id);
  Result<Fd> dir = OpenDirAt(root->fd.get(), id);
  if (!dir) return dir.error();
  // Held until cordon exits: no retention pass or prune removes a run still going.
  if (::flock(dir->get(), LOCK_EX | LOCK_NB) != 0) return Errno("lock", root->path + "/" + id);
  return RunDir{root->path + "/" + id, std::move(dir.value()), std::move(root->fd), Fd()};
}

Status WriteRunRecord(RunDir& dir, const policy::RunRecord& r) {
  // Not fsync'd, as the default log is not (audit_log.h): 4 ms a run.
  const std::string text = policy::RunRecordJson(r);
  if (!dir.record) {
    dir.record = Fd(::openat(dir.fd.get(), kRecord,
                             O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
    if (!dir.record) return Errno("create", dir.path + "/" + kRecord);
  } else if (::lseek(dir.record.get(), 0, SEEK_SET) != 0) {
    return Errno("seek", dir.path + "/" + kRecord);
  }
  if (Status s = WriteAll(dir.record.get(), text); !s) return s;
  if (::ftruncate(dir.record.get(), static_cast<off_t>(text.size())) != 0) {
    return Errno("truncate", dir.path + "/" + kRecord);
  }
  return Ok();
}

std::vector<ListedRun> ListRunRecords() {
  std::vector<ListedRun> out;
  Result<Fd> root = OpenRunsRoot();
  if (!root) return out;
  auto names = ListNames(root->get());
  if (!names) return out;
  for (const std::string& name : names.value()) {
    if (!policy::ValidRunId(name)) continue;
    ListedRun l;
    l.id = name;
    l.dir = RunsRoot() + "/" + name;
    Result<Fd> dir = OpenDirAt(root->get(), name);
    Result<policy::RunRecord> r = dir ? ReadRecord(dir->get(), name) : Result<policy::RunRecord>(dir.error());
    if (r) l.record = std::move(r.value());
    else l.error = Describe(r.error());
    out.push_back(std::move(l));
  }
  std::sort(out.begin(), out.end(), [](const ListedRun& a, const ListedRun& b) {
    const int64_t ta = a.record ? a.record->meta.started_s : 0;
    const int64_t tb = b.record ? b.record->meta.started_s : 0;
    return ta != tb ? ta < tb : a.id < b.id;
  });
  return out;
}

Result<Fd> OpenRunDir(const std::string& id) {
  if (!policy::ValidRunId(id)) return SysError{EINVAL, "run", "\"" + id + "\" is not a run id"};
  const SysError none{ENOENT, "run", "no run " + id + " is recorded in " + RunsRoot()};
  Result<Fd> root = OpenRunsRoot();
  if (!root) return root.error().err == ENOENT ? none : root.error();
  Result<Fd> dir = OpenDirAt(root->get(), id);
  if (!dir) return none;
  return dir;
}

Result<policy::RunRecord> LoadRunRecord(const std::string& id) {
  Result<Fd> dir = OpenRunDir(id);
  if (!dir) return dir.error();
  return ReadRecord(dir->get(), id);
}

Result<policy::RunRecord> ReadRunRecordAt(int root, const std::string& id) {
  if (!policy::ValidRunId(id)) return SysError{EINVAL, "run", "\"" + id + "\" is not a run id"};
  Result<Fd> dir = OpenDirAt(root, id);
  if (!dir) return dir.error();
  return ReadRecord(dir->get(), id);
}

Status RemoveRunRecordAt(int root, const std::string& id) {
  if (!policy::ValidRunId(id)) return SysError{EINVAL, "run", "\"" + id + "\" is not a run id"};
  const std::string path = RunsRoot() + "/" + id;
  Result<Fd> dir = OpenDirAt(root, id);
  if (!dir) return dir.error();
  // The run's own lock (CreateRunDir), held while we remove.
  if (::flock(dir->get(), LOCK_EX | LOCK_NB) != 0) {
    return SysError{EBUSY, "run", id + " is still going: its record is kept"};
  }
  for (const char* name : kRunFiles) {
    if (::unlinkat(dir->get(), name, 0) != 0 && errno != ENOENT)
      return Errno("unlink", path + "/" + name);
  }
  if (::unlinkat(root, id.c_str(), AT_REMOVEDIR) != 0) {
    if (errno == ENOTEMPTY || errno == EEXIST) {
      return SysError{ENOTEMPTY, "run", path + " holds files cordon did not make: left as it is"};
    }
    return Errno("rmdir", path);
  }
  return Ok();
}

Status RemoveRunRecord(const std::string& id) {
  Result<Fd> root = OpenRunsRoot();
  if (!root) return root.error();
  return RemoveRunRecordAt(root->get(), id);
}

}  // namespace cordon::supervisor
