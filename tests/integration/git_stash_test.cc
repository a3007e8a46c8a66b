// rmdir of a protected directory that holds entries: git calls
// rmdir(".git") while it tidies up after `git stash push` and expects
// ENOTEMPTY; the directory would not be removed anyway, so the tool gets
// ENOTEMPTY and the user no refusal line. An empty protected directory is
// still refused, with the line, and stays. Real git, the real cordon
// binary, the disk read outside afterwards.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdio>

#include "tests/support/test_env.h"

namespace cordon::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

class GitStashTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // Made outside the sandbox, before the run: the user's repository.
    std::string env;
    for (const auto& e : GitTestEnv()) env += "\"" + e + "\" ";
    const std::string cmd = "cd " + t_.ws() + " && env " + env +
                            "sh -c 'git init -q -b main && echo a > tracked && "
                            "git add tracked && git commit -qm one' > /dev/null 2>&1";
    ASSERT_EQ(std::system(cmd.c_str()), 0);
  }
  RunResult Run(const std::string& script) {
    return RunCordon(
        {"run", "--profile", "workspace-write", "--workspace", t_.ws(), "--", "sh", "-c", script},
        t_.ws(), GitTestEnv());
  }
  ScratchTree t_;
};

TEST_F(GitStashTest, StashPushAndPopRunWithoutARefusal) {
  RunResult r =
      Run("echo x >> tracked && git stash push -q && cat tracked && git stash pop -q && echo ok");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("a\nok")) << "stashed, then popped";
  EXPECT_THAT(r.err, Not(HasSubstr("refused"))) << r.err;
  EXPECT_EQ(ReadFile(t_.Ws("tracked")), "a\nx\n");
}

// The tool's own rmdir of .git: ENOTEMPTY, as git expects, and .git stays.
TEST_F(GitStashTest, RmdirOfAFullProtectedDirectoryIsNotEmpty) {
  RunResult r = Run("rmdir .git 2>&1; echo done");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("Directory not empty")) << r.out;
  EXPECT_THAT(r.err, Not(HasSubstr("refused"))) << r.err;
  EXPECT_TRUE(Exists(t_.Ws(".git/HEAD")));
}

// An empty protected directory would be removed: the rule refuses it, says
// so, and it stays.
TEST_F(GitStashTest, RmdirOfAnEmptyProtectedDirectoryIsStillRefused) {
  const std::string hooks = t_.Ws(".git/hooks");
  ASSERT_EQ(std::system(("rm -rf " + hooks).c_str()), 0);
  ASSERT_EQ(::mkdir(hooks.c_str(), 0755), 0);
  RunResult r = Run("rmdir .git/hooks 2>&1; echo done");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("Permission denied")) << r.out;
  EXPECT_THAT(r.err, HasSubstr("refused rmdir: delete " + hooks + ": protected path")) << r.err;
  struct stat st;
  EXPECT_EQ(::stat(hooks.c_str(), &st), 0);
  EXPECT_TRUE(S_ISDIR(st.st_mode));
}

// One the tool may not list (mode 0, and the tool holds no capability):
// it cannot see that it holds entries, so the rule's refusal is what it
// gets, as for an empty one.
TEST_F(GitStashTest, RmdirOfAProtectedDirectoryTheToolCannotListIsRefused) {
  const std::string hooks = t_.Ws(".git/hooks");
  WriteFile(hooks + "/pre-commit.sample", "#!/bin/sh\n");
  ASSERT_EQ(::chmod(hooks.c_str(), 0), 0);
  RunResult r = Run("ls .git/hooks >/dev/null 2>&1 || echo unlistable; rmdir .git/hooks 2>&1");
  ASSERT_EQ(::chmod(hooks.c_str(), 0755), 0);
  EXPECT_THAT(r.out, HasSubstr("unlistable")) << r.out;
  EXPECT_THAT(r.out, HasSubstr("Permission denied")) << r.out;
  EXPECT_THAT(r.err, HasSubstr("refused rmdir: delete " + hooks + ": protected path")) << r.err;
  EXPECT_TRUE(Exists(hooks + "/pre-commit.sample"));
}

}  // namespace
}  // namespace cordon::testing
