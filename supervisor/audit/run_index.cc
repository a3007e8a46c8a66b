#include "supervisor/audit/run_index.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <ctime>
#include <map>
#include <unordered_set>

#include "base/fd.h"
#include "policy/journal_run.h"
#include "supervisor/audit/run_records.h"
#include "supervisor/owned_dir.h"
#include "supervisor/walk/dir_listing.h"

namespace cordon::supervisor {
namespace {

constexpr char kIndexDir[] = ".index";
constexpr char kStamp[] = "reconciled";
constexpr int64_t kReconcileEvery = 86400;
constexpr size_t kMaxIndex = size_t{64} << 20;

int64_t MonotonicNs() {
  struct timespec ts {};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

// Takes `fd`'s flock, waiting up to ~2 s for another run's end (whose pass
// is bounded); a stuck cordon of this user must not hold every run's exit.
bool LockWithin(int fd) {
  for (int i = 0; i < 400; ++i) {
    if (::flock(fd, LOCK_EX | LOCK_NB) == 0) return true;
    if (errno != EWOULDBLOCK && errno != EINTR) return false;
    ::usleep(5000);
  }
  return false;
}

Fd OpenIndexFile(int index_dir, const std::string& name) {
  return Fd(::openat(index_dir, name.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600));
}

// Replaces the file's text in place (its flock held by the caller).
Status Rewrite(int fd, const std::string& text) {
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = ::pwrite(fd, text.data() + done, text.size() - done, static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Errno("write", "run index");
    done += static_cast<size_t>(n);
  }
  if (::ftruncate(fd, static_cast<off_t>(text.size())) != 0) return Errno("truncate", "run index");
  return Ok();
}

// Adds `ids` to the index of another workspace, when nobody holds it.
void AddToOtherIndex(int index_dir, const std::string& workspace,
                     const std::vector<std::string>& ids) {
  Fd fd = OpenIndexFile(index_dir, policy::RunIndexKey(workspace));
  if (!fd || ::flock(fd.get(), LOCK_EX | LOCK_NB) != 0) return;  // the next reconcile
  Result<std::string> text = ReadSmallFile(fd.get(), "run index", kMaxIndex);
  if (!text) return;
  std::vector<policy::RunFact> all;
  if (!text->empty()) {
    auto parsed = policy::ParseRunIndex(text.value(), workspace);
    if (!parsed) return;
    all = std::move(*parsed);
  }
  for (const std::string& id : ids) {
    if (auto f = policy::FactOfId(id)) all.push_back(*f);
  }
  (void)Rewrite(fd.get(), policy::RunIndexText(workspace, all));
}

// Indexes the records no index holds yet, when a day has passed since the
// last reconcile that went through (or none did) and no other run is at
// it. The ids of the current workspace's (`own`: those its index holds)
// go to `found_own`, the others' to their indexes. How many were indexed.
size_t ReconcileIfDue(int runs_root, int index_dir, const std::string& workspace,
                      const std::vector<policy::RunFact>& own, std::vector<std::string>& found_own,
                      int64_t now_s) {
  Fd stamp = OpenIndexFile(index_dir, kStamp);
  struct stat st;
  if (!stamp || ::fstat(stamp.get(), &st) != 0) return 0;
  if (st.st_size > 0 && now_s - st.st_mtime < kReconcileEvery) return 0;
  if (::flock(stamp.get(), LOCK_EX | LOCK_NB) != 0) return 0;
  const std::string own_key = policy::RunIndexKey(workspace);
  Fd listing(::openat(index_dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  auto files = listing ? ListNames(listing.get()) : Result<std::vector<std::string>>(Errno("open"));
  if (!files) return 0;
  std::vector<std::string> texts;  // every other index, read whole before any is viewed
  for (const std::string& name : files.value()) {
    if (name == kStamp || name == own_key) continue;
    if (auto text = ReadOwnedFileAt(index_dir, name.c_str(), kMaxIndex)) {
      texts.push_back(std::move(text.value()));
    }
  }
  std::unordered_set<std::string_view> known;
  for (const policy::RunFact& r : own) known.insert(r.id);
  for (const std::string& text : texts) {
    for (const policy::RunFact& r : policy::RunIndexRuns(text)) known.insert(r.id);
  }
  listing = Fd(::openat(runs_root, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  auto names = listing ? ListNames(listing.get()) : Result<std::vector<std::string>>(Errno("open"));
  if (!names) return 0;
  std::map<std::string, std::vector<std::string>> found;  // workspace -> ids
  size_t reads = 0;
  bool through = true;
  for (const std::string& name : names.value()) {
    if (!policy::ValidRunId(name) || known.count(name) != 0) continue;
    if (reads == kReconcileReads) {
      through = false;  // the next run goes on
      break;
    }
    ++reads;
    Result<policy::RunRecord> r = ReadRunRecordAt(runs_root, name);
    if (r) found[r->meta.workspace].push_back(name);
  }
  size_t indexed = 0;
  for (auto& [ws, ids] : found) {
    indexed += ids.size();
    if (ws == workspace) {
      found_own = std::move(ids);
    } else {
      AddToOtherIndex(index_dir, ws, ids);
    }
  }
  if (through) (void)Rewrite(stamp.get(), std::to_string(now_s) + "\n");  // and its mtime
  return indexed;
}

}  // namespace

RetainedRecords RetainRunRecords(int runs_root, const std::string& workspace,
                                 const std::string& run_id, const policy::RetentionBound& bound,
                                 int64_t now_s, size_t at_most) {
  RetainedRecords out;
  Result<Fd> index_dir =
      EnsureDirAt(runs_root, kIndexDir, ::geteuid(), RunsRoot() + "/" + kIndexDir);
  if (!index_dir) {
    out.skipped = Describe(index_dir.error());
    return out;
  }
  Fd fd = OpenIndexFile(index_dir->get(), policy::RunIndexKey(workspace));
  if (!fd) {
    out.skipped = Describe(Errno("open", RunsRoot() + "/" + kIndexDir));
    return out;
  }
  if (!LockWithin(fd.get())) {
    out.skipped = "the workspace's run index stayed locked by another cordon";
    return out;
  }
  Result<std::string> text = ReadSmallFile(fd.get(), "run index", kMaxIndex);
  if (!text) {
    out.skipped = Describe(text.error());
    return out;
  }
  // The runs view `text`, `found` and `run_id`, none changed from here on.
  auto parsed = policy::ParseRunIndex(text.value(), workspace);
  bool rewrite = !parsed;  // a new index, or not ours: written whole, ours
  std::vector<policy::RunFact> runs = parsed ? std::move(*parsed) : std::vector<policy::RunFact>{};
  std::vector<std::string> found;
  out.indexed = ReconcileIfDue(runs_root, index_dir->get(), workspace, runs, found, now_s);
  for (const std::string& id : found) {
    if (auto f = policy::FactOfId(id)) runs.push_back(*f);
  }
  rewrite = rewrite || !found.empty();
  const bool listed = std::any_of(runs.begin(), runs.end(),
                                  [&](const policy::RunFact& r) { return r.id == run_id; });
  if (!listed) {
    if (auto f = policy::FactOfId(run_id)) runs.push_back(*f);
  }

  std::vector<std::string> gone;  // at most at_most
  const int64_t start = MonotonicNs();
  for (policy::RunToRemove& r : policy::ChooseRunsToRemove(runs, bound, now_s, run_id, at_most)) {
    if (gone.size() >= 2 && MonotonicNs() - start > kRemovalBudgetNs)
      break;  // the next run goes on
    Status s = RemoveRunRecordAt(runs_root, r.id);
    if (s || s.error().err == ENOENT) {
      gone.push_back(r.id);
      if (s) out.removed.push_back(std::move(r));
    } else if (s.error().err == EBUSY) {
      ++out.still_going;
    } else if (out.failed++ == 0) {
      out.first_failure = r.id + ": " + Describe(s.error());
    }
  }
  if (!gone.empty()) {
    std::erase_if(runs, [&](const policy::RunFact& r) {
      return std::find(gone.begin(), gone.end(), r.id) != gone.end();
    });
    rewrite = true;
  }
  Status written = Ok();
  if (rewrite) {
    written = Rewrite(fd.get(), policy::RunIndexText(workspace, runs));
  } else if (!listed) {
    // The usual end: one line appended.
    const std::string line = run_id + "\n";
    if (::pwrite(fd.get(), line.data(), line.size(), static_cast<off_t>(text->size())) !=
        static_cast<ssize_t>(line.size())) {
      written = Errno("write", "run index");
    }
  }
  if (!written && out.failed++ == 0) out.first_failure = Describe(written.error());
  return out;
}

}  // namespace cordon::supervisor
