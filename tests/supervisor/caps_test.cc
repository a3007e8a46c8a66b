#include "supervisor/caps.h"

#include <gtest/gtest.h>
#include <sys/capability.h>
#include <sys/mount.h>
#include <unistd.h>

namespace cordon::supervisor {
namespace {

[[noreturn]] void DropAndCheck() {
  if (DropAllCapabilities() != 0) _exit(1);
  if (!HoldsNoCapabilities()) _exit(2);
  // A capability-only operation now fails even for uid 0.
  if (::mount("none", "/mnt", "tmpfs", 0, nullptr) == 0) _exit(3);
  _exit(0);
}

TEST(Caps, DropLeavesNothingInAnySet) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to hold capabilities in the first place";
  EXPECT_FALSE(HoldsNoCapabilities()) << "control: root starts with capabilities";
  EXPECT_EXIT(DropAndCheck(), ::testing::ExitedWithCode(0), "");
}

[[noreturn]] void DropThenExecCheck() {
  if (DropAllCapabilities() != 0) _exit(1);
  // uid 0 execs a shell: with NOROOT and an empty bounding set it must not
  // get capabilities back.
  ::execl("/bin/sh", "sh", "-c", "grep -q '^CapEff:\t0000000000000000' /proc/self/status", nullptr);
  _exit(4);
}

TEST(Caps, RootDoesNotRegainCapabilitiesAtExec) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root";
  EXPECT_EXIT(DropThenExecCheck(), ::testing::ExitedWithCode(0), "");
}

}  // namespace
}  // namespace cordon::supervisor
