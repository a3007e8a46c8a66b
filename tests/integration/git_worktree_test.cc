// Git linked worktrees (issue 24, item 10): a workspace that is a linked
// worktree of a repository outside it. `git commit` and `git checkout` work
// under cordon run (the common dir's objects, refs, logs and the worktree's
// own git dir are writable); the common config, hooks and info, and the
// worktree's links, are not; a forged .git file gets nothing. Real git, the
// real cordon binary, ground truth read from disk outside.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>

#include "tests/support/test_env.h"

namespace cordon::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

const std::vector<std::string> kIdentity = {
    "GIT_AUTHOR_NAME=Tess Ter", "GIT_AUTHOR_EMAIL=tess@example.org",
    "GIT_COMMITTER_NAME=Tess Ter", "GIT_COMMITTER_EMAIL=tess@example.org",
    "GIT_CONFIG_NOSYSTEM=1"};

// `cmd` run with sh outside the sandbox, git's test identity set.
std::string Sh(const std::string& cmd) {
  std::vector<std::string> env = kIdentity;
  env.push_back("HOME=/nonexistent");
  return ShOutput(cmd, env);
}

class GitWorktreeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    repo_ = t_.root() + "/repo";
    wt_ = t_.root() + "/wt";
    const std::string out = Sh("git init -q -b main " + repo_ + " && cd " + repo_ +
       " && echo one > a.txt && git add a.txt && git commit -qm first && git worktree add -q " +
       wt_ + " -b task && echo ok > " + wt_ + "/.ready");
    ASSERT_TRUE(Exists(wt_ + "/.ready")) << "git worktree add failed: " << out;
    config_ = ReadFile(repo_ + "/.git/config");
  }
  RunResult Run(const std::string& script, const std::string& profile = "workspace-write",
                const std::string& ws = "") {
    std::vector<std::string> env = kIdentity;
    return RunCordon({"run", "--profile", profile, "--workspace", ws.empty() ? wt_ : ws, "--",
                      "sh", "-c", script},
                     "", env);
  }
  std::string Common() const { return repo_ + "/.git"; }
  ScratchTree t_;
  std::string repo_, wt_, config_;
};

TEST_F(GitWorktreeTest, CommitInTheWorktreeReachesTheRepository) {
  RunResult r = Run("echo two >> a.txt && git commit -qam second && echo committed");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("committed"));
  EXPECT_EQ(Sh("git -C " + repo_ + " log -1 --format=%s task"), "second");
  EXPECT_EQ(Sh("git -C " + repo_ + " log -1 --format=%s main"), "first");
}

TEST_F(GitWorktreeTest, CheckoutSwitchesAndMakesBranches) {
  RunResult r = Run("git checkout -q -b other && echo x > b.txt && git add b.txt && "
                    "git commit -qm on-other && git checkout -q task && echo switched");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("switched"));
  EXPECT_EQ(Sh("git -C " + repo_ + " log -1 --format=%s other"), "on-other");
  EXPECT_EQ(Sh("git -C " + wt_ + " rev-parse --abbrev-ref HEAD"), "task");
  EXPECT_FALSE(Exists(wt_ + "/b.txt"));
}

// Rebase and pack-refs write the common dir's packed-refs through
// packed-refs.lock (made O_EXCL, then removed) and packed-refs.new (renamed
// over packed-refs). Every file the branches touch is made in the run: a
// file of the user's would need an approval to be removed.
TEST_F(GitWorktreeTest, RebaseAndPackRefsRewriteThePackedRefs) {
  RunResult r = Run(
      "git checkout -q -b side && echo s > s && git add s && git commit -qm on-side && "
      "git checkout -q task && echo t > t && git add t && git commit -qm on-task && "
      "git checkout -q side && git rebase -q task && git pack-refs --all && "
      "git branch -q scratch && git pack-refs --all && git branch -q -D scratch && echo done");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("done"));
  EXPECT_EQ(Sh("git -C " + repo_ + " log --format=%s side"), "on-side\non-task\nfirst");
  const std::string packed = ReadFile(Common() + "/packed-refs");
  EXPECT_THAT(packed, HasSubstr("refs/heads/side"));
  EXPECT_THAT(packed, Not(HasSubstr("refs/heads/scratch")));
  EXPECT_FALSE(Exists(Common() + "/packed-refs.lock"));
  EXPECT_FALSE(Exists(Common() + "/packed-refs.new"));
}

// The packed-refs grants name three files of the common dir, as files: no
// other name, no directory or symlink under their names, no rename onto
// another name of the common dir.
TEST_F(GitWorktreeTest, ThePackedRefsGrantsNameNothingElse) {
  const std::string c = Common();
  RunResult r = Run("echo x > " + c + "/packed-refs.lock; mv " + c + "/packed-refs.lock " + c +
                    "/config; ln -s " + c + "/config " + c + "/packed-refs.new; mkdir " + c +
                    "/packed-refs.new; echo y > " + c + "/packed-refs.new/x; echo y > " + c +
                    "/packed-refs.tmp; echo done");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("done"));
  EXPECT_EQ(ReadFile(c + "/config"), config_);
  EXPECT_FALSE(Exists(c + "/packed-refs.tmp"));
  struct stat st;
  EXPECT_NE(::lstat((c + "/packed-refs.new").c_str(), &st), 0);
  EXPECT_EQ(ReadFile(c + "/packed-refs.lock"), "x\n");
}

TEST_F(GitWorktreeTest, TheCommonConfigHooksAndInfoStayOutOfReach) {
  const std::string c = Common();
  const std::string admin = c + "/worktrees/wt";
  const std::string commondir = ReadFile(admin + "/commondir");
  const std::string gitdir = ReadFile(admin + "/gitdir");
  RunResult r = Run("echo '[core]' >> " + c + "/config; echo hooksPath=/x >> " + c +
                    "/config; echo evil > " + c + "/hooks/pre-commit; echo '* x' > " + c +
                    "/info/attributes; echo /x > " + admin + "/commondir; echo /x > " + admin +
                    "/gitdir; echo '[core]' > " + admin + "/config.worktree; mv " + c +
                    "/config " + c + "/objects/c; rm -f " + c + "/HEAD; echo done");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("done"));
  EXPECT_EQ(ReadFile(c + "/config"), config_);
  EXPECT_FALSE(Exists(c + "/hooks/pre-commit"));
  EXPECT_FALSE(Exists(c + "/info/attributes"));
  EXPECT_FALSE(Exists(admin + "/config.worktree"));
  EXPECT_EQ(ReadFile(admin + "/commondir"), commondir);
  EXPECT_EQ(ReadFile(admin + "/gitdir"), gitdir);
  EXPECT_TRUE(Exists(c + "/HEAD"));
}

TEST_F(GitWorktreeTest, UnderReadOnlyTheRepositoryIsReadOnly) {
  RunResult r = Run("git log -1 --format=%s; echo x > " + Common() + "/objects/x; echo x > " +
                        Common() + "/worktrees/wt/x; echo done",
                    "read-only");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("first"));
  EXPECT_FALSE(Exists(Common() + "/objects/x"));
  EXPECT_FALSE(Exists(Common() + "/worktrees/wt/x"));
}

// A .git file naming another worktree's git dir (its gitdir links back
// elsewhere), or a system directory: nothing is granted, with a warning.
TEST_F(GitWorktreeTest, AForgedGitFileGetsNoGrant) {
  const std::string forged = t_.root() + "/forged";
  ASSERT_EQ(::mkdir(forged.c_str(), 0755), 0);
  for (const std::string& target : {Common() + "/worktrees/wt", std::string("/etc")}) {
    WriteFile(forged + "/.git", "gitdir: " + target + "\n");
    RunResult r = Run("echo x > " + Common() + "/objects/forged; echo x > " + Common() +
                          "/worktrees/wt/forged; echo done",
                      "workspace-write", forged);
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_THAT(r.err, HasSubstr("git worktree: " + forged + "/.git"));
    EXPECT_THAT(r.err, HasSubstr("not granted"));
    EXPECT_FALSE(Exists(Common() + "/objects/forged")) << target;
    EXPECT_FALSE(Exists(Common() + "/worktrees/wt/forged")) << target;
  }
}

TEST_F(GitWorktreeTest, ExplainListsTheGrantsWithTheirReasons) {
  const std::string policy = t_.root() + "/p.json";
  WriteFile(policy, "{}");
  RunResult r = RunCordon({"policy", "explain", policy, "--workspace", wt_, "--profile",
                           "workspace-write"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("git worktree: the repository's common dir"));
  EXPECT_THAT(r.out, HasSubstr("git worktree: objects, refs and logs shared"));
  EXPECT_THAT(r.out, HasSubstr("git worktree: this worktree's own git dir"));
  EXPECT_THAT(r.out, HasSubstr("git worktree: packed refs"));
  EXPECT_THAT(r.out, Not(HasSubstr("not granted")));
}

}  // namespace
}  // namespace cordon::testing
