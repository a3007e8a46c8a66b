// A repository's info/ directory (gitrepository-layout(5)) under
// workspace-write: what git reads there to decide what you see and check
// out (exclude, attributes, grafts, sparse-checkout) stays read-only, and
// info/refs, git's own output for dumb-HTTP servers, is git's to rewrite,
// so `git gc` in a repository you had runs without a refusal. Real git,
// the real cordon binary, the disk read outside afterwards.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>

#include "tests/support/test_env.h"

namespace cordon::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

class GitInfoTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // Made outside the sandbox, before the run: the user's repository.
    std::string env;
    for (const auto& e : GitTestEnv()) env += "\"" + e + "\" ";
    const std::string cmd = "cd " + t_.ws() + " && env " + env +
                            "sh -c 'git init -q -b main && echo a > a.txt && "
                            "git add a.txt && git commit -qm one && echo b > b.txt && git add "
                            "b.txt && git commit -qm two' > /dev/null 2>&1";
    ASSERT_EQ(std::system(cmd.c_str()), 0);
    ASSERT_TRUE(Exists(t_.Ws(".git/info/exclude")));
    exclude_ = ReadFile(t_.Ws(".git/info/exclude"));
  }
  RunResult Run(const std::string& script) {
    return RunCordon(
        {"run", "--profile", "workspace-write", "--workspace", t_.ws(), "--", "sh", "-c", script},
        t_.ws(), GitTestEnv());
  }
  ScratchTree t_;
  std::string exclude_;
};

TEST_F(GitInfoTest, GcInARepositoryYouHadRunsWithoutARefusal) {
  ASSERT_FALSE(Exists(t_.Ws(".git/info/refs")));
  RunResult r = Run("git gc -q && echo gc-ok");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("gc-ok"));
  EXPECT_THAT(r.err, Not(HasSubstr("refused"))) << r.err;
  EXPECT_THAT(r.err, Not(HasSubstr("unable to update"))) << r.err;
  // update-server-info's output, written through info/refs_XXXXXX.
  EXPECT_THAT(ReadFile(t_.Ws(".git/info/refs")), HasSubstr("refs/heads/main"));
}

TEST_F(GitInfoTest, WhatGitReadsFromInfoStaysReadOnly) {
  for (const char* name : {"exclude", "attributes", "grafts", "sparse-checkout"}) {
    const std::string path = t_.Ws(std::string(".git/info/") + name);
    RunResult r = Run(std::string("echo '*' >> .git/info/") + name + "; echo done");
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_THAT(r.err, HasSubstr("protected path")) << name;
    if (std::string(name) == "exclude") {
      EXPECT_EQ(ReadFile(path), exclude_);
    } else {
      EXPECT_FALSE(Exists(path)) << name;
    }
  }
  // Moved away whole, info/ would take them with it.
  RunResult r = Run("mv .git/info .git/info.old; echo done");
  EXPECT_TRUE(Exists(t_.Ws(".git/info/exclude"))) << r.err;
  // The honest neighbour: git's own output there is writable.
  r = Run("echo x > .git/info/refs && echo written");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(ReadFile(t_.Ws(".git/info/refs")), "x\n");
}

}  // namespace
}  // namespace cordon::testing
