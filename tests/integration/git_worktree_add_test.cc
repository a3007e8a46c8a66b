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

// git worktree remove of a worktree the run did not make (yours, or an
// earlier run's): its gitfile and its admin dir's commondir go, as files
// of yours (kept in the run's journal).
TEST_F(GitWorktreeAddTest, AWorktreeMadeBeforeTheRunIsRemoved) {
  ASSERT_EQ(Sh(t_.ws(), "git worktree add -q old && echo ok"), "ok");
  RunResult r = Run("git worktree remove old && echo done");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("done")) << r.err;
  EXPECT_FALSE(Exists(t_.Ws("old")));
  EXPECT_FALSE(Exists(t_.Ws(".git/worktrees/old")));
  EXPECT_EQ(Sh(t_.ws(), "git worktree list | wc -l"), "1");
}

// Without its commondir git takes an admin dir for a git dir of its own:
// a config or hooks made there would run when you use git in that worktree
// later. They are refused, in your repository and in one the run made; a
// commondir once removed is not made again by the tool.
TEST_F(GitWorktreeAddTest, AnAdminDirWithoutItsCommondirTakesNoConfigOrHooks) {
  ASSERT_EQ(Sh(t_.ws(), "git worktree add -q old && echo ok"), "ok");
  RunResult r = Run(
      "git worktree add -q wt2 && rm .git/worktrees/wt2/commondir && "
      "printf '[core]\\n\\tfsmonitor = touch ../PWNED\\n' > .git/worktrees/wt2/config; "
      "echo cfg=$?; mkdir -p .git/worktrees/wt2/hooks; "
      "printf '#!/bin/sh\\ntouch ../PWNED\\n' > .git/worktrees/wt2/hooks/post-checkout; "
      "echo hook=$?; rm .git/worktrees/old/commondir; echo rm=$?; "
      "printf '../../evil\\n' > .git/worktrees/old/commondir; echo again=$?; "
      "printf '[core]\\n' > .git/worktrees/old/config; echo oldcfg=$?; "
      "git init -q -b main new && cd new && git commit -q --allow-empty -m x && "
      "git worktree add -q w && rm .git/worktrees/w/commondir && mkdir .git/worktrees/w/hooks && "
      "printf '#!/bin/sh\\n' > .git/worktrees/w/hooks/post-checkout; echo newhook=$?");
  EXPECT_THAT(r.out, HasSubstr("cfg=2")) << r.err;
  EXPECT_THAT(r.out, HasSubstr("hook=2")) << r.err;
  EXPECT_THAT(r.out, HasSubstr("rm=0")) << r.err;
  EXPECT_THAT(r.out, HasSubstr("again=2")) << r.err;
  EXPECT_THAT(r.out, HasSubstr("oldcfg=2")) << r.err;
  EXPECT_THAT(r.out, HasSubstr("newhook=2")) << r.err;
  EXPECT_FALSE(Exists(t_.Ws(".git/worktrees/wt2/config")));
  EXPECT_FALSE(Exists(t_.Ws(".git/worktrees/wt2/hooks/post-checkout")));
  EXPECT_FALSE(Exists(t_.Ws(".git/worktrees/old/commondir")));
  EXPECT_FALSE(Exists(t_.Ws(".git/worktrees/old/config")));
  EXPECT_FALSE(Exists(t_.Ws("new/.git/worktrees/w/hooks/post-checkout")));
  Sh(t_.Ws("wt2"), "git status >/dev/null 2>&1; echo");
  EXPECT_FALSE(Exists(t_.Ws("PWNED"))) << "a config the tool made ran";
}

// A .git the tool makes that leads git to a directory of its own (any
// name, so no protected path covers its config and hooks): a gitfile is
// moved aside at the run's end; a symbolic link, a hard link or a rename
// onto the name is refused. git worktree add's gitfile stays.
TEST_F(GitWorktreeAddTest, AGitFileLeadingToTheToolsOwnDirectoryIsMovedAside) {
  RunResult r =
      Run("mkdir -p sub gd/objects gd/refs && echo 'ref: refs/heads/main' > gd/HEAD && "
          "printf '[core]\\n\\tfsmonitor = touch ../PWNED\\n' > gd/config && "
          "echo 'gitdir: ../gd' > sub/.git; echo file=$?; "
          "mkdir s2 && ln -s ../gd s2/.git; echo sym=$?; "
          "mkdir s3 && cp -r gd s3/gd3 && mv s3/gd3 s3/.git; echo mv=$?; "
          "mkdir s4 && echo 'gitdir: ../gd' > s4/x && ln s4/x s4/.git; echo ln=$?; "
          "git worktree add -q wt2; echo wt=$?");
  EXPECT_THAT(r.out, HasSubstr("file=0")) << r.err;
  EXPECT_THAT(r.out, HasSubstr("sym=1")) << r.err;
  EXPECT_THAT(r.out, HasSubstr("mv=1")) << r.err;
  EXPECT_THAT(r.out, HasSubstr("ln=1")) << r.err;
  EXPECT_THAT(r.out, HasSubstr("wt=0")) << r.err;
  EXPECT_THAT(r.err, HasSubstr("moved aside")) << r.err;
  EXPECT_FALSE(Exists(t_.Ws("sub/.git")));
  EXPECT_EQ(Sh(t_.Ws("sub"), "ls -a | grep -c '^.git.cordon-'"), "1");
  EXPECT_FALSE(Exists(t_.Ws("s2/.git")));
  EXPECT_FALSE(Exists(t_.Ws("s3/.git")));
  EXPECT_FALSE(Exists(t_.Ws("s4/.git")));
  EXPECT_TRUE(Exists(t_.Ws("wt2/.git")));
  EXPECT_EQ(Sh(t_.Ws("wt2"), "git rev-parse --git-common-dir"), t_.Ws(".git"));
  Sh(t_.Ws("sub"), "git status >/dev/null 2>&1; echo");
  EXPECT_FALSE(Exists(t_.Ws("PWNED"))) << "a config the tool made ran";
}

}  // namespace
}  // namespace cordon::testing
