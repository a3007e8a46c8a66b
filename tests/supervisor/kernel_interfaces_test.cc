// No policy opens up the kernel's own interfaces: writable /proc, /sys and
// cgroup paths, device nodes and /dev are refused; their honest neighbours
// (read-only /sys and /proc, /dev/shm, the system set's devices) are not.
#include "policy/kernel_interfaces.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "supervisor/load/fs_facts.h"

namespace cordon::policy {
namespace {

// The decision, on the facts the loader gathers for `p`.
std::vector<std::string> KernelInterfaceProblems(const Policy& p) {
  return policy::KernelInterfaceProblems(p, supervisor::GatherFsFacts(p));
}

std::vector<std::string> Problems(const std::string& path, Access access) {
  Policy p;
  p.workspace = "/tmp";
  p.paths.push_back({path, access, access != Access::kDenied, "--rule"});
  return KernelInterfaceProblems(p);
}

TEST(KernelInterfaces, ControlFilesystemsAreNeverWritable) {
  for (const char* path : {"/proc/sys/vm", "/proc", "/sys", "/sys/kernel/mm", "/sys/fs/cgroup"}) {
    auto problems = Problems(path, Access::kReadWrite);
    ASSERT_EQ(problems.size(), 1u) << path;
    EXPECT_EQ(problems[0],
              std::string("--rule ") + path + ": a kernel control filesystem, never writable");
    EXPECT_TRUE(Problems(path, Access::kReadOnly).empty()) << path << " may be read";
    EXPECT_TRUE(Problems(path, Access::kDenied).empty()) << path << " may be denied";
  }
  Policy p;
  p.workspace = "/sys";
  p.profile = Profile::kWorkspaceWrite;
  ASSERT_EQ(KernelInterfaceProblems(p).size(), 1u);
  p.profile = Profile::kReadOnly;
  EXPECT_TRUE(KernelInterfaceProblems(p).empty());
}

TEST(KernelInterfaces, DeviceNodesAreNeverGranted) {
  EXPECT_EQ(Problems("/dev", Access::kReadOnly).size(), 1u);
  EXPECT_EQ(Problems("/dev/pts", Access::kReadOnly).size(), 1u);
  EXPECT_EQ(Problems("/dev/kmsg", Access::kReadOnly).size(), 1u);
  EXPECT_TRUE(Problems("/dev", Access::kDenied).empty());
  for (const char* ok : {"/dev/null", "/dev/zero", "/dev/urandom", "/dev/shm"}) {
    EXPECT_TRUE(Problems(ok, Access::kReadWrite).empty()) << ok;
  }
  // A device node outside /dev is one all the same.
  if (::geteuid() != 0) GTEST_SKIP() << "SKIPPED LOUDLY: mknod of a device needs root";
  char dir[] = "/tmp/cordon-dev-XXXXXX";
  ASSERT_NE(::mkdtemp(dir), nullptr);
  std::string node = std::string(dir) + "/null-twin";
  ASSERT_EQ(::mknod(node.c_str(), S_IFCHR | 0600, makedev(1, 3)), 0);
  auto problems = Problems(node, Access::kReadOnly);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_NE(problems[0].find("a device node"), std::string::npos) << problems[0];
  ::unlink(node.c_str());
  ::rmdir(dir);
}

TEST(KernelInterfaces, AGrantOfTheRootLeavesDevOut) {
  Policy p;
  p.workspace = "/tmp";
  p.paths.push_back({"/", Access::kReadOnly, true, "--ro"});
  EXPECT_TRUE(KernelInterfaceProblems(p).empty());
  auto rules = EffectiveRules(p, "");
  EXPECT_TRUE(ReadableUnder(rules, "/etc/hostname"));
  EXPECT_TRUE(ReadableUnder(rules, "/home"));
  EXPECT_FALSE(ReadableUnder(rules, "/dev/kmsg"));
  EXPECT_FALSE(ReadableUnder(rules, "/dev"));
  EXPECT_TRUE(ReadableUnder(rules, "/dev/null")) << "the system set's devices stay";
  EXPECT_TRUE(ReadableUnder(rules, "/dev/urandom"));
  // Without such a grant there is no carve-out to add.
  p.paths = {{"/opt", Access::kReadOnly, true, "--ro"}};
  for (const PathRule& r : EffectiveRules(p, "")) EXPECT_NE(r.path, "/dev") << r.source;
}

}  // namespace
}  // namespace cordon::policy
