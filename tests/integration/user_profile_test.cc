// Seed 004's base policy, first part: git's identity and config and the
// shell's startup files are read-only for every run, so `git commit` under
// cordon run takes the user's name from ~/.gitconfig and `bash -lc` the
// user's PATH from ~/.profile although HOME is private; nothing else of the
// home is, and a user's --deny of a file wins. Real git and bash, the real
// cordon binary.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include "tests/support/test_env.h"

namespace cordon::testing {
namespace {

using ::testing::HasSubstr;

class UserProfileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    home_ = t_.Out("home");
    ASSERT_EQ(::mkdir(home_.c_str(), 0755), 0);
    ASSERT_EQ(::mkdir((home_ + "/.ssh").c_str(), 0700), 0);
    WriteFile(home_ + "/.gitconfig",
              "[user]\n\tname = Canary Author\n\temail = canary@example.org\n"
              "[init]\n\tdefaultBranch = main\n");
    WriteFile(home_ + "/.ssh/id_ed25519", "CANARY-KEY\n");
  }
  // git init + commit in the workspace, under cordon run with HOME=home_.
  RunResult Commit(const std::vector<std::string>& extra = {}) {
    std::vector<std::string> args = {"run", "--profile", "workspace-write", "--workspace", t_.ws()};
    args.insert(args.end(), extra.begin(), extra.end());
    args.insert(args.end(), {"--", "sh", "-c",
                             "git init -q && git commit -q --allow-empty -m first && "
                             "git log --format='%an <%ae>'"});
    return RunCordon(args, "", {"HOME=" + home_});
  }
  // The identity only in $XDG_CONFIG_HOME/git/config, XDG_CONFIG_HOME=xdg:
  // the tool commits, tries to rewrite the identity and reads a file beside
  // it, by the variable and by its path.
  void ExpectIdentityFromXdg(const std::string& xdg) {
    ASSERT_EQ(::mkdir(xdg.c_str(), 0755), 0);
    ASSERT_EQ(::mkdir((xdg + "/git").c_str(), 0755), 0);
    WriteFile(xdg + "/git/config", "[user]\n\tname = Xdg Author\n\temail = xdg@example.org\n");
    WriteFile(xdg + "/other.conf", "XDG-CANARY\n");
    ::unlink((home_ + "/.gitconfig").c_str());
    RunResult r =
        RunCordon({"run", "--profile", "workspace-write", "--workspace", t_.ws(), "--", "sh", "-c",
                   "git init -q && git commit -q --allow-empty -m first && "
                   "git log --format='%an <%ae>'; git config --global user.name Evil; "
                   "cat \"$XDG_CONFIG_HOME/other.conf\" " +
                       xdg + "/other.conf; true"},
                  "", {"HOME=" + home_, "XDG_CONFIG_HOME=" + xdg});
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_THAT(r.out, HasSubstr("Xdg Author <xdg@example.org>")) << r.err;
    EXPECT_THAT(r.out, ::testing::Not(HasSubstr("XDG-CANARY")));
    EXPECT_THAT(ReadFile(xdg + "/git/config"), ::testing::Not(HasSubstr("Evil")));
  }

  ScratchTree t_;
  std::string home_;
};

TEST_F(UserProfileTest, GitTakesTheUsersIdentityFromTheirGitconfig) {
  RunResult r = Commit();
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("Canary Author <canary@example.org>"));
}

// git reads $XDG_CONFIG_HOME/git/config in place of ~/.config/git/config:
// an identity kept there (a dotfiles manager's choice) is the user's too,
// read-only, and nothing else in that directory is granted.
TEST_F(UserProfileTest, GitTakesTheIdentityFromXdgConfigHome) {
  ExpectIdentityFromXdg(t_.Out("xdg"));
}

// The same with XDG_CONFIG_HOME inside the home, whose other files stay out
// of reach: the private HOME holds the granted file at the same place, and
// the variable points there.
TEST_F(UserProfileTest, GitTakesTheIdentityFromAnXdgConfigHomeInsideTheHome) {
  ExpectIdentityFromXdg(home_ + "/.dotconfig");
}

// The ignore file ~/.gitconfig names (core.excludesFile) is read by git
// under the run as outside it: what it ignores stays out of `git status`.
// Read-only; a file beside it is not granted.
TEST_F(UserProfileTest, GitReadsTheExcludesFileTheGitconfigNames) {
  WriteFile(home_ + "/.gitconfig",
            "[user]\n\tname = Canary Author\n\temail = canary@example.org\n"
            "[core]\n\texcludesFile = ~/.gitignore_global\n");
  WriteFile(home_ + "/.gitignore_global", "*.ignored-globally\n");
  WriteFile(home_ + "/.gitignore_other", "OTHER-CANARY\n");
  WriteFile(t_.Ws("kept.txt"), "k\n");
  WriteFile(t_.Ws("junk.ignored-globally"), "j\n");
  RunResult r =
      RunCordon({"run", "--profile", "workspace-write", "--workspace", t_.ws(), "--", "sh", "-c",
                 "git init -q && git status --porcelain --untracked-files=all; cat " + home_ +
                     "/.gitignore_other; echo '*' >> " + home_ + "/.gitignore_global; echo done"},
                "", {"HOME=" + home_});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("?? kept.txt"));
  EXPECT_THAT(r.out, ::testing::Not(HasSubstr("junk.ignored-globally"))) << r.err;
  EXPECT_THAT(r.out, ::testing::Not(HasSubstr("OTHER-CANARY")));
  EXPECT_THAT(r.out, HasSubstr("done"));
  EXPECT_EQ(ReadFile(home_ + "/.gitignore_global"), "*.ignored-globally\n");
}

// A global core.hooksPath: git runs the user's hooks in the run as outside
// it (confined), and the tool cannot change them.
TEST_F(UserProfileTest, GitRunsTheHooksTheGitconfigNames) {
  WriteFile(home_ + "/.gitconfig",
            "[user]\n\tname = Canary Author\n\temail = canary@example.org\n"
            "[core]\n\thooksPath = ~/.githooks\n");
  ASSERT_EQ(::mkdir((home_ + "/.githooks").c_str(), 0755), 0);
  WriteFile(home_ + "/.githooks/pre-commit", "#!/bin/sh\necho HOOK-RAN >&2\n");
  ASSERT_EQ(::chmod((home_ + "/.githooks/pre-commit").c_str(), 0755), 0);
  RunResult r = RunCordon(
      {"run", "--profile", "workspace-write", "--workspace", t_.ws(), "--", "sh", "-c",
       "git init -q && git commit -q --allow-empty -m first && echo COMMITTED; echo evil >> " +
           home_ + "/.githooks/pre-commit; echo done"},
      "", {"HOME=" + home_});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("COMMITTED")) << r.err;
  EXPECT_THAT(r.err, HasSubstr("HOOK-RAN"));
  EXPECT_EQ(ReadFile(home_ + "/.githooks/pre-commit"), "#!/bin/sh\necho HOOK-RAN >&2\n");
}

TEST_F(UserProfileTest, TheGitconfigIsReadOnlyAndTheRestOfTheHomeOutOfReach) {
  RunResult r =
      RunCordon({"run", "--profile", "workspace-write", "--workspace", t_.ws(), "--", "sh", "-c",
                 "git config --global user.name Evil; cat " + home_ +
                     "/.ssh/id_ed25519; cat ~/.ssh/id_ed25519; echo done"},
                "", {"HOME=" + home_});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("done"));
  EXPECT_THAT(r.out, ::testing::Not(HasSubstr("CANARY-KEY")));
  EXPECT_THAT(ReadFile(home_ + "/.gitconfig"), HasSubstr("Canary Author"));
  EXPECT_THAT(ReadFile(home_ + "/.gitconfig"), ::testing::Not(HasSubstr("Evil")));
}

TEST_F(UserProfileTest, AUsersDenialOfTheGitconfigWins) {
  RunResult r = Commit({"--deny", home_ + "/.gitconfig"});
  EXPECT_NE(r.status, 0);
  EXPECT_THAT(r.out, ::testing::Not(HasSubstr("Canary Author")));
}

// A login shell reads ~/.profile, an interactive one ~/.bashrc (bash(1)
// INVOCATION): both are linked into the private HOME, so what they add to
// PATH (after /etc/profile reset it) and the aliases they define are the
// user's; neither can be written from inside.
class ShellStartupTest : public UserProfileTest {
 protected:
  void SetUp() override {
    UserProfileTest::SetUp();
    ASSERT_EQ(::mkdir((home_ + "/.local").c_str(), 0755), 0);
    ASSERT_EQ(::mkdir((home_ + "/.local/bin").c_str(), 0755), 0);
    WriteFile(home_ + "/.local/bin/hello", "#!/bin/sh\necho HELLO-FROM-LOCAL-BIN\n");
    ASSERT_EQ(::chmod((home_ + "/.local/bin/hello").c_str(), 0755), 0);
    WriteFile(home_ + "/.profile", "PATH=\"$HOME/.local/bin:$PATH\"\n");
    WriteFile(home_ + "/.bashrc", "alias canaryalias='echo CANARY-ALIAS'\n");
  }
  // bash -c SCRIPT (with `flag`) under cordon run, with HOME=home_ and the
  // user's ~/.local/bin granted as a toolchain would be (but not on PATH).
  RunResult Bash(const std::string& flag, const std::string& script,
                 const std::vector<std::string>& extra = {}) {
    std::vector<std::string> args = {"run",   "--profile", "workspace-write",    "--workspace",
                                     t_.ws(), "--ro",      home_ + "/.local/bin"};
    args.insert(args.end(), extra.begin(), extra.end());
    args.insert(args.end(), {"--", "bash", flag, script});
    return RunCordon(args, "", {"HOME=" + home_, "PATH=/usr/local/bin:/usr/bin:/bin"});
  }
};

TEST_F(ShellStartupTest, ALoginShellTakesThePathFromTheUsersProfile) {
  RunResult r = Bash("-lc", "hello");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("HELLO-FROM-LOCAL-BIN")) << r.err;
}

TEST_F(ShellStartupTest, AnInteractiveShellTakesTheUsersAliases) {
  RunResult r = Bash("-ic", "alias");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("canaryalias='echo CANARY-ALIAS'")) << r.err;
}

TEST_F(ShellStartupTest, TheStartupFilesAreReadOnly) {
  RunResult r = Bash("-c",
                     "echo 'alias evil=true' >> ~/.bashrc && echo WROTE-BASHRC; "
                     "echo 'PATH=/evil' >> " +
                         home_ +
                         "/.profile && echo WROTE-PROFILE; "
                         "rm -f ~/.profile && echo REMOVED; echo done");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("done"));
  EXPECT_THAT(r.out, ::testing::Not(HasSubstr("WROTE")));
  EXPECT_EQ(ReadFile(home_ + "/.bashrc"), "alias canaryalias='echo CANARY-ALIAS'\n");
  EXPECT_EQ(ReadFile(home_ + "/.profile"), "PATH=\"$HOME/.local/bin:$PATH\"\n");
}

TEST_F(ShellStartupTest, AUsersDenialOfAStartupFileWins) {
  RunResult r = Bash("-lc", "hello; cat " + home_ + "/.profile", {"--deny", home_ + "/.profile"});
  EXPECT_THAT(r.out, ::testing::Not(HasSubstr("HELLO-FROM-LOCAL-BIN")));
  EXPECT_THAT(r.out, ::testing::Not(HasSubstr(".local/bin")));
}

// zsh reads its startup files from $ZDOTDIR when it is set: those are
// granted read-only there (and only with ZDOTDIR set), nothing beside them.
TEST_F(ShellStartupTest, ZshStartupFilesAreReadFromZdotdir) {
  const std::string zdot = home_ + "/.config/zsh";
  ASSERT_EQ(::mkdir((home_ + "/.config").c_str(), 0755), 0);
  ASSERT_EQ(::mkdir(zdot.c_str(), 0755), 0);
  WriteFile(zdot + "/.zshrc", "ZSHRC-FROM-ZDOTDIR\n");
  WriteFile(zdot + "/.zsh_history", "HISTORY-CANARY\n");
  const std::string script =
      "cat \"$ZDOTDIR/.zshrc\" \"$ZDOTDIR/.zsh_history\"; echo evil >> \"$ZDOTDIR/.zshrc\"; "
      "echo done";
  auto run = [&](bool with_zdotdir) {
    std::vector<std::string> env = {"HOME=" + home_};
    if (with_zdotdir) env.push_back("ZDOTDIR=" + zdot);
    return RunCordon({"run", "--profile", "workspace-write", "--workspace", t_.ws(), "--", "sh",
                      "-c", "ZDOTDIR=" + zdot + "; " + script},
                     "", env);
  };
  RunResult r = run(true);
  EXPECT_THAT(r.out, HasSubstr("ZSHRC-FROM-ZDOTDIR")) << r.err;
  EXPECT_THAT(r.out, HasSubstr("done"));
  EXPECT_THAT(r.out, ::testing::Not(HasSubstr("HISTORY-CANARY")));
  EXPECT_EQ(ReadFile(zdot + "/.zshrc"), "ZSHRC-FROM-ZDOTDIR\n");
  RunResult without = run(false);
  EXPECT_THAT(without.out, HasSubstr("done")) << without.err;
  EXPECT_THAT(without.out, ::testing::Not(HasSubstr("ZSHRC-FROM-ZDOTDIR")));
}

// Only regular files: a directory named like a startup file grants nothing
// beneath it. explain names the grant of a file that is one.
TEST_F(ShellStartupTest, ExplainListsTheStartupFilesAndOnlyRegularOnes) {
  ASSERT_EQ(::mkdir((home_ + "/.zshrc").c_str(), 0755), 0);
  WriteFile(home_ + "/.zshrc/inside", "ZSHRC-CANARY\n");
  const std::string policy = t_.root() + "/p.json";
  WriteFile(policy, "{}");
  RunResult r = RunCordon({"policy", "explain", policy, "--workspace", t_.ws(), "--path",
                           home_ + "/.bashrc", "--path", home_ + "/.zshrc/inside"},
                          "", {"HOME=" + home_});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("(rule " + home_ + "/.bashrc, from user profile"));
  EXPECT_THAT(r.out, HasSubstr("outside     " + home_ + "/.zshrc/inside\n"));
  RunResult run = Bash("-c", "cat " + home_ + "/.zshrc/inside ~/.zshrc/inside; echo done");
  EXPECT_THAT(run.out, HasSubstr("done"));
  EXPECT_THAT(run.out, ::testing::Not(HasSubstr("ZSHRC-CANARY")));
}

TEST_F(UserProfileTest, ExplainListsTheBasePolicy) {
  const std::string policy = t_.root() + "/p.json";
  WriteFile(policy, "{}");
  RunResult r = RunCordon({"policy", "explain", policy, "--workspace", t_.ws(), "--path",
                           home_ + "/.gitconfig", "--path", home_ + "/.ssh/id_ed25519"},
                          "", {"HOME=" + home_});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("user profile: git identity and config"));
  EXPECT_THAT(r.out, HasSubstr("denied      " + home_ + "/.ssh/id_ed25519\n"));
  EXPECT_THAT(r.out, HasSubstr("(rule " + home_ + "/.ssh, from credential: denied)"));
}

TEST_F(UserProfileTest, ExplainWithoutAFileShowsTheBasePolicyOfARunFromHere) {
  RunResult r =
      RunCordon({"policy", "explain", "--path", home_ + "/.gitconfig"}, t_.ws(), {"HOME=" + home_});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("a run from here, with no policy file"));
  EXPECT_THAT(r.out, HasSubstr("Workspace    " + t_.ws()));
  EXPECT_THAT(r.out, HasSubstr("no policy file and no --profile"));
  EXPECT_THAT(r.out, HasSubstr("(rule " + home_ + "/.gitconfig, from user profile"));
  // A file still given is read as before: a broken one is an error.
  const std::string bad = t_.root() + "/bad.json";
  WriteFile(bad, "{");
  EXPECT_EQ(RunCordon({"policy", "explain", bad}, t_.ws(), {"HOME=" + home_}).status, 125);
}

}  // namespace
}  // namespace cordon::testing
