#include "supervisor/private_tmp.h"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <string_view>

#include "policy/fs_plan.h"
#include "supervisor/walk/dir_listing.h"
#include "supervisor/remove_tree.h"

namespace cordon::supervisor {
namespace {

constexpr std::string_view kRunPrefix = "run-";

// The parent, made if missing; invalid unless it is a directory of this
// user that nobody else may enter (/tmp is shared: it could be anyone's).
Fd OpenBase(const std::string& base) {
  if (::mkdir(base.c_str(), 0700) != 0 && errno != EEXIST) return Fd();
  Fd fd(::open(base.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  struct stat st;
  if (!fd || ::fstat(fd.get(), &st) != 0) return Fd();
  if (!S_ISDIR(st.st_mode) || st.st_uid != ::geteuid() || (st.st_mode & 077) != 0) {
    spdlog::info("{} is not a private directory of this user: TMPDIR goes next to it", base);
    return Fd();
  }
  return fd;
}

// Takes `base` exclusively, waiting up to ~2 s for the runs being set up
// (they hold it shared for a mkdtemp and a flock) and for another sweep.
// Giving up at once would leave a dead run's directory behind whenever a
// run ends while another starts, as under many runs at once; waiting for
// ever would let a stuck cordon of this user hold every run's exit.
bool LockForSweep(int base) {
  for (int i = 0; i < 400; ++i) {
    if (::flock(base, LOCK_EX | LOCK_NB) == 0) return true;
    if (errno != EWOULDBLOCK) return false;
    ::usleep(5000);
  }
  return false;
}

// Removes the directories under `base` that no run holds: their cordon died
// before it could remove them.
void SweepUnheld(int base, const std::string& base_path) {
  if (!LockForSweep(base)) return;
  for (const policy::DirEntry& e : ListDir(base_path)) {
    const std::string& name = e.name;
    if (!name.starts_with(kRunPrefix)) continue;
    Fd dir(::openat(base, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!dir || ::flock(dir.get(), LOCK_EX | LOCK_NB) != 0) continue;  // a live run's
    std::string path = base_path + "/" + name;
    auto r = RemoveTree(path);
    if (r)
      spdlog::info("removed {}, the TMPDIR of a run that did not end", path);
    else
      spdlog::warn("could not remove {}: {}", path, Describe(r.error()));
  }
  ::flock(base, LOCK_UN);
}

}  // namespace

std::string PrivateTmpBase(const std::string& parent) {
  return parent + "/cordon-runs-" + std::to_string(::geteuid());
}

Status PrivateTmp::Create() {
  base_path_ = PrivateTmpBase(parent_);
  base_ = OpenBase(base_path_);
  if (!base_) {
    std::string tmpl = parent_ + "/cordon-run-XXXXXX";
    if (::mkdtemp(tmpl.data()) == nullptr) return Errno("mkdtemp", tmpl);
    path_ = tmpl;
    return Ok();
  }
  if (::flock(base_.get(), LOCK_SH) != 0) return Errno("flock", base_path_);
  std::string tmpl = base_path_ + "/" + std::string(kRunPrefix) + "XXXXXX";
  Status made = Ok();
  if (::mkdtemp(tmpl.data()) == nullptr) {
    made = Errno("mkdtemp", tmpl);
  } else {
    path_ = tmpl;
    lock_.reset(::open(path_.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!lock_ || ::flock(lock_.get(), LOCK_EX | LOCK_NB) != 0) made = Errno("flock", path_);
  }
  ::flock(base_.get(), LOCK_UN);
  return made;
}

PrivateTmp::~PrivateTmp() {
  if (path_.empty()) return;
  auto r = RemoveTree(path_);
  if (!r) spdlog::warn("could not remove private TMPDIR {}: {}", path_, Describe(r.error()));
  lock_.reset();
  if (base_) SweepUnheld(base_.get(), base_path_);
}

}  // namespace cordon::supervisor
