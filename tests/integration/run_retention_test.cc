// Run retention (policy/run_retention.h, tools/run_retention.h): at the end
// of `cordon run` the records of the workspace's older runs go, as the
// settings file's `runs.keepDays` and `runs.keepRuns` bound them (30 days,
// 1000 runs by default; 0 turns a bound off; also under --policy FILE,
// whose own runs section the settings file's keys stand over), and never the run that is
// ending, a run still going, another workspace's run, a log named with
// --audit FILE or a file cordon did not make. A failed removal is one
// warning; the exit status stays the tool's. The real cordon binary; the
// state directory is read from disk afterwards.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <limits.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <ctime>
#include <string>
#include <vector>

#include "policy/journal_run.h"
#include "policy/run_record.h"
#include "tests/support/child_process.h"
#include "tests/support/test_env.h"

namespace cordon::testing {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::Not;

class RunRetentionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(::mkdir((t_.root() + "/home").c_str(), 0700), 0);
    env_ = {"HOME=" + t_.root() + "/home", "XDG_STATE_HOME=" + t_.root() + "/state",
            "XDG_CONFIG_HOME=" + t_.root() + "/config"};
    char real[PATH_MAX];
    ASSERT_NE(::realpath(t_.ws().c_str(), real), nullptr);
    ws_ = real;
  }
  void Settings(const std::string& text) {
    for (const std::string& d : {t_.root() + "/config", t_.root() + "/config/cordon"}) {
      ASSERT_TRUE(::mkdir(d.c_str(), 0700) == 0 || errno == EEXIST);
    }
    WriteFile(t_.root() + "/config/cordon/settings.json", text);
  }
  RunResult Run(const std::string& script, std::vector<std::string> flags = {}) {
    std::vector<std::string> args = {"run", "--workspace", t_.ws(), "--approvals", "deny"};
    args.insert(args.end(), flags.begin(), flags.end());
    args.insert(args.end(), {"--", "sh", "-c", script});
    return RunCordon(args, t_.ws(), env_);
  }
  std::string Runs() const { return t_.root() + "/state/cordon/runs"; }
  // The run records on disk (the index beside them left out).
  std::vector<std::string> Records() const {
    std::vector<std::string> out;
    for (const std::string& n : ListDir(Runs())) {
      if (policy::ValidRunId(n)) out.push_back(n);
    }
    return out;
  }
  // A record of a run of `workspace` that began `days` ago, as a cordon
  // before run retention left it: its directory, run.json and default log.
  std::string OldRecord(int days, const std::string& workspace) {
    for (const std::string& d : {t_.root() + "/state", t_.root() + "/state/cordon", Runs()}) {
      EXPECT_TRUE(::mkdir(d.c_str(), 0700) == 0 || errno == EEXIST) << d;
    }
    const time_t then = ::time(nullptr) - static_cast<time_t>(days) * 86400;
    struct tm tm {};
    ::gmtime_r(&then, &tm);
    char stamp[32];
    std::strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &tm);
    const std::string id = std::string(stamp) + "-" + std::to_string(900000 + next_++);
    policy::RunRecord r;
    r.meta.id = id;
    r.meta.workspace = workspace;
    r.meta.started_s = then;
    r.meta.argv = {"/bin/true"};
    r.audit_path = Runs() + "/" + id + "/audit.jsonl";
    r.ended_s = then;
    const std::string dir = Runs() + "/" + id;
    EXPECT_EQ(::mkdir(dir.c_str(), 0700), 0) << dir;
    WriteFile(dir + "/run.json", policy::RunRecordJson(r));
    WriteFile(dir + "/audit.jsonl", "{}\n");
    return id;
  }
  // The id of the run whose record appeared since `before`.
  std::string NewRecord(const std::vector<std::string>& before) {
    for (const std::string& id : Records()) {
      if (std::find(before.begin(), before.end(), id) == before.end()) return id;
    }
    return "";
  }

  ScratchTree t_;
  std::vector<std::string> env_;
  std::string ws_;
  int next_ = 0;
};

// The first run with retention meets records no index holds yet (made
// before it): by default those of this workspace older than 30 days go;
// the recent ones, another workspace's and the run's own stay.
TEST_F(RunRetentionTest, OldRunsGoAtTheEndOfARunAndRecentOnesStay) {
  const std::string old40 = OldRecord(40, ws_), old31 = OldRecord(31, ws_);
  const std::string recent = OldRecord(29, ws_), today = OldRecord(0, ws_);
  const std::string elsewhere = OldRecord(40, t_.outside());
  RunResult r = Run("exit 0");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_FALSE(Exists(Runs() + "/" + old40));
  EXPECT_FALSE(Exists(Runs() + "/" + old31));
  EXPECT_TRUE(Exists(Runs() + "/" + recent));
  EXPECT_TRUE(Exists(Runs() + "/" + today));
  EXPECT_TRUE(Exists(Runs() + "/" + elsewhere)) << "another workspace's run is its own to bound";
  EXPECT_EQ(Records().size(), 4u);  // recent, today, elsewhere and the run itself
  EXPECT_THAT(r.err, Not(HasSubstr("could not be removed")));
  // `cordon runs list` shows what is kept.
  RunResult list = RunCordon({"runs", "list"}, t_.ws(), env_);
  EXPECT_THAT(list.out, HasSubstr(recent));
  EXPECT_THAT(list.out, Not(HasSubstr(old40)));
}

// The pass runs while the tool does (once it has exec'd), so its cost is
// hidden behind the tool's: the old record is gone while the tool still
// waits. What it says comes after the tool's own output all the same.
TEST_F(RunRetentionTest, OldRunsGoWhileTheToolRunsAndItsLinesFollowTheTools) {
  const std::string old40 = OldRecord(40, ws_);
  const std::string err = t_.root() + "/err.txt";
  ChildIo io;
  io.cwd = t_.ws();
  io.env = env_;
  io.err_file = err;
  BackgroundCordon cordon(
      {"--log-level", "info", "run", "--workspace", t_.ws(), "--approvals", "deny", "--", "sh",
       "-c", "while [ ! -e go ]; do sleep 0.02; done; echo TOOL-END >&2"},
      io);
  ASSERT_TRUE(cordon.started());
  bool gone = false;
  for (int i = 0; i < 1000 && !gone; ++i) {  // up to 20 s on a loaded machine
    gone = !Exists(Runs() + "/" + old40);
    if (!gone) ::usleep(20000);
  }
  EXPECT_TRUE(gone) << "the old record is still there while the tool runs";
  WriteFile(t_.Ws("go"), "");
  const int status = cordon.Wait();
  ASSERT_TRUE(WIFEXITED(status)) << status;
  EXPECT_EQ(WEXITSTATUS(status), 0);
  const std::string said = ReadFile(err);
  const size_t tool = said.find("TOOL-END"), removed = said.find("removed the records of 1");
  ASSERT_NE(tool, std::string::npos) << said;
  ASSERT_NE(removed, std::string::npos) << said;
  EXPECT_LT(tool, removed) << said;
}

// runs.keepRuns: the newest N of the workspace's runs stay, the run that
// just ended always among them; its neighbours made by cordon itself are
// found through the index, not a reading of every record.
TEST_F(RunRetentionTest, TheCountBoundKeepsTheNewestRuns) {
  Settings(R"({"runs": {"keepRuns": 3}})");
  std::string last;
  for (int i = 0; i < 5; ++i) {
    const std::vector<std::string> before = Records();
    RunResult r = Run("true");
    ASSERT_EQ(r.status, 0) << r.err;
    last = NewRecord(before);
  }
  EXPECT_EQ(Records().size(), 3u);
  EXPECT_THAT(Records(), Contains(last));
}

// A bound of 0 is off: keepDays 0 keeps an old run (the count still
// bounds them); both 0: nothing is removed automatically, however old or
// many.
TEST_F(RunRetentionTest, RetentionOffKeepsEverything) {
  Settings(R"({"runs": {"keepDays": 0}})");
  const std::string old = OldRecord(400, ws_);
  ASSERT_EQ(Run("true").status, 0);
  EXPECT_TRUE(Exists(Runs() + "/" + old));
  Settings(R"({"runs": {"keepDays": 0, "keepRuns": 0}})");
  for (int i = 0; i < 3; ++i) ASSERT_EQ(Run("true").status, 0);
  EXPECT_TRUE(Exists(Runs() + "/" + old));
  EXPECT_EQ(Records().size(), 5u);
  // `cordon runs prune` still removes by hand what it is told to.
  RunResult p = RunCordon({"runs", "prune", "--older-than", "100d"}, t_.ws(), env_);
  EXPECT_EQ(p.status, 0) << p.err;
  EXPECT_THAT(p.out, HasSubstr("1 run record(s) removed"));
  EXPECT_FALSE(Exists(Runs() + "/" + old));
}

// Retention is the user's preference, not a policy of the run: under
// --policy FILE the settings file's runs section still bounds the records,
// each key it sets over FILE's; a key it leaves out is FILE's (or the
// default).
TEST_F(RunRetentionTest, UnderAPolicyFileTheSettingsFileStillBoundsTheRuns) {
  Settings(R"({"runs": {"keepRuns": 2}})");
  const std::string policy = t_.Out("policy.json");
  WriteFile(policy, R"({"runs": {"keepRuns": 1000}})");
  for (int i = 0; i < 4; ++i) {
    RunResult r = Run("true", {"--policy", policy});
    ASSERT_EQ(r.status, 0) << r.err;
  }
  EXPECT_EQ(Records().size(), 2u);
  // The settings file names keepDays alone: FILE's keepRuns stands.
  Settings(R"({"runs": {"keepDays": 90}})");
  WriteFile(policy, R"({"runs": {"keepRuns": 1}})");
  RunResult r = Run("true", {"--policy", policy, "--log-level", "info"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(Records().size(), 1u);
  EXPECT_THAT(r.err, HasSubstr("runs.keepDays = 90, runs.keepRuns = 1"));
}

// The honest neighbour: a settings file without a runs section leaves
// FILE's bound as it is; none at all, the defaults (a recent run stays).
TEST_F(RunRetentionTest, UnderAPolicyFileWithoutSettingsItsOwnBoundStands) {
  const std::string policy = t_.Out("policy.json");
  WriteFile(policy, "{}");
  const std::string recent = OldRecord(10, ws_), old = OldRecord(40, ws_);
  ASSERT_EQ(Run("true", {"--policy", policy}).status, 0);
  EXPECT_TRUE(Exists(Runs() + "/" + recent));
  EXPECT_FALSE(Exists(Runs() + "/" + old));
  Settings(R"({"limits": {"treeDepth": 32}})");
  WriteFile(policy, R"({"runs": {"keepRuns": 1}})");
  RunResult r = Run("true", {"--policy", policy});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(Records().size(), 1u);
  EXPECT_FALSE(Exists(Runs() + "/" + recent));
}

// A settings file that does not parse cannot say how many runs the user
// keeps: under --policy FILE the run is FILE's and goes ahead, and no
// record is removed, with one line.
TEST_F(RunRetentionTest, UnderAPolicyFileABadSettingsFileRemovesNothing) {
  Settings(R"({"runs": {"keepRuns": -1}})");
  const std::string policy = t_.Out("policy.json");
  WriteFile(policy, R"({"runs": {"keepRuns": 1}})");
  const std::string old = OldRecord(40, ws_);
  RunResult r = Run("exit 4", {"--policy", policy});
  EXPECT_EQ(r.status, 4) << r.err;
  EXPECT_TRUE(Exists(Runs() + "/" + old));
  EXPECT_EQ(Records().size(), 2u);
  EXPECT_THAT(r.err, HasSubstr("run retention skipped this time"));
  EXPECT_THAT(r.err, HasSubstr("/runs/keepRuns: must be a whole number from 0"));
  EXPECT_EQ(Lines(r.err), 1) << r.err;
}

// A bad value is the settings parser's one line and 125: no tool runs and
// nothing is removed.
TEST_F(RunRetentionTest, ABadRetentionSettingIsOneLineAnd125) {
  const std::string old = OldRecord(40, ws_);
  const char* cases[][2] = {
      {R"({"runs": {"keepDays": -1}})", "/runs/keepDays: must be a whole number from 0"},
      {R"({"runs": {"keepDays": "30d"}})", "/runs/keepDays: must be a whole number from 0"},
      {R"({"runs": {"keepRuns": 1.5}})", "/runs/keepRuns: must be a whole number from 0"},
      {R"({"runs": {"keep": 10}})", "/runs/keep: unknown key"},
      {R"({"runs": []})", "/runs: must be an object"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c[0]);
    Settings(c[0]);
    RunResult r = Run("touch ran", {"--profile", "workspace-write"});
    EXPECT_EQ(r.status, 125);
    EXPECT_THAT(r.err, HasSubstr("settings.json"));
    EXPECT_THAT(r.err, HasSubstr(c[1]));
    EXPECT_EQ(Lines(r.err), 1) << r.err;
    EXPECT_FALSE(Exists(t_.Ws("ran")));
    EXPECT_TRUE(Exists(Runs() + "/" + old));
  }
}

// A run still going holds its record (and its journal) locked: an end that
// would let it go by the count keeps it, as `cordon runs prune` does, and
// the next end after it has ended removes it.
TEST_F(RunRetentionTest, ARunStillGoingIsKept) {
  Settings(R"({"runs": {"keepRuns": 1}})");
  ChildIo io;
  io.cwd = t_.ws();
  io.env = env_;
  BackgroundCordon going({"run", "--profile", "workspace-write", "--workspace", t_.ws(), "--", "sh",
                          "-c", "touch started && sleep 3"},
                         io);
  for (int i = 0; i < 250 && !Exists(t_.Ws("started")); ++i) ::usleep(20000);
  ASSERT_TRUE(Exists(t_.Ws("started")));
  const std::vector<std::string> with_it = Records();
  ASSERT_EQ(with_it.size(), 1u);
  RunResult r = Run("true");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(Records(), Contains(with_it[0])) << "a run still going lost its record";
  EXPECT_THAT(r.err, Not(HasSubstr("could not be removed")));
  // `cordon runs prune` keeps it too, its journal as well, and says so.
  const std::string journal = t_.root() + "/state/cordon/journal/runs/" + with_it[0];
  ASSERT_TRUE(Exists(journal));
  RunResult p = RunCordon({"runs", "prune", "--older-than", "0s"}, t_.ws(), env_);
  EXPECT_EQ(p.status, 0) << p.err;
  EXPECT_THAT(p.err, HasSubstr(with_it[0] + " is still going"));
  EXPECT_EQ(Records(), with_it);
  EXPECT_TRUE(Exists(journal));
  EXPECT_EQ(going.Wait(), 0);
  ASSERT_EQ(Run("true").status, 0);
  EXPECT_THAT(Records(), Not(Contains(with_it[0])));
  EXPECT_EQ(Records().size(), 1u);
}

// What cordon did not make is never removed: a log the user named with
// --audit FILE outlives its run's record, and a file put in an old run's
// directory keeps that directory (one warning line); the run's exit
// status stays the tool's.
TEST_F(RunRetentionTest, ANamedLogAndFilesCordonDidNotMakeStay) {
  Settings(R"({"runs": {"keepRuns": 1}})");
  const std::string old = OldRecord(40, ws_);
  WriteFile(Runs() + "/" + old + "/notes.txt", "mine\n");
  const std::string named = t_.Out("named.jsonl");
  std::vector<std::string> before = Records();
  RunResult r = Run("exit 3", {"--audit", named});
  EXPECT_EQ(r.status, 3) << r.err;
  EXPECT_TRUE(Exists(Runs() + "/" + old + "/notes.txt"));
  EXPECT_FALSE(Exists(Runs() + "/" + old + "/run.json"));
  EXPECT_THAT(r.err, HasSubstr("could not be removed"));
  EXPECT_THAT(r.err, HasSubstr("holds files cordon did not make"));
  EXPECT_EQ(Lines(r.err), 1) << r.err;
  const std::string named_run = NewRecord(before);
  ASSERT_FALSE(named_run.empty());
  const std::string log = ReadFile(named);
  ASSERT_THAT(log, HasSubstr(named_run));
  r = Run("true");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(Records(), Not(Contains(named_run)));
  EXPECT_EQ(ReadFile(named), log) << "the log the user named was touched";
}

// `cordon runs prune` removes through the same removal: in a directory that
// holds a file cordon did not make only cordon's own files go; the file and
// its directory stay, one line names it and prune exits 125. The other old
// run still goes.
TEST_F(RunRetentionTest, PruneLeavesADirectoryHoldingFilesCordonDidNotMake) {
  const std::string old = OldRecord(40, ws_), other = OldRecord(41, ws_);
  WriteFile(Runs() + "/" + old + "/notes.txt", "mine\n");
  RunResult p = RunCordon({"runs", "prune", "--older-than", "30d"}, t_.ws(), env_);
  EXPECT_EQ(p.status, 125) << p.err;
  EXPECT_THAT(p.err, HasSubstr(old + " holds files cordon did not make"));
  EXPECT_EQ(Lines(p.err), 1) << p.err;
  EXPECT_EQ(ReadFile(Runs() + "/" + old + "/notes.txt"), "mine\n");
  EXPECT_FALSE(Exists(Runs() + "/" + old + "/run.json"));
  EXPECT_FALSE(Exists(Runs() + "/" + other));
  EXPECT_THAT(p.out, HasSubstr("1 run record(s) removed"));
}

// Past runs.keepRuns a recoverable run's journal goes with its record,
// named in one line (it can no longer be undone).
TEST_F(RunRetentionTest, PastTheCountTheJournalGoesWithTheRecord) {
  Settings(R"({"runs": {"keepRuns": 1}})");
  WriteFile(t_.Ws("mine.txt"), "mine\n");
  std::vector<std::string> before = Records();
  ASSERT_EQ(Run("rm mine.txt", {"--profile", "workspace-write"}).status, 0);
  const std::string id = NewRecord(before);
  const std::string journal = t_.root() + "/state/cordon/journal/runs/" + id;
  ASSERT_TRUE(Exists(journal));
  RunResult r = Run("true");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_FALSE(Exists(journal));
  EXPECT_THAT(Records(), Not(Contains(id)));
  EXPECT_THAT(r.err, HasSubstr("removed the journal of run " + id));
  EXPECT_THAT(r.err, HasSubstr("runs.keepRuns = 1"));
}

}  // namespace
}  // namespace cordon::testing
