// The kernel-interface rules decide from facts the caller gathered
// (policy/fs_facts.h), with no filesystem: the same path is refused or not
// by what the facts say. The real gathering is tested with the real
// filesystem in tests/supervisor/kernel_interfaces_test.cc.
#include <gtest/gtest.h>
#include <linux/magic.h>

#include "policy/kernel_interfaces.h"

namespace cordon::policy {
namespace {

std::vector<std::string> Problems(const std::string& path, Access access, const FsFacts& facts) {
  Policy p;
  p.workspace = "/w";
  p.paths.push_back({path, access, access != Access::kDenied, "--rule"});
  return KernelInterfaceProblems(p, facts);
}

TEST(KernelInterfaceFacts, TheFactsDecide) {
  const FsFacts none;
  const FsFacts control = {{"/mnt/x", {.kernel_control_fs = true}}};
  const FsFacts device = {{"/mnt/x", {.device = true}}, {"/dev/null", {.device = true}},
                          {"/dev/shm/x", {.device = true}}};
  struct Row {
    const char* name;
    std::string path;
    Access access;
    const FsFacts& facts;
    bool refused;
  };
  const Row rows[] = {
      {"an ordinary path", "/mnt/x", Access::kReadWrite, none, false},
      {"writable on a control filesystem", "/mnt/x", Access::kReadWrite, control, true},
      {"readable on a control filesystem", "/mnt/x", Access::kReadOnly, control, false},
      {"a device node anywhere", "/mnt/x", Access::kReadOnly, device, true},
      {"a denied device node", "/mnt/x", Access::kDenied, device, false},
      {"a system-set device", "/dev/null", Access::kReadWrite, device, false},
      {"under /dev/shm", "/dev/shm/x", Access::kReadWrite, device, false},
      {"/proc by name, no facts", "/proc/sys", Access::kReadWrite, none, true},
      {"/dev by name, no facts", "/dev/sda", Access::kReadOnly, none, true},
  };
  for (const Row& r : rows) {
    EXPECT_EQ(Problems(r.path, r.access, r.facts).size(), r.refused ? 1u : 0u) << r.name;
  }
}

TEST(KernelInterfaceFacts, ControlFilesystemTypes) {
  EXPECT_TRUE(IsKernelControlFs(PROC_SUPER_MAGIC));
  EXPECT_TRUE(IsKernelControlFs(SYSFS_MAGIC));
  EXPECT_TRUE(IsKernelControlFs(CGROUP2_SUPER_MAGIC));
  EXPECT_FALSE(IsKernelControlFs(EXT4_SUPER_MAGIC));
  EXPECT_FALSE(IsKernelControlFs(TMPFS_MAGIC));
}

TEST(Validate, TakesTheFactsItJudgesBy) {
  Policy p;
  p.workspace = "/w";
  p.paths.push_back(PathRule::ReadWrite("/mnt/x"));
  EXPECT_TRUE(Validate(p, {}).empty());
  EXPECT_EQ(Validate(p, {{"/mnt/x", {.kernel_control_fs = true}}}).size(), 1u);
}

}  // namespace
}  // namespace cordon::policy
