#include "supervisor/private_tmp.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/file.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include <string>

#include "tests/support/test_env.h"

namespace cordon::supervisor {
namespace {

using cordon::testing::Exists;
using cordon::testing::ScratchTree;

// The directory of a run whose supervisor died without its destructor
// (SIGKILL): made in a child that exits without cleaning up. Empty on error.
std::string DeadRunsDirectory(const std::string& parent) {
  int pipefd[2];
  if (::pipe(pipefd) != 0) return {};
  pid_t dead = ::fork();
  if (dead == 0) {
    PrivateTmp tmp(parent);
    if (!tmp.Create().ok()) _exit(1);
    (void)!::write(pipefd[1], tmp.path().c_str(), tmp.path().size());
    _exit(0);  // no destructor: as if killed
  }
  ::close(pipefd[1]);
  char buf[512] = {};
  ssize_t n = ::read(pipefd[0], buf, sizeof buf - 1);
  ::close(pipefd[0]);
  int status = 0;
  ::waitpid(dead, &status, 0);
  return n > 0 && status == 0 ? std::string(buf) : std::string();
}

// A run's directory: made in the per-user directory, removed at the end.
TEST(PrivateTmp, IsMadeInThePrivateDirectoryAndRemovedAtTheEnd) {
  ScratchTree t;
  std::string path;
  {
    PrivateTmp tmp(t.root());
    ASSERT_TRUE(tmp.Create().ok());
    path = tmp.path();
    EXPECT_EQ(path.rfind(PrivateTmpBase(t.root()) + "/run-", 0), 0u) << path;
    struct stat st;
    ASSERT_EQ(::stat(PrivateTmpBase(t.root()).c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0700u);
    EXPECT_TRUE(Exists(path));
  }
  EXPECT_FALSE(Exists(path));
}

// A run whose supervisor dies without its destructor (SIGKILL) leaves its
// directory unheld; the next run to end removes it, and not a live one's.
TEST(PrivateTmp, ARunThatEndsRemovesTheDirectoriesOfDeadRunsOnly) {
  ScratchTree t;
  const std::string stale = DeadRunsDirectory(t.root());
  ASSERT_TRUE(Exists(stale));

  PrivateTmp live(t.root());
  ASSERT_TRUE(live.Create().ok());
  {
    PrivateTmp ending(t.root());
    ASSERT_TRUE(ending.Create().ok());
  }
  EXPECT_FALSE(Exists(stale)) << "a dead run's directory outlived the sweep";
  EXPECT_TRUE(Exists(live.path())) << "a live run's directory was swept";
}

// Under many runs at once (ctest -j, a CI runner's parallel steps) another
// run is often being set up, holding the parent shared, just when a run ends
// and sweeps: the sweep waits for it instead of giving up, or a dead run's
// directory would outlive every run that ends at such a moment
// (RunContract.KillingCordonKillsTheTool failed that way now and then).
TEST(PrivateTmp, TheSweepWaitsForARunBeingSetUp) {
  ScratchTree t;
  const std::string stale = DeadRunsDirectory(t.root());
  ASSERT_TRUE(Exists(stale));
  // A run being set up: the parent held shared for a while.
  Fd base(::open(PrivateTmpBase(t.root()).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  ASSERT_TRUE(base);
  ASSERT_EQ(::flock(base.get(), LOCK_SH), 0);
  std::thread setup([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    ::flock(base.get(), LOCK_UN);
  });
  {
    PrivateTmp ending(t.root());
    EXPECT_TRUE(ending.Create().ok());
  }  // ends and sweeps
  setup.join();
  EXPECT_FALSE(Exists(stale)) << "the sweep gave up while a run was being set up";
}

// A per-user directory someone else could enter is not used: the run's
// directory goes next to it, and nothing is swept.
TEST(PrivateTmp, ABaseOthersCanEnterIsNotUsed) {
  ScratchTree t;
  const std::string base = PrivateTmpBase(t.root());
  ASSERT_EQ(::mkdir(base.c_str(), 0755), 0);
  ASSERT_EQ(::chmod(base.c_str(), 0755), 0);
  PrivateTmp tmp(t.root());
  ASSERT_TRUE(tmp.Create().ok());
  EXPECT_EQ(tmp.path().rfind(t.root() + "/cordon-run-", 0), 0u) << tmp.path();
}

}  // namespace
}  // namespace cordon::supervisor
