// Issue 27 item 2: `cordon policy reload --run RUN FILE` replaces what a
// running tool's supervisor decides by, through the run's control socket.
// A real `cordon run` with a shell tool that writes what it is told to
// (one line in, "ok" or "denied" out), the disk and the run's audit log
// read afterwards.
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/child_process.h"
#include "tests/support/test_env.h"

namespace cordon::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// The tool: "w PATH" writes PATH (a shell's '>'); "r PATH" reads it; "c PATH" connects to the
// Unix socket PATH (the probe's exit status is the errno).
constexpr const char* kTool =
    "while read op f; do case $op in "
    "w) if (echo data > \"$f\") 2>/dev/null; then echo ok; else echo denied; fi ;; "
    "r) if cat \"$f\" >/dev/null 2>&1; then echo ok; else echo denied; fi ;; "
    "c) \"$PROBE\" connect-unix \"$f\"; echo \"rc $?\" ;; "
    "esac; done";

class PolicyReloadTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(::mkdir((t_.root() + "/home").c_str(), 0700), 0);
    ASSERT_EQ(::mkdir(t_.Ws("secret").c_str(), 0755), 0);
    env_ = {"HOME=" + t_.root() + "/home", "XDG_STATE_HOME=" + t_.root() + "/state",
            "PROBE=" + ProbeDir() + "/probe"};
  }
  void TearDown() override { Stop(); }

  std::string PolicyFile(const std::string& name, const std::string& json) {
    const std::string f = t_.root() + "/" + name;
    WriteFile(f, json);
    return f;
  }
  // {"sandbox":{"filesystem":{"deniedPaths":[DENIED...]}}}
  std::string Denying(const std::string& name, const std::vector<std::string>& denied,
                      const std::string& rw = "") {
    nlohmann::json j;
    j["sandbox"]["filesystem"]["deniedPaths"] = denied;
    if (!rw.empty()) j["sandbox"]["filesystem"]["readwritePaths"] = {rw};
    return PolicyFile(name, j.dump());
  }

  // Starts `cordon run` with the tool; returns once it answers.
  void Start(const std::vector<std::string>& flags) {
    int in[2], out[2];
    ASSERT_EQ(::pipe2(in, O_CLOEXEC), 0);
    ASSERT_EQ(::pipe2(out, O_CLOEXEC), 0);
    std::vector<std::string> args = {"run",         "--profile",   "workspace-write",
                                     "--workspace", t_.ws(),       "--approvals",
                                     "deny",        "--log-level", "info",
                                     "--ro",        ProbeDir()};
    args.insert(args.end(), flags.begin(), flags.end());
    args.insert(args.end(), {"--", "sh", "-c", kTool});
    cordon_ = std::make_unique<BackgroundCordon>(
        args, ChildIo{in[0], out[1], t_.root() + "/cordon.err", t_.ws(), env_});
    ::close(in[0]);
    ::close(out[1]);
    to_tool_ = in[1];
    from_tool_ = out[0];
    ASSERT_EQ(Ask("w " + t_.Ws("started")), "ok") << CordonErr();
    run_ = LastRun();
    ASSERT_FALSE(run_.empty());
  }
  // Sends the tool one line, returns its answer ("" if it said nothing in 30 s).
  std::string Ask(const std::string& line) {
    const std::string l = line + "\n";
    if (::write(to_tool_, l.data(), l.size()) != static_cast<ssize_t>(l.size())) return "";
    std::string answer;
    for (;;) {
      pollfd p{from_tool_, POLLIN, 0};
      if (::poll(&p, 1, 30000) <= 0) return answer;
      char c;
      if (::read(from_tool_, &c, 1) != 1 || c == '\n') return answer;
      answer += c;
    }
  }
  // Ends the tool (EOF on its input) and waits for cordon.
  int Stop() {
    if (!cordon_ || !cordon_->started()) return -1;
    ::close(to_tool_);
    ::close(from_tool_);
    const int status = cordon_->Wait();
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1000 + WTERMSIG(status);
  }
  RunResult Cordon(const std::vector<std::string>& args) { return RunCordon(args, t_.ws(), env_); }
  RunResult Reload(const std::string& file) {
    return Cordon({"policy", "reload", "--run", run_, file});
  }
  std::string LastRun() {
    RunResult list = Cordon({"runs", "list"});
    std::string out = list.out;
    if (out.empty()) return "";
    out.pop_back();
    const std::string last =
        out.substr(out.rfind('\n') == std::string::npos ? 0 : out.rfind('\n') + 1);
    return last.substr(0, last.find(' '));
  }
  std::string RunDir() const { return t_.root() + "/state/cordon/runs/" + run_; }
  std::string CordonErr() const { return ReadFile(t_.root() + "/cordon.err"); }
  // The run's "policy reload" records.
  std::vector<nlohmann::json> Reloads() {
    std::vector<nlohmann::json> out;
    std::istringstream log(ReadFile(RunDir() + "/audit.jsonl"));
    for (std::string line; std::getline(log, line);) {
      auto j = nlohmann::json::parse(line, nullptr, false);
      if (!j.is_discarded() && j.value("kind", "") == "policy reload") out.push_back(j);
    }
    return out;
  }

  ScratchTree t_;
  std::vector<std::string> env_;
  std::unique_ptr<BackgroundCordon> cordon_;
  int to_tool_ = -1, from_tool_ = -1;
  std::string run_;
};

TEST_F(PolicyReloadTest, ATighterPolicyIsEnforcedFromThenOn) {
  Start({});
  EXPECT_EQ(Ask("w " + t_.Ws("secret/before")), "ok");
  RunResult r = Reload(Denying("tight.json", {t_.Ws("secret")}));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("policy reloaded"));
  // Taken for what the supervisor decides; the kernel's read grant stays,
  // and the caller is told so.
  EXPECT_THAT(r.err,
              HasSubstr("reads of " + t_.Ws("secret") + " stay allowed until this run ends"));
  // The new denial holds; the honest neighbour still works.
  EXPECT_EQ(Ask("w " + t_.Ws("secret/after")), "denied");
  EXPECT_EQ(Ask("w " + t_.Ws("neighbour")), "ok");
  EXPECT_EQ(Ask("w " + t_.Ws("secret/before")), "denied");
  // As the warning said: the kernel still lets it read.
  EXPECT_EQ(Ask("r " + t_.Ws("secret/before")), "ok");
  // A denial a reload added may go again: the launch's policy had none.
  RunResult back = Reload(PolicyFile("open.json", "{}"));
  EXPECT_EQ(back.status, 0) << back.err;
  EXPECT_EQ(Ask("w " + t_.Ws("secret/again")), "ok");
  EXPECT_EQ(Stop(), 0);
  EXPECT_FALSE(Exists(t_.Ws("secret/after")));
  EXPECT_EQ(ReadFile(t_.Ws("secret/again")), "data\n");
  EXPECT_EQ(ReadFile(t_.Ws("secret/before")), "data\n");
  EXPECT_EQ(ReadFile(t_.Ws("neighbour")), "data\n");
  auto records = Reloads();
  ASSERT_EQ(records.size(), 2u) << ReadFile(RunDir() + "/audit.jsonl");
  EXPECT_EQ(records[0]["outcome"], "accepted");
  EXPECT_THAT(records[0]["warnings"].dump(), HasSubstr("reads of " + t_.Ws("secret")));
  // Loosening back leaves every read as the launch had it: nothing to say.
  EXPECT_THAT(back.err, Not(HasSubstr("stay allowed")));
  EXPECT_NE(records[0]["old_digest"], records[0]["new_digest"]);
  EXPECT_EQ(records[1]["old_digest"], records[0]["new_digest"]);
  // The socket went with the run.
  EXPECT_FALSE(Exists(RunDir() + "/control.sock"));
}

TEST_F(PolicyReloadTest, ItsWarningsGoToTheCallerNotToTheRun) {
  Start({});
  // A read-only path that does not exist is dropped, with a warning.
  const std::string missing = t_.outside() + "/no-such-dir";
  nlohmann::json j;
  j["sandbox"]["filesystem"]["deniedPaths"] = {t_.Ws("secret")};
  j["sandbox"]["filesystem"]["readonlyPaths"] = {missing};
  const std::string before = CordonErr();
  RunResult r = Reload(PolicyFile("warns.json", j.dump()));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("path " + missing + " dropped from the policy"));
  EXPECT_EQ(Ask("w " + t_.Ws("secret/after")), "denied");
  EXPECT_EQ(Ask("w " + t_.Ws("neighbour")), "ok");
  EXPECT_EQ(Stop(), 0);
  // The run's own stderr does not carry the caller's warning.
  EXPECT_THAT(CordonErr().substr(before.size()), Not(HasSubstr(missing))) << CordonErr();
  auto records = Reloads();
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0]["outcome"], "accepted");
  EXPECT_THAT(records[0]["warnings"].dump(), HasSubstr(missing));
}

TEST_F(PolicyReloadTest, OnTheNotifyAllRungToo) {
  // No Landlock: the supervisor decides every path call, by the new rules.
  Start({"--test-force-notify-all"});
  RunResult r = Reload(Denying("tight.json", {t_.Ws("secret")}));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(Ask("w " + t_.Ws("secret/after")), "denied");
  EXPECT_EQ(Ask("w " + t_.Ws("neighbour")), "ok");
  EXPECT_EQ(Stop(), 0);
  EXPECT_FALSE(Exists(t_.Ws("secret/after")));
  EXPECT_EQ(ReadFile(t_.Ws("neighbour")), "data\n");
}

TEST_F(PolicyReloadTest, ALooserPolicyIsRefusedAndTheOldOneStays) {
  Start({"--policy", Denying("tight.json", {t_.Ws("secret")})});
  EXPECT_EQ(Ask("w " + t_.Ws("secret/x")), "denied");
  // The denial removed: Landlock carved it out at launch.
  RunResult r = Reload(PolicyFile("loose.json", "{}"));
  EXPECT_EQ(r.status, 125);
  EXPECT_THAT(r.err, HasSubstr("looser kernel layer; start a new run"));
  EXPECT_THAT(r.err, HasSubstr("the old policy stays in force"));
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  // A new write root outside the workspace.
  RunResult out = Reload(Denying("wider.json", {t_.Ws("secret")}, t_.outside()));
  EXPECT_EQ(out.status, 125);
  EXPECT_THAT(out.err, HasSubstr(t_.outside()));
  EXPECT_EQ(Ask("w " + t_.Ws("secret/y")), "denied");
  EXPECT_EQ(Ask("w " + t_.Out("z")), "denied");
  EXPECT_EQ(Ask("w " + t_.Ws("neighbour")), "ok");
  EXPECT_EQ(Stop(), 0);
  EXPECT_FALSE(Exists(t_.Ws("secret/x")));
  EXPECT_FALSE(Exists(t_.Ws("secret/y")));
  EXPECT_FALSE(Exists(t_.Out("z")));
  auto records = Reloads();
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0]["outcome"], "refused");
  EXPECT_THAT(records[0]["why"].get<std::string>(), HasSubstr("looser kernel layer"));
}

TEST_F(PolicyReloadTest, AFileThatDoesNotValidateChangesNothing) {
  Start({"--policy", Denying("tight.json", {t_.Ws("secret")})});
  for (const std::string& bad : {std::string("{not json"), std::string(R"({"bogus": 1})")}) {
    RunResult r = Reload(PolicyFile("bad.json", bad));
    EXPECT_EQ(r.status, 125) << bad;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_THAT(r.err, HasSubstr("bad.json"));
    EXPECT_THAT(r.err, HasSubstr("the old policy stays in force"));
  }
  EXPECT_EQ(Ask("w " + t_.Ws("secret/x")), "denied");
  EXPECT_EQ(Ask("w " + t_.Ws("neighbour")), "ok");
  EXPECT_EQ(Stop(), 0);
  EXPECT_FALSE(Exists(t_.Ws("secret/x")));
  auto records = Reloads();
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0]["outcome"], "invalid");
  EXPECT_EQ(records[1]["outcome"], "invalid");
}

TEST_F(PolicyReloadTest, EveryDecisionDeniesWhileTheNewPolicyIsChecked) {
  Start({});
  // The client holds the guard up after validating, until it reads a line.
  int in[2], out[2];
  ASSERT_EQ(::pipe2(in, O_CLOEXEC), 0);
  ASSERT_EQ(::pipe2(out, O_CLOEXEC), 0);
  const std::string file = Denying("tight.json", {t_.Ws("secret")});
  BackgroundCordon client({"policy", "reload", "--hold", "--run", run_, file},
                          ChildIo{in[0], out[1], "", "", env_});
  ::close(in[0]);
  ::close(out[1]);
  std::string said;
  char c;
  while (said.find('\n') == std::string::npos && ::read(out[0], &c, 1) == 1) said += c;
  EXPECT_THAT(said, HasSubstr("holding"));
  // In the window: a write the old and the new policy both allow is refused.
  EXPECT_EQ(Ask("w " + t_.Ws("during")), "denied");
  EXPECT_FALSE(Exists(t_.Ws("during")));
  ASSERT_EQ(::write(in[1], "\n", 1), 1);
  ::close(in[1]);
  const int status = client.Wait();
  ::close(out[0]);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  // After it: the new policy.
  EXPECT_EQ(Ask("w " + t_.Ws("after")), "ok");
  EXPECT_EQ(Ask("w " + t_.Ws("secret/after")), "denied");
  EXPECT_EQ(Stop(), 0);
  EXPECT_EQ(ReadFile(t_.Ws("after")), "data\n");
  EXPECT_FALSE(Exists(t_.Ws("secret/after")));
  EXPECT_THAT(CordonErr(), HasSubstr("policy reload in progress"));
  // The refusal in the window is a decision record like any other.
  EXPECT_THAT(ReadFile(RunDir() + "/audit.jsonl"), HasSubstr("policy reload in progress"));
}

TEST_F(PolicyReloadTest, TheToolCannotReachTheControlSocket) {
  Start({});
  ASSERT_TRUE(Exists(RunDir() + "/control.sock"));
  struct stat st;
  ASSERT_EQ(::stat((RunDir() + "/control.sock").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_EQ(Ask("c " + RunDir() + "/control.sock"), "rc " + std::to_string(EACCES));
  EXPECT_EQ(Stop(), 0);
}

TEST_F(PolicyReloadTest, OnlyTheRunsOwnerIsServed) {
  Start({});
  const std::string sock = RunDir() + "/control.sock";
  // Opened up by hand, so that only SO_PEERCRED stands between: a peer of
  // another uid is answered with a refusal, nothing else. It reaches the
  // directory through a descriptor (the directories above stay closed).
  ASSERT_EQ(::chmod(RunDir().c_str(), 0755), 0);
  ASSERT_EQ(::chmod(sock.c_str(), 0777), 0);
  const int dir = ::open(RunDir().c_str(), O_PATH | O_DIRECTORY);
  ASSERT_GE(dir, 0);
  const std::string via = "/proc/self/fd/" + std::to_string(dir) + "/control.sock";
  int p[2];
  ASSERT_EQ(::pipe(p), 0);
  const int status = AsNobody([&] {
    int s = ::socket(AF_UNIX, SOCK_SEQPACKET, 0);
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    std::strncpy(a.sun_path, via.c_str(), sizeof a.sun_path - 1);
    if (::connect(s, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) return 91;
    const char req[] = R"({"type":"reload","file":"x"})";
    (void)::send(s, req, sizeof req - 1, 0);
    char buf[512];
    ssize_t n = ::recv(s, buf, sizeof buf, 0);
    if (n > 0) (void)::write(p[1], buf, static_cast<size_t>(n));
    return 0;
  });
  ::close(p[1]);
  ::close(dir);
  std::string reply;
  char buf[512];
  for (ssize_t n; (n = ::read(p[0], buf, sizeof buf)) > 0;)
    reply.append(buf, static_cast<size_t>(n));
  ::close(p[0]);
  ASSERT_EQ(status, 0) << "the other uid's client could not ask";
  EXPECT_THAT(reply, HasSubstr("refused")) << CordonErr();
  EXPECT_THAT(reply, HasSubstr("does not own this run"));
  // The caller's side: a socket that is not the caller's gets no policy.
  ASSERT_EQ(::chown(sock.c_str(), 65534, 65534), 0);
  RunResult r = Reload(Denying("tight.json", {t_.Ws("secret")}));
  EXPECT_EQ(r.status, 125);
  EXPECT_THAT(r.err, HasSubstr("belongs to uid 65534, not to you"));
  EXPECT_EQ(Ask("w " + t_.Ws("secret/x")), "ok");  // nothing changed
  EXPECT_EQ(Stop(), 0);
  EXPECT_THAT(Reloads(), ::testing::IsEmpty());
}

TEST_F(PolicyReloadTest, ExplainSaysWhatAReloadMayChange) {
  RunResult r = Cordon({"policy", "explain", "--profile", "workspace-write"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("cordon policy reload --run RUN FILE may tighten"));
  EXPECT_THAT(r.out, HasSubstr("reads the kernel grants stay granted"));
}

TEST_F(PolicyReloadTest, BadRequestsSayWhyInOneLine) {
  const std::string file = Denying("tight.json", {t_.Ws("secret")});
  struct Case {
    std::vector<std::string> args;
    const char* says;
  } cases[] = {
      {{"policy", "reload", "--run", "NOPE", file}, "no run NOPE"},
      {{"policy", "reload", "--run", "../x", file}, "not a run id"},
      {{"policy", "reload", "--run", "NOPE", t_.root() + "/missing.json"}, "missing.json"},
  };
  for (const Case& c : cases) {
    RunResult r = Cordon(c.args);
    EXPECT_EQ(r.status, 125) << c.says;
    EXPECT_THAT(r.err, HasSubstr(c.says));
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
  // A run that has ended keeps its record, not its socket.
  Start({});
  EXPECT_EQ(Stop(), 0);
  RunResult r = Reload(file);
  EXPECT_EQ(r.status, 125);
  EXPECT_THAT(r.err, HasSubstr("is not running"));
}

}  // namespace
}  // namespace cordon::testing
