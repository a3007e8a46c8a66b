// Issue 24 item 6, "every refusal speaks, with a hint that works": at the
// default log level cordon says each distinct refusal once, with the grant
// that would allow it, and adding each hint to the command line literally
// gets past that refusal. The test follows the hints in a loop, from a
// bare `cordon run`, until the command runs; ground truth is on the disk.
// Both the preload's refusals (a dynamic shell) and the supervisor's (the
// static probe, which the preload never sees) are followed.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "base/fd.h"
#include "tests/support/test_env.h"

namespace cordon::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kHintMark[] = "to allow it: ";

// The words of the first hint cordon printed, or none.
std::vector<std::string> FirstHint(const std::string& err) {
  size_t at = err.find(kHintMark);
  if (at == std::string::npos) return {};
  std::string line = err.substr(at + sizeof(kHintMark) - 1);
  line = line.substr(0, line.find('\n'));
  std::istringstream in(line);
  std::vector<std::string> words;
  for (std::string w; in >> w;) words.push_back(w);
  return words;
}

class RefusalHintTest : public ::testing::Test {
 protected:
  void SetUp() override {
    WriteFile(t_.Ws("note.txt"), "note\n");
    WriteFile(t_.Out("data.txt"), "DATA-OUTSIDE\n");
    WriteFile(t_.Out("out.txt"), "");
    ASSERT_EQ(::mkdir(t_.Out("newdir").c_str(), 0755), 0);
  }

  // Runs `base ... -- COMMAND` and follows each hint until it exits 0;
  // returns the hints taken. Fails if a hint does not get past its
  // refusal (the same hint twice) or if a refusal comes without one.
  std::vector<std::string> FollowHints(std::vector<std::string> base,
                                       const std::vector<std::string>& command, RunResult* last) {
    std::vector<std::string> taken;
    std::set<std::string> seen;
    for (int round = 0; round < 8; ++round) {
      std::vector<std::string> args = base;
      args.push_back("--");
      args.insert(args.end(), command.begin(), command.end());
      *last = RunCordon(args, t_.root());
      if (last->status == 0) return taken;
      std::vector<std::string> hint = FirstHint(last->err);
      if (hint.empty()) {
        ADD_FAILURE() << "a refusal without a hint:\n" << last->err;
        return taken;
      }
      std::string joined;
      for (const auto& w : hint) joined += w + " ";
      if (!seen.insert(joined).second) {
        ADD_FAILURE() << "following '" << joined << "' did not get past it:\n" << last->err;
        return taken;
      }
      taken.push_back(joined);
      base.insert(base.end(), hint.begin(), hint.end());
    }
    ADD_FAILURE() << "still refused after 8 hints:\n" << last->err;
    return taken;
  }

  ScratchTree t_;
};

TEST_F(RefusalHintTest, FollowingEachHintOfTheDynamicToolGetsItToRun) {
  const std::string script = "cat " + t_.Out("data.txt") + " && echo x >> " + t_.Ws("note.txt") +
                             " && echo y >> " + t_.Out("out.txt") + " && echo z > " +
                             t_.Out("newdir/made.txt");
  RunResult r;
  std::vector<std::string> taken =
      FollowHints({"run", "--workspace", t_.ws()}, {"sh", "-c", script}, &r);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("DATA-OUTSIDE"));
  // Each round runs the script again: the steps before the refusal ran too.
  EXPECT_THAT(ReadFile(t_.Ws("note.txt")), ::testing::StartsWith("note\nx\n"));
  EXPECT_THAT(ReadFile(t_.Out("out.txt")), ::testing::StartsWith("y\n"));
  EXPECT_EQ(ReadFile(t_.Out("newdir/made.txt")), "z\n");
  EXPECT_THAT(taken, ::testing::ElementsAre("--ro " + t_.Out("data.txt") + " ",
                                            "--profile workspace-write ",
                                            "--rw " + t_.Out("out.txt") + " ",
                                            "--rw " + t_.Out("newdir/made.txt") + " "));
  // The grant of one file is that file: its sibling stays out.
  EXPECT_FALSE(Exists(t_.Out("newdir/other.txt")));
}

TEST_F(RefusalHintTest, FollowingTheSupervisorsHintGetsTheStaticToolToRun) {
  RunResult r;
  std::vector<std::string> taken = FollowHints(
      {"run", "--workspace", t_.ws(), "--profile", "workspace-write", "--ro", ProbeDir(),
       "--test-force-notify-all"},
      {PROBE_STATIC, "append", t_.Out("out.txt")}, &r);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(taken, ::testing::ElementsAre("--rw " + t_.Out("out.txt") + " "));
  EXPECT_NE(ReadFile(t_.Out("out.txt")), "");
}

// A directory's creation: in the read-only profile's workspace the profile
// is what allows it; outside, the directory it is made in (a `--rw` of a
// name that does not exist yet grants a file, which mkdir cannot make).
// The static probe, so that the supervisor's hints are the ones followed.
TEST_F(RefusalHintTest, FollowingTheHintsOfAMkdirGetsItMade) {
  RunResult r;
  std::vector<std::string> taken = FollowHints({"run", "--workspace", t_.ws(), "--ro", ProbeDir()},
                                               {PROBE_STATIC, "mkdir", t_.Ws("made")}, &r);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(taken, ::testing::ElementsAre("--profile workspace-write "));
  EXPECT_TRUE(Exists(t_.Ws("made")));
  ASSERT_EQ(::mkdir(t_.Out("parent").c_str(), 0755), 0);
  taken = FollowHints({"run", "--workspace", t_.ws(), "--ro", ProbeDir()},
                      {PROBE_STATIC, "mkdir", t_.Out("parent/made")}, &r);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(taken, ::testing::ElementsAre("--rw " + t_.Out("parent") + " "));
  EXPECT_TRUE(Exists(t_.Out("parent/made")));
}

// A delete outside the workspace: the grant is the file's directory (a
// grant of the file alone lets it be written, not removed), by the
// preload's refusal (a dynamic rm) and the supervisor's (the static
// probe); then, as the file predates the run and no journal keeps a file
// outside the workspace, sensitive.delete allow (recoverable would not
// help). The file beside it in another directory stays.
TEST_F(RefusalHintTest, FollowingTheHintOfADeleteOutsideGetsItDone) {
  for (const std::string& probe : {std::string("rm"), std::string(PROBE_STATIC)}) {
    ASSERT_EQ(::mkdir(t_.Out("gone").c_str(), 0755), 0);
    WriteFile(t_.Out("gone/f"), "f\n");
    std::vector<std::string> cmd = {probe, t_.Out("gone/f")};
    if (probe != "rm") cmd.insert(cmd.begin() + 1, "unlink");
    RunResult r;
    std::vector<std::string> taken = FollowHints(
        {"run", "--workspace", t_.ws(), "--profile", "workspace-write", "--ro", ProbeDir()}, cmd,
        &r);
    ASSERT_EQ(r.status, 0) << probe << r.err;
    EXPECT_THAT(taken,
                ::testing::ElementsAre("--rw " + t_.Out("gone") + " ", "--sensitive-delete allow "))
        << probe;
    EXPECT_FALSE(Exists(t_.Out("gone/f"))) << probe;
    EXPECT_TRUE(Exists(t_.Out("data.txt")));
    ASSERT_EQ(::rmdir(t_.Out("gone").c_str()), 0);
  }
}

// A refused delete of a file that predates the run, with the mode given
// on the command line already: the hint's flag, appended, is the last one
// and wins (as --profile's does over an earlier --profile); the file goes
// to the run's journal, not away.
TEST_F(RefusalHintTest, FollowingTheHintOfARefusedDeleteGetsItDone) {
  RunResult r;
  std::vector<std::string> taken =
      FollowHints({"run", "--workspace", t_.ws(), "--profile", "read-only", "--profile",
                   "workspace-write", "--sensitive-delete", "ask"},
                  {"rm", t_.Ws("note.txt")}, &r);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(taken, ::testing::ElementsAre("--sensitive-delete recoverable "));
  EXPECT_FALSE(Exists(t_.Ws("note.txt")));
}

// A protected path's hint is a policy file's edit, not a grant: made as
// it is written, it gets past that refusal and lets go of that pattern's
// paths only.
TEST_F(RefusalHintTest, FollowingAProtectedPathsHintGetsPastIt) {
  ASSERT_EQ(::mkdir(t_.Ws(".git").c_str(), 0755), 0);
  ASSERT_EQ(::mkdir(t_.Ws(".git/info").c_str(), 0755), 0);
  WriteFile(t_.Ws(".git/config"), "[core]\n");
  const std::string write = "echo x > .git/info/exclude; echo y >> .git/config";
  RunResult r = RunCordon(
      {"run", "--profile", "workspace-write", "--workspace", t_.ws(), "--", "sh", "-c", write},
      t_.ws());
  EXPECT_NE(r.status, 0);
  const std::string mark = "\"protectedPaths\": [\"-";
  const std::size_t at = r.err.find(mark);
  ASSERT_NE(at, std::string::npos) << r.err;
  EXPECT_NE(r.err.find(mark + ".git/info/exclude\"]"), std::string::npos) << r.err;
  // The edit as the hint spells it, in a policy file of its own.
  const std::string edit = r.err.substr(at, r.err.find(']', at) + 1 - at);
  const std::string policy = t_.root() + "/policy.json";
  WriteFile(policy, "{" + edit + "}");
  r = RunCordon({"run", "--profile", "workspace-write", "--workspace", t_.ws(), "--policy", policy,
                 "--", "sh", "-c", write},
                t_.ws());
  EXPECT_EQ(ReadFile(t_.Ws(".git/info/exclude")), "x\n") << r.err;
  // The honest rest of the list stays: .git/config is still refused, and says so.
  EXPECT_NE(r.status, 0);
  EXPECT_EQ(ReadFile(t_.Ws(".git/config")), "[core]\n");
  EXPECT_NE(r.err.find(mark + ".git/config\"]"), std::string::npos) << r.err;
}

// A connect to a listener of the host's (this test's, outside the run) is
// refused under the default network, with the grant that lets it through.
TEST_F(RefusalHintTest, FollowingTheHintOfARefusedConnectGetsItThrough) {
  Fd listener(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  ASSERT_EQ(::bind(listener.get(), reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  ASSERT_EQ(::listen(listener.get(), 4), 0);
  ASSERT_EQ(::getsockname(listener.get(), reinterpret_cast<sockaddr*>(&a), &len), 0);
  const std::string port = std::to_string(ntohs(a.sin_port));
  RunResult r;
  std::vector<std::string> taken = FollowHints(
      {"run", "--workspace", t_.ws()}, {"bash", "-c", "echo hi > /dev/tcp/127.0.0.1/" + port}, &r);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(taken, ::testing::ElementsAre("--network allow "));
  // The kernel queued the one connection that was let through.
  Fd conn(::accept4(listener.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC));
  ASSERT_TRUE(conn) << "no connection reached the listener";
  char buf[8] = {};
  EXPECT_EQ(::read(conn.get(), buf, sizeof buf), 3);
  EXPECT_STREQ(buf, "hi\n");
}

// A runtime's probes (the JVM's performance-data directory and its
// coredump_filter, policy::IsRuntimeProbe): a tool that does without them
// runs with no line of cordon's; one that then fails has them said at the
// end, and a refusal beside them is said either way.
TEST_F(RefusalHintTest, ARuntimesProbeIsSaidOnlyWhenTheToolFails) {
  // The JVM's directory of a user of its own, there as the JVM leaves it.
  const std::string perf = "/tmp/hsperfdata_cordontest" + std::to_string(::getpid());
  ASSERT_EQ(::mkdir(perf.c_str(), 0755), 0);
  struct Remove {
    std::string dir;
    ~Remove() { ::rmdir(dir.c_str()); }
  } remove{perf};
  const std::string probes = std::string(PROBE_DYNAMIC) + " list " + perf + "; " + PROBE_DYNAMIC +
                             " append /proc/self/coredump_filter; ";
  const std::vector<std::string> run = {"run",      "--workspace", t_.ws(), "--ro",
                                        ProbeDir(), "--",          "sh",    "-c"};
  auto with = [&](const std::string& script) {
    std::vector<std::string> a = run;
    a.push_back(script);
    return RunCordon(a, t_.root());
  };
  RunResult r = with(probes + "exit 0");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.err, Not(HasSubstr("refused"))) << r.err;
  r = with(probes + "cat " + t_.Out("data.txt") + "; exit 3");
  EXPECT_EQ(r.status, 3) << r.err;
  EXPECT_THAT(r.err, HasSubstr("read " + perf)) << r.err;
  EXPECT_THAT(r.err, HasSubstr("change /proc/self/coredump_filter")) << r.err;
  EXPECT_THAT(r.err, HasSubstr("read " + t_.Out("data.txt"))) << r.err;
  r = with(probes + "cat " + t_.Out("data.txt") + "; exit 0");
  EXPECT_THAT(r.err, HasSubstr("read " + t_.Out("data.txt"))) << "said, the tool failing or not";
  EXPECT_THAT(r.err, Not(HasSubstr("hsperfdata"))) << r.err;
}

TEST_F(RefusalHintTest, ARefusalIsSaidOnceAtTheDefaultLevel) {
  const std::string script = "for i in 1 2 3; do cat " + t_.Out("data.txt") + "; done; true";
  RunResult r = RunCordon({"run", "--workspace", t_.ws(), "--", "sh", "-c", script}, t_.root());
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string line = "read " + t_.Out("data.txt");
  size_t first = r.err.find(line);
  ASSERT_NE(first, std::string::npos) << r.err;
  EXPECT_EQ(r.err.find(line, first + 1), std::string::npos) << "said twice:\n" << r.err;
}

TEST_F(RefusalHintTest, NothingOfCordonsOwnMakingIsReportedAsARefusal) {
  // id and getent ask glibc, which tries nscd's socket first.
  RunResult r = RunCordon({"run", "--workspace", t_.ws(), "--profile", "workspace-write",
                           "--test-force-notify-all", "--", "sh", "-c",
                           "id >/dev/null; getent hosts localhost >/dev/null; echo ok"},
                          t_.root());
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("ok"));
  EXPECT_THAT(r.err, Not(HasSubstr("nscd"))) << r.err;
  EXPECT_THAT(r.err, Not(HasSubstr("refused"))) << r.err;
}

}  // namespace
}  // namespace cordon::testing
