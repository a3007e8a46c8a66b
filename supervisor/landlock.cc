#include "supervisor/landlock.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <vector>

#include "supervisor/uapi.h"

namespace cordon::supervisor {
namespace {

using namespace cordon::uapi;

constexpr uint64_t kFileRights = kFsExecute | kFsWriteFile | kFsReadFile | kFsTruncate | kFsIoctlDev;

// Whether `fd` is a directory, in `*is_dir`; false (errno set) when fstat fails.
bool StatIsDir(int fd, bool* is_dir) {
  struct stat st;
  if (::fstat(fd, &st) != 0) return false;
  *is_dir = S_ISDIR(st.st_mode);
  return true;
}

int AddRule(int ruleset, uint64_t rights, int path_fd) {
  LandlockPathBeneathAttr rule{rights, path_fd};
  return static_cast<int>(
      ::syscall(kNrLandlockAddRule, ruleset, kLandlockRulePathBeneath, &rule, 0));
}

// Closes `fds` and empties it, one close_range per run of consecutive
// numbers: every number in such a run is one of ours, open and not yet
// closed, so no other thread's fd can be in it.
void CloseAll(std::vector<Fd>& fds) {
  std::vector<int> nums;
  nums.reserve(fds.size());
  for (Fd& f : fds) nums.push_back(f.release());
  fds.clear();
  std::sort(nums.begin(), nums.end());
  for (size_t i = 0; i < nums.size();) {
    size_t j = i;
    while (j + 1 < nums.size() && nums[j + 1] == nums[j] + 1) ++j;
    if (i == j || ::syscall(kNrCloseRange, nums[i], nums[j], 0) != 0) {
      for (size_t k = i; k <= j; ++k) ::close(nums[k]);
    }
    i = j + 1;
  }
}

// Held O_PATH fds before a CloseAll: well under the usual 1024 soft limit.
constexpr size_t kHeldPathFds = 256;

}  // namespace

int ProbeLandlockAbi() {
  long abi = ::syscall(kNrLandlockCreateRuleset, nullptr, 0, kLandlockCreateRulesetVersion);
  return abi < 0 ? 0 : static_cast<int>(abi);
}

uint64_t HandledFsRights(int abi) {
  if (abi <= 0) return 0;
  uint64_t r = (kFsMakeSym << 1) - 1;  // ABI 1: bits 0..12
  if (abi >= 2) r |= kFsRefer;
  if (abi >= 3) r |= kFsTruncate;
  if (abi >= 5) r |= kFsIoctlDev;
  return r;
}

uint64_t RightsFor(const policy::Grant& g, int abi, bool is_dir) {
  uint64_t r = 0;
  if (g.list_only) {
    r = kFsReadDir;
  } else if (g.access == policy::Access::kReadOnly) {
    r = kFsReadFile | kFsReadDir | (g.executable ? kFsExecute : 0);
  } else if (g.access == policy::Access::kReadWrite) {
    // Everything but device nodes; execution of workspace files is allowed
    // (scripts, freshly built programs), which Landlock still confines.
    r = HandledFsRights(abi) & ~(kFsMakeChar | kFsMakeBlock);
    if (!g.executable) r &= ~kFsExecute;
  }
  if (!is_dir) r &= kFileRights;
  return r & HandledFsRights(abi);
}

Result<LandlockRuleset> BuildRuleset(const std::vector<policy::Grant>& grants,
                                     const LandlockConfig& cfg) {
  LandlockRulesetAttr attr{};
  attr.handled_access_fs = HandledFsRights(cfg.abi);
  if (cfg.restrict_tcp && cfg.abi >= 4) attr.handled_access_net = kNetBindTcp | kNetConnectTcp;
  if (cfg.scope && cfg.abi >= 6) attr.scoped = kScopeAbstractUnixSocket | kScopeSignal;
  // The struct grew with the ABI; pass only the part this kernel knows.
  size_t size = cfg.abi >= 6 ? sizeof(attr) : cfg.abi >= 4 ? 16 : 8;
  long fd = ::syscall(kNrLandlockCreateRuleset, &attr, size, 0);
  if (fd < 0) return Errno("landlock_create_ruleset");
  LandlockRuleset rs{Fd(static_cast<int>(fd)), {}};
  // The O_PATH fds stay open until the end and go in one close_range when
  // they are consecutive (a syscall costs ~2 µs here, and /etc alone is
  // ~150 rules): see CloseAll.
  std::vector<Fd> paths;
  paths.reserve(std::min(grants.size(), kHeldPathFds));
  for (const policy::Grant& g : grants) {
    Fd path(::open(g.path.c_str(), O_PATH | O_CLOEXEC));
    if (!path) {
      if (errno != ENOENT) rs.skipped.push_back(g.path + ": " + Describe(Errno("open")));
      continue;
    }
    // The listing's d_type spares a stat.
    bool is_dir = g.type == policy::EntryType::kDirectory;
    if (g.type == policy::EntryType::kUnknown && !StatIsDir(path.get(), &is_dir)) {
      return Errno("fstat", g.path);
    }
    if (uint64_t rights = RightsFor(g, cfg.abi, is_dir);
        rights != 0 && AddRule(rs.fd.get(), rights, path.get()) != 0) {
      // A directory in the listing that is a file by now: the kernel refuses
      // directory rights on it (EINVAL), and the stat decides.
      bool still_dir = true;
      if (errno != EINVAL || !is_dir || !StatIsDir(path.get(), &still_dir) || still_dir) {
        return Errno("landlock_add_rule", g.path);
      }
      rights = RightsFor(g, cfg.abi, false);
      if (rights != 0 && AddRule(rs.fd.get(), rights, path.get()) != 0) {
        return Errno("landlock_add_rule", g.path);
      }
    }
    paths.push_back(std::move(path));
    if (paths.size() == kHeldPathFds) CloseAll(paths);
  }
  CloseAll(paths);
  return rs;
}

int RestrictSelf(int ruleset_fd, uint32_t flags) {
  if (::syscall(kNrLandlockRestrictSelf, ruleset_fd, flags) != 0) return -errno;
  return 0;
}

}  // namespace cordon::supervisor
