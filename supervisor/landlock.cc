#include "supervisor/landlock.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "supervisor/uapi.h"

namespace cordon::supervisor {
namespace {

using namespace cordon::uapi;

constexpr uint64_t kFileRights = kFsExecute | kFsWriteFile | kFsReadFile | kFsTruncate | kFsIoctlDev;

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
  for (const policy::Grant& g : grants) {
    Fd path(::open(g.path.c_str(), O_PATH | O_CLOEXEC));
    if (!path) {
      if (errno != ENOENT) rs.skipped.push_back(g.path + ": " + Describe(Errno("open")));
      continue;
    }
    struct stat st;
    if (::fstat(path.get(), &st) != 0) return Errno("fstat", g.path);
    LandlockPathBeneathAttr rule{RightsFor(g, cfg.abi, S_ISDIR(st.st_mode)), path.get()};
    if (rule.allowed_access == 0) continue;
    if (::syscall(kNrLandlockAddRule, rs.fd.get(), kLandlockRulePathBeneath, &rule, 0) != 0) {
      return Errno("landlock_add_rule", g.path);
    }
  }
  return rs;
}

int RestrictSelf(int ruleset_fd) {
  if (::syscall(kNrLandlockRestrictSelf, ruleset_fd, 0) != 0) return -errno;
  return 0;
}

}  // namespace cordon::supervisor
