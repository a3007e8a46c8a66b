// Submodules of a repository the user had (a CI checkout, a developer's
// clone): `git submodule update --init` must work under the default policy,
// though the superproject's .git/config and its .git/modules/*/hooks are
// protected. git registers the submodule in .git/config (lock file renamed
// over it): only a change of submodule.NAME.url/active/update (no command)
// or user.name/email passes, checked against the user's config; the
// submodule's git directory the run clones (.git/modules/NAME) is the
// tool's own, as a new repository is: its hooks that would run stay
// protected. `git submodule add` makes a .gitmodules where there is none;
// the user's stays protected. Real git, the real cordon binary, the disk
// afterwards.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "tests/support/test_env.h"

namespace cordon::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// git refuses file:// submodules unless told (CVE-2022-39253).
const std::vector<std::string> kEnv = [] {
  std::vector<std::string> env = GitTestEnv();
  env.insert(env.end(), {"GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=protocol.file.allow",
                         "GIT_CONFIG_VALUE_0=always"});
  return env;
}();

class SubmoduleTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // Outside the run: a library repository, and a project that has it as a
    // submodule, cloned (without the submodule) into the workspace.
    std::string env;
    for (const auto& e : kEnv) env += " '" + e + "'";
    const std::string lib = t_.Out("lib"), proj = t_.Out("proj");
    const std::string script =
        "set -e; git init -q -b main '" + lib + "' && cd '" + lib +
        "' && echo lib > lib.txt && git add . && git commit -qm lib && git init -q -b main '" +
        proj + "' && cd '" + proj + "' && git submodule -q add '" + lib +
        "' lib && git commit -qm proj && git clone -q --no-hardlinks '" + proj + "' '" +
        t_.Ws("proj") + "'";
    ASSERT_EQ(std::system(("env" + env + " sh -c \"" + script + "\" >/dev/null 2>&1").c_str()), 0);
    ASSERT_TRUE(Exists(t_.Ws("proj/.gitmodules")));
  }
  RunResult Run(const std::string& script) {
    return RunCordon({"run", "--profile", "workspace-write", "--workspace", t_.ws(), "--ro",
                      t_.outside(), "--", "sh", "-c", "cd proj && " + script},
                     t_.ws(), kEnv);
  }
  std::string Config() const { return ReadFile(t_.Ws("proj/.git/config")); }
  ScratchTree t_;
};

TEST_F(SubmoduleTest, UpdateInitInARepositoryTheUserHadWorks) {
  const std::string before = Config();
  RunResult r = Run("git submodule update --init && cat lib/lib.txt && git status --short && "
                    "git config user.email me@example.org && echo done");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("lib\ndone"));
  EXPECT_THAT(Config(), HasSubstr("[submodule \"lib\"]"));
  EXPECT_THAT(Config(), HasSubstr("email = me@example.org"));
  EXPECT_EQ(Config().rfind(before.substr(0, before.find("[submodule")), 0), 0u)
      << "the user's entries stand as they were";
  EXPECT_EQ(ReadFile(t_.Ws("proj/lib/lib.txt")), "lib\n");
  EXPECT_TRUE(Exists(t_.Ws("proj/.git/modules/lib/HEAD")));
}

TEST_F(SubmoduleTest, TheUsersConfigTakesNoOtherChange) {
  const std::string before = Config();
  // Each of these is a change git would write by renaming its lock file
  // over the user's config: refused, the config unchanged.
  for (const char* change : {"core.fsmonitor 'touch /tmp/pwned'", "core.pager sh",
                             "remote.origin.url /tmp/elsewhere", "submodule.lib.update '!sh'",
                             "url./tmp/evil.insteadOf /"}) {
    RunResult r = Run(std::string("git config ") + change);
    EXPECT_NE(r.status, 0) << change;
    EXPECT_THAT(r.err, HasSubstr("a config the user had changes only by")) << change << r.err;
    EXPECT_EQ(Config(), before) << change;
  }
  // Nor by any other way than git's rename.
  RunResult w = Run("echo '[core]' >> .git/config");
  EXPECT_NE(w.status, 0);
  EXPECT_EQ(Config(), before);
}

TEST_F(SubmoduleTest, TheClonedSubmodulesHooksStayProtected) {
  RunResult r = Run("git submodule -q update --init && "
                    "printf '#!/bin/sh\\ntouch /tmp/pwned\\n' > .git/modules/lib/hooks/post-checkout");
  EXPECT_NE(r.status, 0);
  EXPECT_THAT(r.err, HasSubstr("protected path"));
  EXPECT_FALSE(Exists(t_.Ws("proj/.git/modules/lib/hooks/post-checkout")));
  EXPECT_TRUE(Exists(t_.Ws("proj/.git/modules/lib/HEAD"))) << "the honest clone went on";
  // A hook the user's repository had is no more writable than before.
  RunResult h = Run("echo x > .git/hooks/pre-commit");
  EXPECT_NE(h.status, 0);
  EXPECT_FALSE(Exists(t_.Ws("proj/.git/hooks/pre-commit")));
}

// git submodule add in a repository with no .gitmodules: git makes it (its
// lock file renamed into place, once per key), and one the run made is the
// tool's own. The user's .gitmodules, which could point a later `git
// submodule update` at another URL, stays protected.
TEST_F(SubmoduleTest, SubmoduleAddMakesANewGitmodules) {
  std::string env;
  for (const auto& e : kEnv) env += " '" + e + "'";
  const std::string app = t_.Ws("app");
  ASSERT_EQ(std::system(("env" + env + " sh -c \"git init -q -b main '" + app + "' && cd '" + app +
                         "' && git commit -q --allow-empty -m app\" >/dev/null 2>&1")
                            .c_str()),
            0);
  RunResult r = Run("cd ../app && git submodule -q add '" + t_.Out("lib") +
                    "' lib && git commit -qm add-lib && git submodule status && echo done");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr(" lib (heads/main)\ndone"));
  EXPECT_THAT(ReadFile(app + "/.gitmodules"), HasSubstr("url = " + t_.Out("lib")));
  EXPECT_THAT(ReadFile(app + "/.git/config"), HasSubstr("[submodule \"lib\"]"));
  EXPECT_EQ(ReadFile(app + "/lib/lib.txt"), "lib\n");
}

TEST_F(SubmoduleTest, TheUsersGitmodulesStaysProtected) {
  const std::string before = ReadFile(t_.Ws("proj/.gitmodules"));
  for (const std::string& change :
       {"git submodule -q add '" + t_.Out("lib") + "' lib2",
        std::string("git config -f .gitmodules submodule.lib.url /tmp/evil"),
        std::string("rm .gitmodules"), std::string("echo x >> .gitmodules")}) {
    RunResult r = Run(change);
    EXPECT_NE(r.status, 0) << change;
    EXPECT_THAT(r.err, HasSubstr(".gitmodules: protected path")) << change;
    EXPECT_EQ(ReadFile(t_.Ws("proj/.gitmodules")), before) << change;
  }
}

}  // namespace
}  // namespace cordon::testing
