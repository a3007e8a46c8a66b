#include "supervisor/caps.h"

#include <gtest/gtest.h>
#include <sys/capability.h>
#include <sys/mount.h>
#include <unistd.h>

#include <thread>

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

// An ambient capability the caller passed down (PR_CAP_AMBIENT_RAISE needs
// it permitted and inheritable) is gone after the drop, and a shell exec'd
// afterwards holds none.
[[noreturn]] void RaiseAmbientThenDrop() {
  cap_t cur = cap_get_proc();
  cap_value_t c = CAP_NET_BIND_SERVICE;
  if (cap_set_flag(cur, CAP_INHERITABLE, 1, &c, CAP_SET) != 0 || cap_set_proc(cur) != 0) _exit(5);
  cap_free(cur);
  if (cap_set_ambient(CAP_NET_BIND_SERVICE, CAP_SET) != 0) _exit(6);
  if (cap_get_ambient(CAP_NET_BIND_SERVICE) != 1) _exit(7);
  if (DropAllCapabilities() != 0) _exit(1);
  if (cap_get_ambient(CAP_NET_BIND_SERVICE) != 0) _exit(2);
  if (!HoldsNoCapabilities()) _exit(3);
  ::execl("/bin/sh", "sh", "-c", "grep -q '^CapAmb:\t0000000000000000' /proc/self/status", nullptr);
  _exit(4);
}

TEST(Caps, AnAmbientCapabilityDoesNotSurviveTheDrop) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root";
  EXPECT_EXIT(RaiseAmbientThenDrop(), ::testing::ExitedWithCode(0), "");
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

// The supervisor drops its capabilities on a thread that acts for the tool
// (a socket call under network allow) and keeps them everywhere else.
[[noreturn]] void DropOnOneThread() {
  bool dropped = false, empty_there = false;
  std::thread t([&] {
    dropped = DropThreadCapabilities() == 0;
    // Effective, permitted and inheritable; the bounding set is the process's.
    cap_t cur = cap_get_proc(), none = cap_init();
    empty_there = cap_compare(cur, none) == 0;
    cap_free(cur);
    cap_free(none);
  });
  t.join();
  if (!dropped) _exit(1);
  if (!empty_there) _exit(2);
  if (HoldsNoCapabilities()) _exit(3);
  cap_t cur = cap_get_proc();
  cap_flag_value_t v = CAP_CLEAR;
  cap_get_flag(cur, CAP_NET_BIND_SERVICE, CAP_EFFECTIVE, &v);
  cap_free(cur);
  _exit(v == CAP_SET ? 0 : 4);
}

TEST(Caps, AThreadDropsItsOwnCapabilitiesOnly) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root";
  EXPECT_EXIT(DropOnOneThread(), ::testing::ExitedWithCode(0), "");
}

}  // namespace
}  // namespace cordon::supervisor
