// git worktree add inside the workspace: the new worktree's admin
// directory (.git/worktrees/NAME) is the run's own, so git makes it and
// works there; its commondir, which names where git reads config and hooks
// from, is made by the supervisor with the content git writes ("../..",
// the repository's own git dir: policy/git_worktree.h), whatever the
// tool's bytes, and is not written again. An existing worktree's links
// stay protected. Real git, the real cordon binary, the disk read after.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/support/test_env.h"

namespace cordon::testing {
namespace {

using ::testing::HasSubstr;

const std::vector<std::string> kEnv = GitTestEnv();

// `cmd` run with sh in `dir` outside the sandbox, git's test identity set.
std::string Sh(const std::string& dir, const std::string& cmd) {
  return ShOutput("cd '" + dir + "' && " + cmd, kEnv);
}

class GitWorktreeAddTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string out = Sh(t_.ws(),
                               "git init -q -b main . && echo one > a.txt && "
                               "git add a.txt && git commit -qm first && echo ok");
    ASSERT_EQ(out, "ok");
  }
  RunResult Run(const std::string& script) {
    return RunCordon(
        {"run", "--profile", "workspace-write", "--workspace", t_.ws(), "--", "sh", "-c", script},
        t_.ws(), kEnv);
  }
  ScratchTree t_;
};

TEST_F(GitWorktreeAddTest, AWorktreeAddedInTheWorkspaceWorks) {
  RunResult r =
      Run("git worktree add -q wt2 && cd wt2 && echo two > b.txt && git add b.txt && "
          "git commit -qm in-wt2 && cd .. && git worktree add -q --detach wt3 && "
          "git worktree remove wt3 && echo done");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("done")) << r.err;
  EXPECT_EQ(ReadFile(t_.Ws(".git/worktrees/wt2/commondir")), "../..\n");
  EXPECT_EQ(Sh(t_.ws(), "git log -1 --format=%s wt2 --"), "in-wt2");
  EXPECT_EQ(Sh(t_.Ws("wt2"), "git rev-parse --git-common-dir"), t_.Ws(".git"));
  EXPECT_FALSE(Exists(t_.Ws(".git/worktrees/wt3"))) << "git worktree remove of the run's own";
}

TEST_F(GitWorktreeAddTest, AWorktreesLinksAreNotWrittenByTheTool) {
  ASSERT_EQ(Sh(t_.ws(), "git worktree add -q old && echo ok"), "ok");
  RunResult r =
      Run("printf \"../../evil\\n\" > .git/worktrees/old/commondir; echo old=$?; "
          "git worktree add -q wt2 && printf \"../../evil\\n\" > .git/worktrees/wt2/commondir; "
          "echo new=$?; mkdir -p .git/worktrees/forged && "
          "printf \"../../evil\\n\" > .git/worktrees/forged/commondir; echo forged=$?; "
          "cat .git/worktrees/forged/commondir");
  EXPECT_THAT(r.out, HasSubstr("old=2")) << r.err;
  EXPECT_THAT(r.err, HasSubstr("worktrees/old/commondir: protected path"));
  EXPECT_EQ(ReadFile(t_.Ws(".git/worktrees/old/commondir")), "../..\n");
  EXPECT_THAT(r.out, HasSubstr("new=2")) << r.err;
  EXPECT_EQ(ReadFile(t_.Ws(".git/worktrees/wt2/commondir")), "../..\n");
  // Made where there was none: git's content, not the tool's.
  EXPECT_THAT(r.out, HasSubstr("forged=0\n../..\n")) << r.err;
  EXPECT_EQ(ReadFile(t_.Ws(".git/worktrees/forged/commondir")), "../..\n");
}

}  // namespace
}  // namespace cordon::testing
