// inotify watches: Landlock does not check them, and a root tool owns most
// of the files there are, so a watch outside would report the names and
// timing of every change there (another run's workspace, /root/.ssh). The
// supervisor adds watches on what the tool may read only, with the tool's
// file permissions (supervisor/emulator_watch.cc).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "tests/support/probe_test.h"
#include "tests/support/test_env.h"

namespace cordon::testing {
namespace {

class WatchTest : public ProbeTest {
 protected:
  void SetUp() override {
    WriteFile(t_.Out("secret"), "outside\n");
    WriteFile(t_.Ws("inside.txt"), "inside\n");
    ASSERT_EQ(::mkdir(t_.Ws("private").c_str(), 0755), 0);
    ASSERT_EQ(::symlink(t_.outside().c_str(), t_.Ws("out-link").c_str()), 0);
  }
};

TEST_P(WatchTest, NothingOutsideTheReadableSetIsWatched) {
  EXPECT_EQ(Probe("", {"inotify", t_.outside()}), EACCES) << last_.err;
  EXPECT_EQ(Probe("", {"inotify", t_.Out("secret")}), EACCES) << last_.err;
  EXPECT_EQ(Probe("", {"inotify", "out-link"}), EACCES) << "through a symlink\n" << last_.err;
  EXPECT_EQ(Probe("", {"inotify", "private"}, {"--deny", t_.Ws("private")}), EACCES) << last_.err;
}

TEST_P(WatchTest, WhatTheToolMayReadIsWatched) {
  if (InContainerPass()) {
    // Without pidfd_getfd the supervisor cannot reach the tool's inotify
    // instance: EBADF, and cordon says what to do (README).
    EXPECT_EQ(Probe("", {"inotify", "inside.txt"}), EBADF) << last_.err;
    EXPECT_NE(last_.err.find("--cap-add SYS_PTRACE"), std::string::npos) << last_.err;
    return;
  }
  EXPECT_EQ(Probe("", {"inotify", "."}), 0) << last_.err;
  EXPECT_EQ(Probe("", {"inotify", "inside.txt"}), 0) << last_.err;
  EXPECT_EQ(Probe("", {"inotify", "/usr"}), 0) << last_.err;
  EXPECT_EQ(Probe("", {"inotify", "/dev/null"}), 0) << "a single granted file\n" << last_.err;
  // The link itself lies in the workspace.
  EXPECT_EQ(Probe("", {"inotify", "out-link", "nofollow"}), 0) << last_.err;
  EXPECT_EQ(Probe("", {"inotify", "absent"}), ENOENT);
  // The watch is the tool's own: its events arrive.
  EXPECT_EQ(Probe("workspace-write", {"inotify-event", "."}), 0) << last_.err;
}

INSTANTIATE_TEST_SUITE_P(Probes, WatchTest, ProbeParams(), ProbeParamName);

}  // namespace
}  // namespace cordon::testing
