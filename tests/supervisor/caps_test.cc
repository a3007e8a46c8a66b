#include "supervisor/caps.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/capability.h>
#include <sys/mount.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
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

// ToolPermissions: while it lives, this thread opens files as a capless
// root would (another user's 0600 file is refused); afterwards it holds
// what it held before, and another thread never lost anything.
[[noreturn]] void LowerWhileOpening(const char* others) {
  std::atomic<int> step{0};
  bool other_thread_kept = false;
  std::thread other([&] {  // started before the guard: its capabilities are its own
    while (step.load() != 1) std::this_thread::yield();
    int fd = ::open(others, O_RDONLY | O_CLOEXEC);
    other_thread_kept = fd >= 0;
    if (fd >= 0) ::close(fd);
    step = 2;
  });
  bool refused_inside = false;
  {
    ToolPermissions as_tool;
    if (!as_tool.lowered()) _exit(1);
    int fd = ::open(others, O_RDONLY | O_CLOEXEC);
    refused_inside = fd < 0 && errno == EACCES;
    if (fd >= 0) ::close(fd);
    step = 1;
    while (step.load() != 2) std::this_thread::yield();
  }
  other.join();
  if (!refused_inside) _exit(2);
  if (!other_thread_kept) _exit(3);
  int fd = ::open(others, O_RDONLY | O_CLOEXEC);
  if (fd < 0) _exit(4);
  ::close(fd);
  _exit(0);
}

// A file only uid 65534 may read, removed at the end of the test.
class OthersFile {
 public:
  OthersFile() {
    int fd = ::mkstemp(path_);
    ok_ = fd >= 0 && ::fchown(fd, 65534, 65534) == 0 && ::fchmod(fd, 0600) == 0;
    if (fd >= 0) ::close(fd);
  }
  ~OthersFile() { ::unlink(path_); }
  bool ok() const { return ok_; }
  const char* path() const { return path_; }

 private:
  char path_[32] = "/tmp/cordon-caps-XXXXXX";
  bool ok_ = false;
};

TEST(Caps, ToolPermissionsLowerThisThreadForAWhile) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root";
  OthersFile others;
  ASSERT_TRUE(others.ok());
  EXPECT_EXIT(LowerWhileOpening(others.path()), ::testing::ExitedWithCode(0), "");
}

// SupervisorPermissions raises a lowered thread for a while (the
// supervisor's own reads on a notify thread); a ToolPermissions inside it
// lowers again, and each guard's end restores what the thread had.
[[noreturn]] void RaiseWhileLowered(const char* others) {
  auto opens = [others] {
    int fd = ::open(others, O_RDONLY | O_CLOEXEC);
    if (fd >= 0) ::close(fd);
    return fd >= 0;
  };
  {
    ToolPermissions as_tool;
    if (opens()) _exit(1);
    {
      SupervisorPermissions raised;
      if (!opens()) _exit(2);
      {
        ToolPermissions again;
        if (!again.lowered() || opens()) _exit(3);
      }
      if (!opens()) _exit(4);
    }
    if (opens()) _exit(5);
    ToolPermissions nested;  // already lowered: nothing changes at its end
    if (!nested.lowered()) _exit(6);
  }
  if (!opens()) _exit(7);
  _exit(0);
}

TEST(Caps, SupervisorPermissionsRaiseALoweredThreadForAWhile) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root";
  OthersFile others;
  ASSERT_TRUE(others.ok());
  EXPECT_EXIT(RaiseWhileLowered(others.path()), ::testing::ExitedWithCode(0), "");
}

}  // namespace
}  // namespace cordon::supervisor
