// Issue 24, item 5: a GitHub Actions step under `cordon run` writes its
// command files ($GITHUB_OUTPUT, $GITHUB_STEP_SUMMARY, ...) and uses
// $RUNNER_TEMP, in a layout like a runner's (_temp/_runner_file_commands),
// while the other files of that directory stay out of reach; without
// GITHUB_ACTIONS nothing is granted. Real cordon, real shell.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include "tests/support/test_env.h"

namespace cordon::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

class CiRunnerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    work_ = t_.Out("work");
    temp_ = work_ + "/_temp";
    cmds_ = temp_ + "/_runner_file_commands";
    for (const std::string& d : {work_, temp_, cmds_, work_ + "/repo", temp_ + "/_github_workflow",
                                 t_.Out("toolcache")}) {
      ASSERT_EQ(::mkdir(d.c_str(), 0755), 0) << d;
    }
    WriteFile(cmds_ + "/set_output_1", "");               // exists, as the runner makes it
    WriteFile(cmds_ + "/set_env_1", "");
    WriteFile(cmds_ + "/add_path_1", "");
    WriteFile(cmds_ + "/set_output_0", "earlier=step\n");  // another step's: a sibling
    WriteFile(temp_ + "/_github_workflow/event.json", "{}\n");
    WriteFile(t_.Out("toolcache/tool.sh"), "#!/bin/sh\necho toolcache-ran\n");
    ASSERT_EQ(::chmod(t_.Out("toolcache/tool.sh").c_str(), 0755), 0);
  }
  std::vector<std::string> RunnerEnv(bool actions = true) const {
    return {actions ? "GITHUB_ACTIONS=true" : "GITHUB_ACTIONS",  // no '=': unset
            "GITHUB_OUTPUT=" + cmds_ + "/set_output_1",
            "GITHUB_ENV=" + cmds_ + "/set_env_1",
            "GITHUB_PATH=" + cmds_ + "/add_path_1",
            "GITHUB_STEP_SUMMARY=" + cmds_ + "/step_summary_1",  // not yet existing
            "RUNNER_TEMP=" + temp_,
            "RUNNER_TOOL_CACHE=" + t_.Out("toolcache"),
            "GITHUB_WORKSPACE=" + t_.ws()};
  }
  // From `cwd` (default: above both the workspace and the runner's files,
  // so only $GITHUB_WORKSPACE makes the workspace the checkout).
  RunResult Step(const std::string& script, const std::vector<std::string>& env,
                 const std::string& cwd = "") {
    return RunCordon({"run", "--profile", "workspace-write", "--", "sh", "-c", script},
                     cwd.empty() ? t_.root() : cwd, env);
  }
  ScratchTree t_;
  std::string work_, temp_, cmds_;
};

TEST_F(CiRunnerTest, AStepWritesItsOutputAndSummary) {
  RunResult r = Step("echo x=1 >> \"$GITHUB_OUTPUT\"; echo '# hi' >> \"$GITHUB_STEP_SUMMARY\"; "
                     "echo A=b >> \"$GITHUB_ENV\"; echo /opt/bin >> \"$GITHUB_PATH\"",
                     RunnerEnv());
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(ReadFile(cmds_ + "/set_output_1"), "x=1\n");
  EXPECT_EQ(ReadFile(cmds_ + "/step_summary_1"), "# hi\n");
  EXPECT_EQ(ReadFile(cmds_ + "/set_env_1"), "A=b\n");
  EXPECT_EQ(ReadFile(cmds_ + "/add_path_1"), "/opt/bin\n");
}

TEST_F(CiRunnerTest, NothingElseOfTheRunnersFilesIsWritable) {
  RunResult r = Step("echo evil=1 >> " + cmds_ + "/set_output_0; echo new > " + cmds_ +
                         "/new_file; echo '{\"x\":1}' > " + temp_ +
                         "/_github_workflow/event.json; rm -f " + cmds_ +
                         "/set_output_1; echo done",
                     RunnerEnv());
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("done"));
  EXPECT_EQ(ReadFile(cmds_ + "/set_output_0"), "earlier=step\n");
  EXPECT_FALSE(Exists(cmds_ + "/new_file"));
  EXPECT_EQ(ReadFile(temp_ + "/_github_workflow/event.json"), "{}\n");
  EXPECT_TRUE(Exists(cmds_ + "/set_output_1"));
}

TEST_F(CiRunnerTest, RunnerTempIsWritableAndTheToolCacheRuns) {
  RunResult r = Step("echo t > \"$RUNNER_TEMP/scratch\" && cat \"$RUNNER_TEMP/scratch\" && " +
                         t_.Out("toolcache/tool.sh") + " && pwd",
                     RunnerEnv());
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(ReadFile(temp_ + "/scratch"), "t\n");
  EXPECT_THAT(r.out, HasSubstr("toolcache-ran"));
  // The workspace defaults to $GITHUB_WORKSPACE (the caller's cwd is elsewhere).
  EXPECT_THAT(r.out, HasSubstr(t_.ws() + "\n"));
  // The tool cache is read-only.
  RunResult w = Step("echo x > " + t_.Out("toolcache/new") + "; echo done", RunnerEnv());
  EXPECT_FALSE(Exists(t_.Out("toolcache/new")));
}

TEST_F(CiRunnerTest, WithoutGithubActionsNothingIsGranted) {
  RunResult r = Step("echo x=1 >> \"$GITHUB_OUTPUT\"; echo '# hi' >> \"$GITHUB_STEP_SUMMARY\"; "
                     "echo t > \"$RUNNER_TEMP/scratch\"; echo ws > ws.txt",
                     RunnerEnv(false), t_.ws());
  EXPECT_EQ(ReadFile(cmds_ + "/set_output_1"), "");
  EXPECT_FALSE(Exists(cmds_ + "/step_summary_1"));
  EXPECT_FALSE(Exists(temp_ + "/scratch"));
  EXPECT_EQ(ReadFile(t_.Ws("ws.txt")), "ws\n");  // the cwd's workspace, as always
}

TEST_F(CiRunnerTest, BadValuesAreNotGrantedAndSaySo) {
  std::vector<std::string> env = RunnerEnv();
  env.push_back("GITHUB_OUTPUT=relative/out");
  env.push_back("GITHUB_ENV=" + cmds_);                  // a directory
  env.push_back("GITHUB_PATH=" + t_.Out("elsewhere"));   // not beneath RUNNER_TEMP
  env.push_back("RUNNER_TOOL_CACHE=/");
  RunResult r = Step("echo x > " + cmds_ + "/add_path_1; echo y > " + t_.Out("elsewhere") +
                         "; echo done",
                     env);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("$GITHUB_OUTPUT ('relative/out') not granted: not an absolute path"));
  EXPECT_THAT(r.err, HasSubstr("a directory where a file is expected"));
  EXPECT_THAT(r.err, HasSubstr("not beneath a granted $RUNNER_TEMP"));
  EXPECT_THAT(r.err, HasSubstr("$RUNNER_TOOL_CACHE ('/') not granted: the root directory"));
  EXPECT_FALSE(Exists(t_.Out("elsewhere")));
  EXPECT_EQ(ReadFile(cmds_ + "/add_path_1"), "");
}

TEST_F(CiRunnerTest, ExplainListsTheGrantsWithTheirReasons) {
  const std::string policy = t_.root() + "/p.json";
  WriteFile(policy, "{}");
  RunResult r = RunCordon({"policy", "explain", policy, "--path", cmds_ + "/set_output_1",
                           "--path", cmds_ + "/set_output_0"},
                          t_.root(), RunnerEnv());
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("GitHub Actions: step output"));
  EXPECT_THAT(r.out, HasSubstr(cmds_ + "/step_summary_1"));
  EXPECT_THAT(r.out, HasSubstr("GitHub Actions: runner temp"));
  EXPECT_THAT(r.out, HasSubstr("GitHub Actions: tool cache"));
  EXPECT_THAT(r.out, HasSubstr("Workspace    " + t_.ws()));
}

TEST_F(CiRunnerTest, GitlabCiDefaultsTheWorkspaceToTheProjectDir) {
  RunResult r = RunCordon({"run", "--profile", "workspace-write", "--", "sh", "-c",
                           "pwd; echo A=1 > build.env; echo t > " + temp_ + "/x; echo done"},
                          t_.root(), {"GITLAB_CI=true", "CI_PROJECT_DIR=" + t_.ws(),
                                      "RUNNER_TEMP=" + temp_});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr(t_.ws() + "\n"));
  EXPECT_EQ(ReadFile(t_.Ws("build.env")), "A=1\n");
  EXPECT_FALSE(Exists(temp_ + "/x"));
}

}  // namespace
}  // namespace cordon::testing
