// Calls that reach another process: signals, priorities, limits and CPU
// affinity. A root tool may aim them at its own processes only
// (supervisor/emulator_process.cc; signals also by Landlock's scope where
// the ABI has one). The victim is a process of the test, outside the run;
// ground truth is its state afterwards, read from outside.
#include <gtest/gtest.h>
#include <sched.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <string>

#include "tests/support/probe_test.h"
#include "tests/support/test_env.h"

namespace cordon::testing {
namespace {

class ProcessTargetTest : public ProbeTest {
 protected:
  void SetUp() override {
    victim_ = ::fork();
    ASSERT_GE(victim_, 0);
    if (victim_ == 0) {
      for (;;) ::pause();
    }
    ASSERT_EQ(::prlimit(victim_, RLIMIT_NOFILE, nullptr, &nofile_), 0);
    ASSERT_EQ(::sched_getaffinity(victim_, sizeof cpus_, &cpus_), 0);
  }
  void TearDown() override {
    ::kill(victim_, SIGKILL);
    ::waitpid(victim_, nullptr, 0);
  }
  bool VictimAlive() { return ::waitpid(victim_, nullptr, WNOHANG) == 0; }
  std::string victim() const { return std::to_string(victim_); }

  pid_t victim_ = -1;
  rlimit nofile_{};
  cpu_set_t cpus_{};
};

TEST_P(ProcessTargetTest, AnotherProcessIsOutOfReach) {
  EXPECT_EQ(Probe("", {"kill", victim(), "15"}), EPERM) << last_.err;
  EXPECT_EQ(Probe("", {"pidfd-kill", victim(), "15"}), EPERM) << last_.err;
  EXPECT_TRUE(VictimAlive());
  EXPECT_EQ(Probe("", {"renice", victim()}), EPERM) << last_.err;
  errno = 0;
  EXPECT_EQ(::getpriority(PRIO_PROCESS, static_cast<id_t>(victim_)), 0);
  EXPECT_EQ(errno, 0);
  EXPECT_EQ(Probe("", {"prlimit-nofile", victim()}), EPERM) << last_.err;
  rlimit now{};
  ASSERT_EQ(::prlimit(victim_, RLIMIT_NOFILE, nullptr, &now), 0);
  EXPECT_EQ(now.rlim_cur, nofile_.rlim_cur);
  EXPECT_EQ(now.rlim_max, nofile_.rlim_max);
  EXPECT_EQ(Probe("", {"setaffinity", victim()}), EPERM) << last_.err;
  cpu_set_t cpus{};
  ASSERT_EQ(::sched_getaffinity(victim_, sizeof cpus, &cpus), 0);
  EXPECT_TRUE(CPU_EQUAL(&cpus, &cpus_));
  // Every process of a user (here nobody's, so a failure harms nothing).
  EXPECT_EQ(Probe("", {"renice-user", "65534"}), EPERM) << last_.err;
}

TEST_P(ProcessTargetTest, TheToolsOwnProcessesAreItsToManage) {
  EXPECT_EQ(Probe("", {"own-child"}), 0) << last_.err;
  EXPECT_EQ(Probe("", {"kill-self", "15"}), 128 + 15);
}

INSTANTIATE_TEST_SUITE_P(Probes, ProcessTargetTest, ProbeParams(), ProbeParamName);

}  // namespace
}  // namespace cordon::testing
