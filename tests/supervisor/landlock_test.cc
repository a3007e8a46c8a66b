// Landlock on the real kernel, one forked child per restriction.
#include "supervisor/landlock.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "supervisor/uapi.h"
#include "tests/support/test_env.h"

namespace cordon::supervisor {
namespace {

using cordon::testing::ScratchTree;
using cordon::testing::WriteFile;

class LandlockTest : public ::testing::Test {
 protected:
  void SetUp() override {
    abi_ = ProbeLandlockAbi();
    if (abi_ < 1) GTEST_SKIP() << "Landlock is not available on this kernel";
    WriteFile(t_.Ws("a"), "a");
    WriteFile(t_.Out("b"), "b");
  }
  // Restricts the calling process to `grants` and opens `path`.
  [[noreturn]] void RestrictAndOpen(std::vector<policy::Grant> grants, const std::string& path,
                                    int flags) {
    auto rs = BuildRuleset(grants, {abi_, false, true});
    if (!rs) _exit(200);
    ::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
    if (RestrictSelf(rs->fd.get()) != 0) _exit(201);
    int fd = ::open(path.c_str(), flags | O_CLOEXEC, 0644);
    _exit(fd < 0 ? errno : 0);
  }
  ScratchTree t_;
  int abi_ = 0;
};

TEST_F(LandlockTest, ReadOnlyGrantAllowsReadsAndRefusesWrites) {
  std::vector<policy::Grant> g = {{t_.ws(), policy::Access::kReadOnly, false, false}};
  EXPECT_EXIT(RestrictAndOpen(g, t_.Ws("a"), O_RDONLY), ::testing::ExitedWithCode(0), "");
  EXPECT_EXIT(RestrictAndOpen(g, t_.Ws("a"), O_WRONLY), ::testing::ExitedWithCode(EACCES), "");
  EXPECT_EXIT(RestrictAndOpen(g, t_.Out("b"), O_RDONLY), ::testing::ExitedWithCode(EACCES), "");
}

TEST_F(LandlockTest, ReadWriteGrantAllowsWritesOnlyBeneathIt) {
  std::vector<policy::Grant> g = {{t_.ws(), policy::Access::kReadWrite, false, false}};
  EXPECT_EXIT(RestrictAndOpen(g, t_.Ws("new"), O_WRONLY | O_CREAT), ::testing::ExitedWithCode(0), "");
  EXPECT_EXIT(RestrictAndOpen(g, t_.Out("new"), O_WRONLY | O_CREAT),
              ::testing::ExitedWithCode(EACCES), "");
}

TEST_F(LandlockTest, ListOnlyGrantDoesNotGrantFiles) {
  std::vector<policy::Grant> g = {{t_.ws(), policy::Access::kReadOnly, false, true}};
  EXPECT_EXIT(RestrictAndOpen(g, t_.ws(), O_RDONLY | O_DIRECTORY), ::testing::ExitedWithCode(0), "");
  EXPECT_EXIT(RestrictAndOpen(g, t_.Ws("a"), O_RDONLY), ::testing::ExitedWithCode(EACCES), "");
}

TEST_F(LandlockTest, FileRightsAreLimitedToWhatAFileCanCarry) {
  policy::Grant rw{"/x", policy::Access::kReadWrite, true, false};
  uint64_t dir = RightsFor(rw, abi_, true);
  uint64_t file = RightsFor(rw, abi_, false);
  EXPECT_TRUE(dir & uapi::kFsMakeReg);
  EXPECT_FALSE(file & uapi::kFsMakeReg);
  EXPECT_TRUE(file & uapi::kFsWriteFile);
  EXPECT_FALSE(dir & uapi::kFsMakeChar) << "no device nodes in the workspace";
}

// The listing's type spares a stat; a stale one must neither fail the run
// nor widen the grant.
TEST_F(LandlockTest, AStaleDirectoryHintOnAFileFallsBackToTheFileRights) {
  policy::Grant g{t_.Ws("a"), policy::Access::kReadOnly, false, false,
                  policy::EntryType::kDirectory};
  EXPECT_EXIT(RestrictAndOpen({g}, t_.Ws("a"), O_RDONLY), ::testing::ExitedWithCode(0), "");
  EXPECT_EXIT(RestrictAndOpen({g}, t_.Ws("a"), O_WRONLY), ::testing::ExitedWithCode(EACCES), "");
}

TEST_F(LandlockTest, ManyGrantsAreAllAppliedAcrossTheHeldFdBatches) {
  // More grants than fds held at once (closed in batches): the last ones
  // still count, and nothing outside them is granted.
  std::vector<policy::Grant> g;
  for (int i = 0; i < 600; ++i) {
    std::string name = "f" + std::to_string(i);
    WriteFile(t_.Ws(name), "x");
    g.push_back({t_.Ws(name), policy::Access::kReadOnly, false, false, policy::EntryType::kOther});
  }
  EXPECT_EXIT(RestrictAndOpen(g, t_.Ws("f599"), O_RDONLY), ::testing::ExitedWithCode(0), "");
  EXPECT_EXIT(RestrictAndOpen(g, t_.Ws("f0"), O_RDONLY), ::testing::ExitedWithCode(0), "");
  EXPECT_EXIT(RestrictAndOpen(g, t_.Ws("a"), O_RDONLY), ::testing::ExitedWithCode(EACCES), "");
}

TEST(LandlockRights, HandledRightsGrowWithTheAbi) {
  EXPECT_EQ(HandledFsRights(0), 0u);
  EXPECT_FALSE(HandledFsRights(1) & uapi::kFsRefer);
  EXPECT_TRUE(HandledFsRights(2) & uapi::kFsRefer);
  EXPECT_TRUE(HandledFsRights(3) & uapi::kFsTruncate);
  EXPECT_TRUE(HandledFsRights(5) & uapi::kFsIoctlDev);
}

}  // namespace
}  // namespace cordon::supervisor
