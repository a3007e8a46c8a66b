#include "policy/kernel_interfaces.h"

#include <linux/magic.h>

#include <algorithm>
#include <array>

namespace cordon::policy {
namespace {

// statfs f_type of the filesystems through which the kernel is configured
// (linux/magic.h; cgroup v1 is CGROUP_SUPER_MAGIC).
constexpr std::array<long, 13> kPseudoFs = {
    PROC_SUPER_MAGIC,    SYSFS_MAGIC,    CGROUP_SUPER_MAGIC,
    CGROUP2_SUPER_MAGIC, DEBUGFS_MAGIC,  TRACEFS_MAGIC,
    SECURITYFS_MAGIC,    BPF_FS_MAGIC,   0x62656570 /* configfs */,
    EFIVARFS_MAGIC,      PSTOREFS_MAGIC, DEVPTS_SUPER_MAGIC,
    0x42494e4d /* binfmt_misc */};

const PathFacts* FactsOf(const FsFacts& facts, const std::string& path) {
  auto it = facts.find(path);
  return it == facts.end() ? nullptr : &it->second;  // gone: nothing to open up
}

bool IsSystemDevice(const std::string& path) {
  for (const PathRule& r : SystemPaths()) {
    if (r.path == path && IsWithin(path, kDeviceDir)) return true;
  }
  return false;
}

// Why `path` may not be granted with `access`, or empty.
std::string Problem(const std::string& path, Access access, const FsFacts& facts) {
  if (access == Access::kDenied) return {};
  const PathFacts* f = FactsOf(facts, path);
  if (access == Access::kReadWrite && (IsWithin(path, "/proc") || IsWithin(path, "/sys") ||
                                       (f != nullptr && f->kernel_control_fs))) {
    return "a kernel control filesystem, never writable";
  }
  if (IsWithin(path, kSharedMemoryDir)) return {};
  if (f != nullptr && f->device) {
    if (IsSystemDevice(path)) return {};
    return "a device node (only /dev/null, /dev/zero, /dev/full and the random devices are "
           "granted)";
  }
  if (IsWithin(path, kDeviceDir)) return "the machine's device nodes (/dev/shm may be granted)";
  return {};
}

}  // namespace

bool IsKernelControlFs(long f_type) {
  return std::find(kPseudoFs.begin(), kPseudoFs.end(), f_type) != kPseudoFs.end();
}

std::vector<std::string> KernelInterfaceProblems(const Policy& p, const FsFacts& facts) {
  std::vector<std::string> problems;
  auto check = [&](const std::string& path, Access access, const std::string& what) {
    if (std::string why = Problem(path, access, facts); !why.empty()) {
      problems.push_back(what + " " + path + ": " + why);
    }
  };
  if (!p.workspace.empty()) {
    check(p.workspace,
          p.profile == Profile::kWorkspaceWrite ? Access::kReadWrite : Access::kReadOnly,
          "workspace");
  }
  for (const PathRule& r : p.paths) {
    check(r.path, r.access, r.source.empty() ? std::string("path") : r.source);
  }
  return problems;
}

}  // namespace cordon::policy
