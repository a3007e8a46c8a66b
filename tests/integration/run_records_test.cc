// Issue 27 item 5, audit by default: every run writes its record and its
// hash-chained log to ${XDG_STATE_HOME}/cordon/runs/RUN/ unless --audit
// none; the run's stretch of the log is anchored in the record (and the
// --events stream), so `cordon audit verify` reports records cut from the
// end and a log written again whole; `cordon runs list|show` read them;
// the tool cannot reach any of it. The real cordon binary, the disk read
// afterwards.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/support/test_env.h"

namespace cordon::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

class RunRecordsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(::mkdir((t_.root() + "/home").c_str(), 0700), 0);
    env_ = {"HOME=" + t_.root() + "/home", "XDG_STATE_HOME=" + t_.root() + "/state"};
  }
  RunResult Run(const std::string& script, std::vector<std::string> flags = {}) {
    std::vector<std::string> args = {"run", "--profile", "workspace-write", "--workspace", t_.ws(),
                                     "--approvals", "deny"};
    args.insert(args.end(), flags.begin(), flags.end());
    args.insert(args.end(), {"--", "sh", "-c", script});
    return RunCordon(args, t_.ws(), env_);
  }
  RunResult Cordon(std::vector<std::string> args) { return RunCordon(args, t_.ws(), env_); }
  std::string Runs() const { return t_.root() + "/state/cordon/runs"; }
  // The id of the last run `cordon runs list` shows.
  std::string LastRun() {
    RunResult list = Cordon({"runs", "list"});
    EXPECT_EQ(list.status, 0) << list.err;
    std::string out = list.out;
    if (out.empty()) return "";
    out.pop_back();
    const std::string last = out.substr(out.rfind('\n') == std::string::npos ? 0 : out.rfind('\n') + 1);
    return last.substr(0, last.find(' '));
  }
  nlohmann::json Record(const std::string& id) {
    return nlohmann::json::parse(ReadFile(Runs() + "/" + id + "/run.json"), nullptr, false);
  }
  ScratchTree t_;
  std::vector<std::string> env_;
};

TEST_F(RunRecordsTest, EveryRunWritesAnAnchoredLogByDefault) {
  WriteFile(t_.Ws("old.txt"), "old\n");
  RunResult r = Run("echo x > new.txt && rm old.txt && cat /etc/shadow; true");
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string id = LastRun();
  ASSERT_FALSE(id.empty());
  const std::string log = Runs() + "/" + id + "/audit.jsonl";
  ASSERT_TRUE(Exists(log));
  struct stat st;
  ASSERT_EQ(::stat((Runs() + "/" + id).c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  nlohmann::json rec = Record(id);
  ASSERT_FALSE(rec.is_discarded());
  EXPECT_EQ(rec["exit_status"], 0);
  EXPECT_EQ(rec["audit"], log);
  EXPECT_EQ(rec["anchor"]["first_seq"], 1);
  RunResult v = Cordon({"audit", "verify", log});
  EXPECT_EQ(v.status, 0) << v.out << v.err;
  EXPECT_THAT(v.out, HasSubstr("intact"));
  EXPECT_THAT(v.out, HasSubstr("anchored by 1 run record"));
  // What it changed, from the log.
  RunResult show = Cordon({"runs", "show", id});
  EXPECT_EQ(show.status, 0) << show.out << show.err;
  EXPECT_THAT(show.out, HasSubstr("created"));
  EXPECT_THAT(show.out, HasSubstr(t_.Ws("new.txt")));
  EXPECT_THAT(show.out, HasSubstr("deleted (kept)"));
  EXPECT_THAT(show.out, HasSubstr(t_.Ws("old.txt")));
  EXPECT_THAT(show.out, HasSubstr("intact, anchored"));
}

// A call's own failure (/dev/tty opened with no controlling terminal:
// ENXIO, as bare) is a `failed` decision, not a refusal, and `runs show`
// counts none; a write to a protected path beside it is refused.
TEST_F(RunRecordsTest, ACallsOwnFailureIsNotARefusal) {
  RunResult r = Run("setsid sh -c 'exec 3<>/dev/tty' 2>/dev/null; echo done");
  ASSERT_EQ(r.status, 0) << r.err;
  ASSERT_THAT(r.out, HasSubstr("done"));
  std::string id = LastRun();
  std::string log = ReadFile(Runs() + "/" + id + "/audit.jsonl");
  EXPECT_THAT(log, HasSubstr(R"("errno":6)")) << log;
  EXPECT_THAT(log, HasSubstr(R"("result":"failed")")) << log;
  EXPECT_THAT(log, Not(HasSubstr(R"("result":"refused")"))) << log;
  RunResult show = Cordon({"runs", "show", id});
  EXPECT_THAT(show.out, HasSubstr("  0 call(s) refused by the supervisor")) << show.out;
  ASSERT_EQ(::mkdir(t_.Ws(".git").c_str(), 0755), 0);
  WriteFile(t_.Ws(".git/config"), "[core]\n");
  ASSERT_EQ(Run("echo x >> .git/config 2>/dev/null; true").status, 0);
  id = LastRun();
  log = ReadFile(Runs() + "/" + id + "/audit.jsonl");
  EXPECT_THAT(log, HasSubstr(R"("result":"refused")")) << log;
  show = Cordon({"runs", "show", id});
  EXPECT_THAT(show.out, HasSubstr("  1 call(s) refused by the supervisor")) << show.out;
}

TEST_F(RunRecordsTest, AuditNoneWritesNoLogAndNoRecord) {
  RunResult r = Run("echo x > new.txt", {"--audit", "none"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_FALSE(Exists(Runs())) << "nothing under the state home";
  EXPECT_FALSE(Exists(t_.Ws("none"))) << "'none' is no file name";
  // The neighbour: the next run without the flag has both.
  ASSERT_EQ(Run("true").status, 0);
  EXPECT_FALSE(LastRun().empty());
}

TEST_F(RunRecordsTest, VerifyReportsTruncationAndReplacement) {
  ASSERT_EQ(Run("echo a > a && echo b > b && rm a").status, 0);
  const std::string id = LastRun();
  const std::string log = Runs() + "/" + id + "/audit.jsonl";
  const std::string whole = ReadFile(log);
  // Its last two records cut: the chain alone still holds.
  std::string cut = whole.substr(0, whole.rfind('\n', whole.size() - 2) + 1);
  cut = cut.substr(0, cut.rfind('\n', cut.size() - 2) + 1);
  WriteFile(log, cut);
  RunResult v = Cordon({"audit", "verify", log});
  EXPECT_EQ(v.status, 1) << v.out;
  EXPECT_THAT(v.out, HasSubstr("truncated"));
  // A log written again whole, with fresh hashes: another run's valid log.
  ASSERT_EQ(Run("echo c > c", {"--audit", t_.root() + "/other.jsonl"}).status, 0);
  WriteFile(log, ReadFile(t_.root() + "/other.jsonl"));
  v = Cordon({"audit", "verify", log});
  EXPECT_EQ(v.status, 1) << v.out;
  EXPECT_THAT(v.out, HasSubstr("replaced"));
  // The neighbours: the untouched log, and the other run's own.
  WriteFile(log, whole);
  v = Cordon({"audit", "verify", log});
  EXPECT_EQ(v.status, 0) << v.out;
  v = Cordon({"audit", "verify", t_.root() + "/other.jsonl"});
  EXPECT_EQ(v.status, 0) << v.out;
  EXPECT_THAT(v.out, HasSubstr("anchored by 1 run record"));
  // runs show says so too.
  WriteFile(log, cut);
  RunResult show = Cordon({"runs", "show", id});
  EXPECT_EQ(show.status, 1);
  EXPECT_THAT(show.out, HasSubstr("truncated"));
}

TEST_F(RunRecordsTest, TheToolCannotReachTheRecordsOrItsLog) {
  ASSERT_EQ(Run("true").status, 0);
  const std::string id = LastRun();
  const std::string dir = Runs() + "/" + id;
  const std::string log = dir + "/audit.jsonl";
  const std::string before = ReadFile(log);
  const std::string record = ReadFile(dir + "/run.json");
  const std::vector<std::string> rw = {"--rw", t_.root()};
  for (const std::string& attack :
       {"cat " + log, "cat " + dir + "/run.json", "ls " + Runs(), ": > " + log, "echo x >> " + log,
        "echo '{}' > " + dir + "/run.json", "rm -rf " + dir, "mv " + dir + " " + t_.root() + "/moved",
        "echo x > f && ln f " + dir + "/f2", "echo x > f && mv f " + Runs() + "/"}) {
    RunResult r = Run(attack, rw);
    EXPECT_NE(r.status, 0) << attack;
  }
  // Its own log, from inside the run, is as out of reach.
  RunResult own = Run("cat \"$XDG_STATE_HOME\"/cordon/runs/*/audit.jsonl", rw);
  EXPECT_NE(own.status, 0);
  EXPECT_EQ(ReadFile(log), before);
  EXPECT_EQ(ReadFile(dir + "/run.json"), record);
  EXPECT_EQ(Cordon({"audit", "verify", log}).status, 0);
  // An explicit --audit FILE inside the workspace is denied to the tool too.
  RunResult inside = Run("echo forged >> audit.jsonl", {"--audit", t_.Ws("audit.jsonl")});
  EXPECT_NE(inside.status, 0);
  EXPECT_THAT(ReadFile(t_.Ws("audit.jsonl")), Not(HasSubstr("\nforged")));
  EXPECT_EQ(Cordon({"audit", "verify", t_.Ws("audit.jsonl")}).status, 0);
  // The honest neighbour: the rest of the granted tree is writable.
  EXPECT_EQ(Run("echo ok > " + t_.root() + "/fine.txt", rw).status, 0);
  EXPECT_EQ(ReadFile(t_.root() + "/fine.txt"), "ok\n");
}

TEST_F(RunRecordsTest, TheEventsStreamCarriesTheSameAnchor) {
  const std::string events = t_.root() + "/events.jsonl";
  ASSERT_EQ(Run("echo x > y", {"--events", events}).status, 0);
  const std::string text = ReadFile(events);
  const size_t nl = text.find('\n');
  ASSERT_NE(nl, std::string::npos) << text;
  nlohmann::json start = nlohmann::json::parse(text.substr(0, nl), nullptr, false);
  nlohmann::json end = nlohmann::json::parse(text.substr(nl + 1), nullptr, false);
  ASSERT_FALSE(start.is_discarded());
  ASSERT_FALSE(end.is_discarded()) << text;
  EXPECT_EQ(start["event"], "run.start");
  EXPECT_EQ(end["event"], "run.end");
  EXPECT_EQ(end["run"], start["run"]);
  EXPECT_EQ(end["exit_status"], 0);
  EXPECT_EQ(end["anchor"], Record(start["run"].get<std::string>())["anchor"]);
  // A bad spec stops the run before anything happens.
  RunResult bad = Run("echo ran > ran.txt", {"--events", "999"});
  EXPECT_EQ(bad.status, 125);
  EXPECT_FALSE(Exists(t_.Ws("ran.txt")));
}

TEST_F(RunRecordsTest, NoStateHomeStillRunsAndSaysItHasNoLog) {
  // As HOME=/nonexistent is for a service account, in the scratch tree.
  const std::string home = t_.root() + "/no-such-home";
  std::vector<std::string> env = {"HOME=" + home, "XDG_STATE_HOME="};
  RunResult r = RunCordon({"run", "--profile", "workspace-write", "--workspace", t_.ws(),
                           "--sensitive-delete", "ask", "--", "sh", "-c", "echo x > y"},
                          t_.ws(), env);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("this run has no audit log"));
  EXPECT_EQ(ReadFile(t_.Ws("y")), "x\n");
  struct stat st;
  EXPECT_NE(::stat(home.c_str(), &st), 0) << "cordon never makes the home it was given";
}

TEST_F(RunRecordsTest, RunsListShowsEveryRunNotOnlyRecoverableOnes) {
  ASSERT_EQ(Run("true").status, 0);
  ASSERT_EQ(Run("exit 3").status, 3);
  RunResult list = Cordon({"runs", "list"});
  EXPECT_EQ(list.status, 0);
  EXPECT_THAT(list.out, HasSubstr("exit 0"));
  EXPECT_THAT(list.out, HasSubstr("exit 3"));
  EXPECT_THAT(list.out, HasSubstr("sh -c exit 3"));
  // Bad input: an unknown run, a malformed id.
  RunResult show = Cordon({"runs", "show", "20990101T000000Z-1"});
  EXPECT_EQ(show.status, 125);
  EXPECT_THAT(show.err, HasSubstr("no run 20990101T000000Z-1"));
  EXPECT_EQ(Cordon({"runs", "show", "../../etc"}).status, 125);
}

}  // namespace
}  // namespace cordon::testing
