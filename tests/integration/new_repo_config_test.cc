// Issue 27 item 7, a new repository's configuration: for a repository the
// run itself creates, git's own writes of .git/config (its lock file
// renamed over it) go on, but no content that sets a key that runs a
// program when the user's git later works there (core.fsmonitor,
// core.hooksPath, include.path, a filter, ...) takes the config's place,
// and the config is written by no other way (open, link, symlink, an
// exchange). Real git, the real cordon binary, the config read from disk
// afterwards.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/support/test_env.h"

namespace cordon::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

const std::vector<std::string> kEnv = GitTestEnv();

class NewRepoConfigTest : public ::testing::Test {
 protected:
  RunResult Run(const std::string& script) {
    return RunCordon({"run", "--profile", "workspace-write", "--workspace", t_.ws(), "--", "sh",
                      "-c", script},
                     t_.ws(), kEnv);
  }
  std::string Config() const { return ReadFile(t_.Ws("r/.git/config")); }
  ScratchTree t_;
};

TEST_F(NewRepoConfigTest, GitInitConfigAndCommitWork) {
  RunResult r = Run(
      "git init -q -b main r && cd r && git config user.name Someone && "
      "git config submodule.s.url ../s && echo x > f && git add f && git commit -qm one && "
      "git log --format=%an && echo done");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("Tess Ter\ndone"));
  EXPECT_THAT(Config(), HasSubstr("name = Someone"));
  EXPECT_FALSE(Exists(t_.Ws("r/.git/config.lock")));
}

TEST_F(NewRepoConfigTest, EveryKeyThatRunsAProgramIsRefused) {
  // One `git config` per key, each after the last; the config on disk
  // must hold none of them, and the honest key set last must be there.
  const char* keys[][2] = {
      {"core.fsmonitor", "touch /tmp/pwned"}, {"core.hooksPath", "/tmp"},
      {"core.sshCommand", "sh"},              {"core.pager", "sh"},
      {"core.editor", "sh"},                  {"include.path", "../evil"},
      {"includeIf.gitdir:/.path", "../evil"}, {"filter.x.clean", "sh"},
      {"filter.x.smudge", "sh"},              {"filter.x.process", "sh"},
      {"diff.external", "sh"},                {"diff.x.textconv", "sh"},
      {"merge.x.driver", "sh"},               {"credential.helper", "sh"},
      {"gpg.program", "sh"},                  {"sequence.editor", "sh"},
      {"pager.log", "sh"},                    {"remote.o.uploadpack", "sh"},
      {"protocol.ext.allow", "always"},       {"alias.x", "!sh"},
      {"submodule.s.update", "!sh"},          {"difftool.x.cmd", "sh"},
  };
  std::string script = "git init -q r && cd r; ";
  for (const auto& k : keys) {
    script += std::string("git config '") + k[0] + "' '" + k[1] + "' 2>/dev/null; echo \"" +
              k[0] + ":$?\"; ";
  }
  script += "git config user.name Honest; echo \"honest:$?\"";
  RunResult r = Run(script);
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string config = Config();
  for (const auto& k : keys) {
    EXPECT_THAT(r.out, HasSubstr(std::string(k[0]) + ":")) << k[0];
    EXPECT_THAT(r.out, Not(HasSubstr(std::string(k[0]) + ":0\n"))) << k[0] << " was set";
  }
  EXPECT_THAT(config, Not(HasSubstr("sh")));
  EXPECT_THAT(config, Not(HasSubstr("pwned")));
  EXPECT_THAT(config, Not(HasSubstr("evil")));
  EXPECT_THAT(r.out, HasSubstr("honest:0"));
  EXPECT_THAT(config, HasSubstr("name = Honest"));
  EXPECT_THAT(r.err, HasSubstr("(sets core.fsmonitor)"));
}

TEST_F(NewRepoConfigTest, NoOtherWayWritesTheConfig) {
  const std::string evil = "[core]\\n\\tfsmonitor = touch /tmp/pwned\\n";
  RunResult r = Run(
      "git init -q r && cd r && printf '" + evil + "' > ../evil && "
      "cat ../evil >> .git/config 2>/dev/null; echo \"append:$?\"; "
      "ln -f ../evil .git/config 2>/dev/null; echo \"link:$?\"; "
      "ln -sf ../../evil .git/config 2>/dev/null; echo \"symlink:$?\"; "
      "cp ../evil .git/config.lock && mv .git/config.lock .git/config 2>/dev/null; "
      "echo \"rename:$?\"; "
      "/usr/bin/python3 -c 'import ctypes,os; l=ctypes.CDLL(None); "
      "print(\"exchange:\", l.renameat2(-100, b\"../evil\", -100, b\".git/config\", 2))'; "
      "echo done");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("done"));
  for (const char* way : {"append", "link", "symlink", "rename"}) {
    EXPECT_THAT(r.out, HasSubstr(std::string(way) + ":")) << way;
    EXPECT_THAT(r.out, Not(HasSubstr(std::string(way) + ":0\n"))) << way << " wrote the config";
  }
  EXPECT_THAT(r.out, HasSubstr("exchange: -1"));
  EXPECT_THAT(Config(), Not(HasSubstr("fsmonitor")));
  EXPECT_THAT(Config(), HasSubstr("[core]"));
}

TEST_F(NewRepoConfigTest, ALockFileWrittenAfterItsCheckChangesNothing) {
  // The tool keeps the lock file open, renames it over the config, then
  // writes through the fd it kept: the config is the checked bytes.
  RunResult r = Run(
      "git init -q r && cd r && /usr/bin/python3 -c '\n"
      "import os\n"
      "fd = os.open(\".git/config.lock\", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)\n"
      "os.write(fd, b\"[user]\\n\\tname = Checked\\n\")\n"
      "os.rename(\".git/config.lock\", \".git/config\")\n"
      "os.write(fd, b\"[core]\\n\\tfsmonitor = touch /tmp/pwned\\n\")\n"
      "os.close(fd)\n"
      "print(\"renamed\")' && echo done");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("renamed\ndone"));
  EXPECT_THAT(Config(), HasSubstr("name = Checked"));
  EXPECT_THAT(Config(), Not(HasSubstr("fsmonitor")));
  EXPECT_FALSE(Exists(t_.Ws("r/.git/config.lock")));
}

}  // namespace
}  // namespace cordon::testing
