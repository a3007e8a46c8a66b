#include "supervisor/journal/journal.h"

#include <fcntl.h>
#include <linux/fs.h>
#include <spdlog/spdlog.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <ctime>

#include "supervisor/file_digest.h"
#include "supervisor/journal/undo.h"
#include "supervisor/owned_dir.h"
#include "supervisor/write_roots.h"

namespace cordon::supervisor {
namespace {

constexpr char kMeta[] = "meta.json";
constexpr char kChanges[] = "changes.jsonl";
constexpr char kEnd[] = "end.json";
constexpr char kSlots[] = "slots";

Status WriteFileAt(int dir, const char* name, const std::string& text) {
  Fd fd(::openat(dir, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (!fd) return Errno("create", name);
  return WriteAll(fd.get(), text);
}

// Copies the whole of `src` into `dst`: a reflink when the filesystem
// shares extents (btrfs, XFS), whatever the size; else, up to `max_copy`
// bytes (EFBIG past it), copy_file_range (which the kernel may turn into a
// server-side or extent copy itself).
Status CopyBytes(int src, int dst, uint64_t size, uint64_t max_copy) {
  if (::ioctl(dst, FICLONE, src) == 0) return Ok();
  if (size > max_copy) return SysError{EFBIG, "journal", "limits.journalCopyBytes"};
  loff_t in = 0, out = 0;
  while (static_cast<uint64_t>(in) < size) {
    ssize_t n = ::copy_file_range(src, &in, dst, &out, size - static_cast<uint64_t>(in), 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Errno("copy_file_range");
    if (n == 0) break;  // the file shrank meanwhile: what is there is kept
  }
  return Ok();
}

}  // namespace

policy::KeptType KeptTypeOf(mode_t mode) {
  if (S_ISREG(mode)) return policy::KeptType::kFile;
  if (S_ISDIR(mode)) return policy::KeptType::kDir;
  if (S_ISLNK(mode)) return policy::KeptType::kLink;
  return policy::KeptType::kOther;
}

std::string NewRunId() {
  struct timespec now {};
  ::clock_gettime(CLOCK_REALTIME, &now);
  struct tm tm {};
  ::gmtime_r(&now.tv_sec, &tm);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d%02d%02dT%02d%02d%02dZ-%06ld-%d", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                static_cast<long>(now.tv_nsec / 1000), static_cast<int>(::getpid()));
  return buf;
}

Result<std::shared_ptr<Journal>> Journal::Create(JournalPlace place, const policy::RunMeta& meta,
                                                 JournalLimits limits) {
  if (!policy::ValidRunId(meta.id)) return SysError{EINVAL, "journal", "bad run id " + meta.id};
  // Nothing is made yet: a run that changes nothing leaves no journal and
  // costs no inode (ext4 scans for recently deleted ones on every create:
  // the run's largest launch cost once it was measured). The place is
  // checked now, so that a run that cannot keep a journal says so at launch.
  if (::faccessat(place.runs.get(), ".", W_OK | X_OK, AT_EACCESS) != 0) {
    return Errno("write in", place.root + "/runs");
  }
  return std::shared_ptr<Journal>(new Journal(std::move(place), meta, limits));
}

Journal::Journal(JournalPlace place, policy::RunMeta meta, JournalLimits limits)
    : place_root_(std::move(place.root)),
      runs_(std::move(place.runs)),
      dir_(place_root_ + "/runs/" + meta.id),
      meta_(std::move(meta)),
      limits_(limits) {}

bool Journal::Materialize() {
  if (run_) return true;
  if (write_failed_) return false;
  auto fail = [&](const SysError& e) {
    spdlog::error("journal {}: {}", dir_, Describe(e));
    write_failed_ = true;
    return false;
  };
  if (::mkdirat(runs_.get(), meta_.id.c_str(), 0700) != 0) return fail(Errno("mkdir", meta_.id));
  Result<Fd> run = OpenDirAt(runs_.get(), meta_.id);
  if (!run) return fail(run.error());
  // Held while the run lasts: undo waits for no run, it refuses one that
  // is still going (run_reader.cc).
  if (::flock(run->get(), LOCK_EX | LOCK_NB) != 0) return fail(Errno("lock", meta_.id));
  if (::mkdirat(run->get(), kSlots, 0700) != 0) return fail(Errno("mkdir", kSlots));
  Result<Fd> slots = OpenDirAt(run->get(), kSlots);
  if (!slots) return fail(slots.error());
  if (Status s = WriteFileAt(run->get(), kMeta, policy::MetaJson(meta_)); !s) {
    return fail(s.error());
  }
  Fd changes(::openat(run->get(), kChanges,
                      O_WRONLY | O_APPEND | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (!changes) return fail(Errno("create", kChanges));
  run_ = std::move(run.value());
  slots_ = std::move(slots.value());
  changes_ = std::move(changes);
  return true;
}

JournalPlace Journal::OpenPlace() const {
  return JournalPlace{place_root_, Fd(::fcntl(runs_.get(), F_DUPFD_CLOEXEC, 0))};
}

bool Journal::Materialized() const {
  std::lock_guard<std::mutex> l(mu_);
  return static_cast<bool>(run_);
}

Journal::~Journal() = default;

void Journal::Append(const policy::Change& c) {
  names_.Apply(c);
  ++lines_;
  if (!Materialize()) return;  // said once; saves and copies now refuse
  if (Status s = WriteAll(changes_.get(), policy::ChangeLine(c) + "\n"); !s) {
    if (!write_failed_) spdlog::error("journal {}: {}", dir_, Describe(s.error()));
    write_failed_ = true;
  }
}

void Journal::AppendKept(policy::ChangeOp op, const std::string& rel, const struct stat& st,
                         uint64_t slot, uint64_t size, const char* why) {
  kept_.insert({st.st_dev, st.st_ino});
  ++kept_count_;
  policy::Change c;
  c.op = op;
  c.path = rel;
  c.ino = st.st_ino;
  c.slot = slot;
  c.type = KeptTypeOf(st.st_mode);
  c.size = size;
  c.why = why;
  Append(c);
}

bool Journal::Reserve(uint64_t bytes) {
  if (bytes_ + bytes > limits_.max_bytes) {
    if (refused_++ == 0) {
      spdlog::warn("the run's journal is full (limits.journalBytes = {}): what it kept stays "
                   "kept, and further deletes or replacements of files that existed before the "
                   "run are refused (raise the bound, or use sensitive.delete \"ask\")",
                   limits_.max_bytes);
    }
    return false;
  }
  bytes_ += bytes;
  return true;
}

Status Journal::Save(int parent, const std::string& name, const std::string& rel,
                     const struct stat& st, const char* why) {
  std::lock_guard<std::mutex> l(mu_);
  if (write_failed_) return SysError{EIO, "journal", "the journal could not be written"};
  const uint64_t bytes = static_cast<uint64_t>(st.st_blocks) * 512;
  if (!Reserve(bytes)) return SysError{ENOSPC, "journal", "limits.journalBytes"};
  if (!Materialize()) {
    bytes_ -= bytes;
    return SysError{EIO, "journal", "the journal could not be written"};
  }
  const uint64_t slot = next_slot_++;
  const std::string slot_name = std::to_string(slot);
  if (::renameat2(parent, name.c_str(), slots_.get(), slot_name.c_str(), RENAME_NOREPLACE) != 0) {
    bytes_ -= bytes;
    return Errno("rename into the journal", rel);
  }
  AppendKept(policy::ChangeOp::kSave, rel, st, slot, static_cast<uint64_t>(st.st_size), why);
  return Ok();
}

bool Journal::Kept(const struct stat& st) const {
  std::lock_guard<std::mutex> l(mu_);
  return kept_.count({st.st_dev, st.st_ino}) > 0;
}

Status Journal::Copy(int fd, const std::string& rel, const struct stat& st) {
  if (!S_ISREG(st.st_mode)) return SysError{EINVAL, "journal", rel + " is not a regular file"};
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  // The tool's descriptor may be write-only: the same inode, opened again
  // for reading.
  // O_NOATIME: keeping a copy is not a read of the tool's (the owner may).
  const std::string proc = "/proc/self/fd/" + std::to_string(fd);
  Fd src(::open(proc.c_str(), O_RDONLY | O_NOATIME | O_CLOEXEC));
  if (!src && errno == EPERM) src = Fd(::open(proc.c_str(), O_RDONLY | O_CLOEXEC));
  struct stat now;
  if (!src || ::fstat(src.get(), &now) != 0 || !SameFile(now, st)) {
    return SysError{EIO, "journal", "cannot read " + rel + " to keep it"};
  }
  std::lock_guard<std::mutex> l(mu_);
  if (kept_.count({st.st_dev, st.st_ino})) return Ok();
  if (write_failed_) return SysError{EIO, "journal", "the journal could not be written"};
  if (!Reserve(size)) return SysError{ENOSPC, "journal", "limits.journalBytes"};
  if (!Materialize()) {
    bytes_ -= size;
    return SysError{EIO, "journal", "the journal could not be written"};
  }
  const uint64_t slot = next_slot_++;
  const std::string slot_name = std::to_string(slot);
  Fd dst(::openat(slots_.get(), slot_name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                  0600));
  Status s = dst ? CopyBytes(src.get(), dst.get(), size, limits_.max_copy_bytes)
                 : Status(Errno("create", slot_name));
  if (s) {
    const struct timespec times[2] = {st.st_atim, st.st_mtim};
    if (::fchmod(dst.get(), st.st_mode & 07777) != 0 || ::futimens(dst.get(), times) != 0) {
      s = Errno("keep the mode and times of", rel);
    }
  }
  if (!s) {
    (void)::unlinkat(slots_.get(), slot_name.c_str(), 0);
    bytes_ -= size;
    if (next_slot_ == slot + 1) next_slot_ = slot;  // nothing kept: no gap in the slots
    return s;
  }
  AppendKept(policy::ChangeOp::kCopy, rel, st, slot, size, "");
  return Ok();
}

Status Journal::KeepAttr(const std::string& rel, const struct stat& st, policy::AttrKind kind,
                         const std::string& name,
                         const std::function<Result<policy::OldAttr>()>& read) {
  std::lock_guard<std::mutex> l(mu_);
  if (attrs_kept_.count({st.st_dev, st.st_ino, kind, name})) return Ok();
  if (write_failed_) return SysError{EIO, "journal", "the journal could not be written"};
  Result<policy::OldAttr> got = read();
  if (!got) return got.error();
  const policy::OldAttr& old = got.value();
  const uint64_t size = old.value.size();
  if (size > limits_.max_copy_bytes) return SysError{EFBIG, "journal", "limits.journalCopyBytes"};
  if (!Reserve(size)) return SysError{ENOSPC, "journal", "limits.journalBytes"};
  if (!Materialize()) {
    bytes_ -= size;
    return SysError{EIO, "journal", "the journal could not be written"};
  }
  policy::Change c;
  c.op = policy::ChangeOp::kAttr;
  c.path = rel;
  c.ino = st.st_ino;
  c.dev = st.st_dev;
  c.type = KeptTypeOf(st.st_mode);
  c.attr = old;
  Append(c);
  if (write_failed_) {
    bytes_ -= size;
    return SysError{EIO, "journal", "the journal could not be written"};
  }
  attrs_kept_.insert({st.st_dev, st.st_ino, kind, name});
  ++attrs_count_;
  return Ok();
}

void Journal::Created(const std::string& rel, const struct stat& st) {
  std::lock_guard<std::mutex> l(mu_);
  Append({policy::ChangeOp::kCreate, rel, {}, st.st_ino, 0, KeptTypeOf(st.st_mode), 0, {}});
}

void Journal::Moved(const std::string& from, const std::string& to, const struct stat& st) {
  std::lock_guard<std::mutex> l(mu_);
  Append({policy::ChangeOp::kMove, from, to, st.st_ino, 0, KeptTypeOf(st.st_mode), 0, {}});
}

void Journal::Dropped(const std::string& rel, const struct stat& st) {
  std::lock_guard<std::mutex> l(mu_);
  Append({policy::ChangeOp::kDrop, rel, {}, st.st_ino, 0, KeptTypeOf(st.st_mode), 0, {}});
}

void Journal::Swapped(const std::string& a, const std::string& b, const struct stat& a_st,
                      const struct stat& b_st) {
  std::lock_guard<std::mutex> l(mu_);
  policy::Change c{policy::ChangeOp::kSwap, a, b, a_st.st_ino, 0, KeptTypeOf(a_st.st_mode), 0, {}};
  c.other_ino = b_st.st_ino;
  Append(c);
}

JournalStats Journal::Stats() const {
  std::lock_guard<std::mutex> l(mu_);
  return {lines_, kept_count_, refused_, attrs_count_};
}

Status Journal::Seal(int workspace_fd, int exit_status) {
  std::lock_guard<std::mutex> l(mu_);
  if (sealed_) return Ok();
  sealed_ = true;
  if (!Materialize()) return SysError{EIO, "journal", "the journal could not be written"};
  policy::RunEnd end;
  end.ended_s = std::time(nullptr);
  end.exit_status = exit_status;
  end.changes = lines_;
  end.refused_at_bound = refused_;
  end.names = ObserveNames(workspace_fd, {names_.names().begin(), names_.names().end()});
  Fd changes(::openat(run_.get(), kChanges, O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
  if (!changes) return Errno("open", kChanges);
  auto digest = Sha256Fd(changes.get());
  if (!digest) return digest.error();
  end.changes_sha256 = digest.value();
  return ReplaceFileAt(run_.get(), kEnd, policy::EndJson(end));
}

}  // namespace cordon::supervisor
