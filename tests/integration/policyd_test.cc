// `cordon policyd` and `cordon approve` end to end: the real daemon as a
// child process, runs connecting as `--approvals socket:PATH` does
// (SocketApprover), answers given with the real `cordon approve` binary.
// Also `cordon audit verify`.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <future>
#include <thread>

#include "policy/approval_protocol.h"
#include "policy/digest.h"
#include "supervisor/approvals/socket_approver.h"
#include "supervisor/audit/audit_log.h"
#include "supervisor/seqpacket.h"
#include "tests/support/child_process.h"
#include "tests/support/json_lines.h"
#include "tests/support/test_env.h"

namespace cordon::testing {
namespace {

using namespace std::chrono_literals;
using policy::ApprovalRequest;
using policy::Outcome;

ApprovalRequest Request(uint64_t id, std::string path = "notes.txt") {
  ApprovalRequest r;
  r.request_id = id;
  r.preview = {std::move(path), 5, policy::Sha256Hex("hello"), 1, 2, 3, 4};
  r.preview_digest = r.preview.Digest();
  r.tool_pid = 4242;
  r.tool_argv0 = "/bin/rm";
  return r;
}

class PolicydTest : public ::testing::Test {
 protected:
  void SetUp() override {
    sock_ = t_.root() + "/policyd.sock";
    audit_ = t_.Out("policyd-audit.jsonl");
    daemon_ = std::make_unique<PolicyDaemon>(
        sock_,
        with_audit_ ? std::vector<std::string>{"--audit", audit_} : std::vector<std::string>{});
    ASSERT_TRUE(daemon_->up()) << "policyd did not come up";
  }
  std::vector<nlohmann::json> List() {
    RunResult r = RunCordon({"approve", "--socket", sock_, "--list"});
    EXPECT_EQ(r.status, 0) << r.err;
    return JsonLines(r.out);
  }
  std::vector<nlohmann::json> WaitForPending(size_t n) {
    for (int i = 0; i < 500; ++i) {
      auto l = List();
      if (l.size() == n) return l;
      std::this_thread::sleep_for(10ms);
    }
    ADD_FAILURE() << "never saw " << n << " pending requests";
    return {};
  }
  RunResult Allow(uint64_t id, const std::string& digest) {
    return RunCordon({"approve", "--socket", sock_, "--allow", std::to_string(id), "--digest", digest});
  }
  RunResult Deny(uint64_t id) {
    return RunCordon({"approve", "--socket", sock_, "--deny", std::to_string(id)});
  }

  // The daemon's audit log as records, in order.
  std::vector<nlohmann::json> AuditRecords() { return JsonLines(ReadFile(audit_)); }

  ScratchTree t_;
  std::string sock_;
  std::string audit_;
  bool with_audit_ = false;
  std::unique_ptr<PolicyDaemon> daemon_;
};

class PolicydAuditTest : public PolicydTest {
 protected:
  void SetUp() override {
    with_audit_ = true;
    PolicydTest::SetUp();
  }
};

// The service keeps the trail: who asked what, who answered how, what was
// withdrawn, in a chain `cordon audit verify` accepts.
TEST_F(PolicydAuditTest, EveryRequestAndAnswerIsRecorded) {
  supervisor::SocketApprover run(sock_);
  auto ask = std::async(std::launch::async, [&] { return run.Ask(Request(7), 30s); });
  auto pending = WaitForPending(1);
  ASSERT_EQ(pending.size(), 1u);
  uint64_t id = pending[0]["id"].get<uint64_t>();
  ASSERT_EQ(Allow(id, pending[0]["digest"].get<std::string>()).status, 0);
  EXPECT_EQ(ask.get(), Outcome::kAllowedOnce);
  auto withdrawn = std::async(std::launch::async, [&] { return run.Ask(Request(8), 30s); });
  WaitForPending(1);
  run.Cancel(8);
  EXPECT_EQ(withdrawn.get(), Outcome::kCancelled);
  WaitForPending(0);

  auto records = AuditRecords();
  ASSERT_GE(records.size(), 5u) << ReadFile(audit_);
  EXPECT_EQ(records[0]["kind"], "header");
  EXPECT_EQ(records[0]["service"], "policyd");
  EXPECT_EQ(records[1]["kind"], "request");
  EXPECT_EQ(records[1]["run_id"], 7);
  EXPECT_EQ(records[1]["peer_pid"], ::getpid());
  EXPECT_EQ(records[1]["preview"]["path"], "notes.txt");
  EXPECT_EQ(records[2]["kind"], "answer");
  EXPECT_EQ(records[2]["id"], id);
  EXPECT_EQ(records[2]["decision"], "allow-once");
  EXPECT_EQ(records[3]["kind"], "request");
  EXPECT_EQ(records[4]["kind"], "withdrawn");
  EXPECT_EQ(RunCordon({"audit", "verify", audit_}).status, 0);
}

TEST(PolicydAudit, AnUnwritableLogStopsTheServiceAtStart) {
  ScratchTree t;
  RunResult r = RunCordon({"policyd", "--socket", t.root() + "/p.sock", "--audit",
                           t.Out("missing-dir/audit.jsonl")});
  EXPECT_EQ(r.status, 125);
  EXPECT_NE(r.err.find("--audit"), std::string::npos) << r.err;
}

TEST_F(PolicydTest, AllowOnceGrantsThatRequestOnce) {
  supervisor::SocketApprover run(sock_);
  auto ask = std::async(std::launch::async, [&] { return run.Ask(Request(11), 30s); });
  auto pending = WaitForPending(1);
  ASSERT_EQ(pending.size(), 1u);
  const nlohmann::json& p = pending[0];
  EXPECT_EQ(p["run_id"], 11);
  EXPECT_EQ(p["digest"], Request(11).preview_digest);
  EXPECT_EQ(p["preview"]["path"], "notes.txt");
  EXPECT_EQ(p["preview"]["sha256"], policy::Sha256Hex("hello"));
  EXPECT_EQ(p["tool_argv0"], "/bin/rm");
  EXPECT_EQ(p["peer_pid"], ::getpid());
  uint64_t id = p["id"].get<uint64_t>();
  RunResult r = Allow(id, p["digest"].get<std::string>());
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(ask.get(), Outcome::kAllowedOnce);
  EXPECT_TRUE(List().empty());
  r = Allow(id, p["digest"].get<std::string>());
  EXPECT_EQ(r.status, 1) << "a replayed answer is not delivered";
  EXPECT_NE(r.err.find("no pending request"), std::string::npos) << r.err;
  EXPECT_EQ(run.Ask(Request(11), 1s), Outcome::kStale) << "the run never re-asks a used id";
  EXPECT_TRUE(List().empty());
}

TEST_F(PolicydTest, DenyRefuses) {
  supervisor::SocketApprover run(sock_);
  auto ask = std::async(std::launch::async, [&] { return run.Ask(Request(1), 30s); });
  auto pending = WaitForPending(1);
  ASSERT_EQ(pending.size(), 1u);
  EXPECT_EQ(Deny(pending[0]["id"].get<uint64_t>()).status, 0);
  EXPECT_EQ(ask.get(), Outcome::kDenied);
}

TEST_F(PolicydTest, WrongDigestRefusesTheRequest) {
  supervisor::SocketApprover run(sock_);
  auto ask = std::async(std::launch::async, [&] { return run.Ask(Request(1), 30s); });
  auto pending = WaitForPending(1);
  ASSERT_EQ(pending.size(), 1u);
  uint64_t id = pending[0]["id"].get<uint64_t>();
  RunResult r = Allow(id, Request(1, "other.txt").preview_digest);
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(ask.get(), Outcome::kStale);
  EXPECT_EQ(Allow(id, pending[0]["digest"].get<std::string>()).status, 1)
      << "the right digest afterwards is too late";
}

TEST_F(PolicydTest, WrongIdChangesNothing) {
  supervisor::SocketApprover run(sock_);
  auto ask = std::async(std::launch::async, [&] { return run.Ask(Request(1), 30s); });
  auto pending = WaitForPending(1);
  ASSERT_EQ(pending.size(), 1u);
  uint64_t id = pending[0]["id"].get<uint64_t>();
  std::string digest = pending[0]["digest"].get<std::string>();
  EXPECT_EQ(Allow(id + 1, digest).status, 1);
  EXPECT_EQ(WaitForPending(1).size(), 1u) << "still pending";
  EXPECT_EQ(Deny(id).status, 0);
  EXPECT_EQ(ask.get(), Outcome::kDenied);
}

TEST_F(PolicydTest, TimeoutRefusesAndWithdrawsTheRequest) {
  supervisor::SocketApprover run(sock_);
  EXPECT_EQ(run.Ask(Request(1), 300ms), Outcome::kTimeout);
  EXPECT_TRUE(WaitForPending(0).empty());
  EXPECT_EQ(Allow(1, Request(1).preview_digest).status, 1) << "a late answer is stale";
}

TEST_F(PolicydTest, CancelAndShutdownRefuse) {
  supervisor::SocketApprover run(sock_);
  auto a = std::async(std::launch::async, [&] { return run.Ask(Request(1), 30s); });
  WaitForPending(1);
  run.Cancel(1);
  EXPECT_EQ(a.get(), Outcome::kCancelled);
  WaitForPending(0);
  auto b = std::async(std::launch::async, [&] { return run.Ask(Request(2), 30s); });
  WaitForPending(1);
  run.CancelAll();
  EXPECT_EQ(b.get(), Outcome::kShutdown);
}

TEST_F(PolicydTest, DaemonDeathDisconnects) {
  supervisor::SocketApprover run(sock_);
  auto a = std::async(std::launch::async, [&] { return run.Ask(Request(1), 30s); });
  WaitForPending(1);
  daemon_->Kill();
  EXPECT_EQ(a.get(), Outcome::kDisconnected);
  EXPECT_EQ(run.Ask(Request(2), 1s), Outcome::kDisconnected) << "nobody to ask";
}

TEST_F(PolicydTest, ServesManyRunsSeparately) {
  supervisor::SocketApprover run_a(sock_), run_b(sock_);
  auto a = std::async(std::launch::async, [&] { return run_a.Ask(Request(1, "a.txt"), 30s); });
  auto b = std::async(std::launch::async, [&] { return run_b.Ask(Request(1, "b.txt"), 30s); });
  auto pending = WaitForPending(2);
  ASSERT_EQ(pending.size(), 2u);
  EXPECT_NE(pending[0]["id"], pending[1]["id"]) << "service ids are unique across runs";
  for (const auto& p : pending) {
    if (p["preview"]["path"] == "a.txt") {
      EXPECT_EQ(Allow(p["id"].get<uint64_t>(), p["digest"].get<std::string>()).status, 0);
    } else {
      EXPECT_EQ(Deny(p["id"].get<uint64_t>()).status, 0);
    }
  }
  EXPECT_EQ(a.get(), Outcome::kAllowedOnce);
  EXPECT_EQ(b.get(), Outcome::kDenied);
}

TEST_F(PolicydTest, ProtocolErrorsAreAnsweredNotObeyed) {
  auto fd = supervisor::ConnectSeqpacket(sock_);
  ASSERT_TRUE(fd.ok());
  ASSERT_TRUE(supervisor::SendMessage(fd->get(), {{"type", "hello"}, {"version", 2}, {"role", "run"}}).ok());
  auto reply = supervisor::RecvMessage(fd->get());
  ASSERT_TRUE(reply.ok());
  EXPECT_EQ(reply.value()["type"], "error");

  auto fd2 = supervisor::ConnectSeqpacket(sock_);
  ASSERT_TRUE(fd2.ok());
  ASSERT_TRUE(supervisor::SendMessage(fd2->get(), policy::HelloMessage("run")).ok());
  ASSERT_TRUE(supervisor::RecvMessage(fd2->get()).ok());
  ApprovalRequest lying = Request(1);
  lying.preview.size = 6;  // the digest no longer matches the preview
  ASSERT_TRUE(supervisor::SendMessage(fd2->get(), policy::RequestMessage(lying, 1000)).ok());
  reply = supervisor::RecvMessage(fd2->get());
  ASSERT_TRUE(reply.ok());
  EXPECT_EQ(reply.value()["type"], "error");
  EXPECT_TRUE(List().empty());
  // A run cannot answer (its role is run, not approver).
  ASSERT_TRUE(supervisor::SendMessage(fd2->get(), {{"type", "answer"}, {"id", 1}, {"decision", "deny"}}).ok());
  reply = supervisor::RecvMessage(fd2->get());
  ASSERT_TRUE(reply.ok());
  EXPECT_EQ(reply.value()["type"], "error");
}

TEST_F(PolicydTest, OtherUidsAreRefusedBySoPeercred) {
  if (::getuid() != 0) GTEST_SKIP() << "needs root to connect as another uid";
  ASSERT_EQ(::chmod(t_.root().c_str(), 0755), 0);
  ASSERT_EQ(::chmod(sock_.c_str(), 0777), 0);  // past the file mode: only SO_PEERCRED is left
  const int status = AsNobody([this] {
    int fd = ::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, sock_.c_str(), sizeof addr.sun_path - 1);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) return 3;
    const char hello[] = R"({"type":"hello","version":1,"role":"approver"})";
    (void)::send(fd, hello, sizeof hello - 1, MSG_NOSIGNAL);
    char buf[512] = {};
    ssize_t n = ::recv(fd, buf, sizeof buf - 1, 0);
    // Refused: the error message, or ECONNRESET when the daemon closed
    // before reading our hello (Linux resets a unix peer whose data went
    // unread). Served: a hello back.
    if (n > 0) return std::strstr(buf, "peer uid not allowed") ? 0 : 1;
    return n < 0 && errno == ECONNRESET ? 0 : 4;
  });
  ASSERT_NE(status, kChildSetupFailed) << "cannot become uid 65534";
  EXPECT_EQ(status, 0) << "a peer of another uid was served";
  EXPECT_TRUE(List().empty()) << "root (same uid) is still served";
}

// The tool must not answer its own requests: `cordon approve` run by the
// tool reaches no approval socket outside what it may write, under either
// network mode, and a run whose tool could reach the socket (one in the
// workspace) is refused before the tool starts.
TEST_F(PolicydTest, AToolCannotAnswerItsOwnRequests) {
  std::string bin = CORDON_BIN;
  std::string marker = t_.Ws("ran");
  auto run = [&](std::vector<std::string> opts, std::vector<std::string> tool) {
    std::vector<std::string> args = {"run",
                                     "--workspace",
                                     t_.ws(),
                                     "--profile",
                                     "workspace-write",
                                     "--ro",
                                     bin.substr(0, bin.rfind('/')),
                                     "--ro",
                                     ProbeDir()};
    args.insert(args.end(), opts.begin(), opts.end());
    args.push_back("--");
    args.insert(args.end(), tool.begin(), tool.end());
    return RunCordon(args);
  };
  std::vector<std::string> approvals = {"--approvals", "socket:" + sock_};
  auto allow = approvals;
  allow.insert(allow.end(), {"--network", "allow"});
  for (const auto& opts : {approvals, allow}) {
    RunResult inside = run(opts, {bin, "approve", "--socket", sock_, "--list"});
    EXPECT_EQ(inside.status, 125) << inside.out << inside.err;
    EXPECT_NE(inside.err.find("Permission denied"), std::string::npos) << inside.err;
  }
  EXPECT_TRUE(List().empty()) << "the same command from outside is served";

  RunResult r =
      run({"--approvals", "socket:" + t_.Ws("policyd.sock")}, {PROBE_DYNAMIC, "create", marker});
  EXPECT_EQ(r.status, 125) << r.err;
  EXPECT_FALSE(Exists(marker)) << "the tool ran";
  r = run(approvals, {PROBE_DYNAMIC, "create", marker});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(Exists(marker)) << "the honest run next to them works";
}

TEST_F(PolicydTest, ApproveUsageErrorsExit125) {
  EXPECT_EQ(RunCordon({"approve", "--socket", sock_}).status, 125);
  EXPECT_EQ(RunCordon({"approve", "--socket", sock_, "--allow", "1"}).status, 125);
  EXPECT_EQ(RunCordon({"approve", "--socket", sock_, "--list", "--deny", "1"}).status, 125);
  EXPECT_EQ(RunCordon({"approve", "--socket", t_.root() + "/none", "--list"}).status, 125);
  EXPECT_EQ(RunCordon({"approve", "--socket", sock_, "--deny", "x"}).status, 125);
  RunResult second = RunCordon({"policyd", "--socket", sock_});
  EXPECT_EQ(second.status, 125) << "a live socket is not taken over";
}

TEST(AuditVerifyCommand, IntactBrokenAndUnreadable) {
  ScratchTree t;
  std::string path = t.Ws("audit.jsonl");
  {
    auto log = supervisor::AuditLog::Open(path);
    ASSERT_TRUE(log.ok());
    ASSERT_TRUE(log.value()->Append("header", {{"argv", {"rm"}}}).ok());
    ASSERT_TRUE(log.value()->Append("decision", {{"op", "unlink"}, {"path", "a.txt"}}).ok());
    ASSERT_TRUE(log.value()->Append("decision", {{"op", "unlink"}, {"path", "b.txt"}}).ok());
  }
  RunResult r = RunCordon({"audit", "verify", path});
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("intact, 3 records"), std::string::npos) << r.out;

  std::string bytes = ReadFile(path);
  bytes[bytes.find("a.txt")] = 'A';
  WriteFile(path, bytes);
  r = RunCordon({"audit", "verify", path});
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.out.find("record 2"), std::string::npos) << r.out;

  EXPECT_EQ(RunCordon({"audit", "verify", t.Ws("missing.jsonl")}).status, 125);
  EXPECT_EQ(RunCordon({"audit", "verify"}).status, 125);
}

}  // namespace
}  // namespace cordon::testing

namespace cordon::testing {
namespace {

// --approvals, --approval-timeout and --audit on cordon run: bad input stops
// the run with 125 before the tool starts; a good log holds header and end.
TEST(RunApprovalOptions, BadSpecsExit125BeforeTheToolRuns) {
  ScratchTree t;
  WriteFile(t.Out("bad-rules.json"), "[{\"glob\": 1}]");
  std::string marker = t.Ws("ran");
  auto run = [&](std::vector<std::string> opts) {
    std::vector<std::string> args = {"run",       "--workspace", t.ws(), "--ro", ProbeDir(),
                                     "--profile", "workspace-write"};
    args.insert(args.end(), opts.begin(), opts.end());
    args.insert(args.end(), {"--", PROBE_DYNAMIC, "create", marker});
    return RunCordon(args);
  };
  for (auto opts : std::vector<std::vector<std::string>>{
           {"--approvals", "bogus"},
           {"--approvals", "rules:" + t.Out("bad-rules.json")},
           {"--approvals", "rules:" + t.Out("missing.json")},
           {"--approval-timeout", "0"},
           {"--approval-timeout", "-5"},
           {"--approval-timeout", "soon"},
           {"--audit", t.root() + "/no/such/dir/audit.jsonl"}}) {
    RunResult r = run(opts);
    EXPECT_EQ(r.status, 125) << opts[0] << " " << opts[1] << ": " << r.err;
    EXPECT_FALSE(Exists(marker)) << "the tool ran";
  }
  RunResult ok = run({"--approvals", "deny", "--approval-timeout", "5"});
  EXPECT_EQ(ok.status, 0) << ok.err;
  EXPECT_TRUE(Exists(marker)) << "the honest run next to them works";
}

TEST(RunApprovalOptions, AuditLogHoldsHeaderAndEndAndRefusesATamperedLog) {
  ScratchTree t;
  std::string log = t.Out("audit.jsonl");
  std::vector<std::string> args = {"run", "--workspace", t.ws(), "--ro", ProbeDir(), "--audit", log,
                                   "--approvals", "deny", "--", PROBE_DYNAMIC, "exit", "3"};
  RunResult r = RunCordon(args);
  EXPECT_EQ(r.status, 3) << r.err;
  std::string bytes = ReadFile(log);
  policy::VerifyReport v = policy::VerifyAuditBytes(bytes);
  ASSERT_TRUE(v.intact) << v.why;
  // header, the tool's execve (let through: with an audit log every exec
  // is followed for the preload's check-in), the preload's untrusted hints
  // (its check-in, the probe's exit record, then the tally), the check-in
  // summary, end.
  ASSERT_EQ(v.records, 7u);
  std::vector<nlohmann::json> lines = JsonLines(bytes);
  ASSERT_EQ(lines.size(), 7u);
  const nlohmann::json& header = lines[0];
  EXPECT_EQ(header["kind"], "header");
  EXPECT_EQ(header["argv"][1], "exit");
  EXPECT_EQ(header["approvals"], "deny");
  EXPECT_EQ(header["policy"]["workspace"], t.ws());
  EXPECT_FALSE(header["rung"].get<std::string>().empty());
  EXPECT_EQ(lines[1]["kind"], "decision");
  EXPECT_EQ(lines[1]["syscall"], "execve");
  for (int i : {2, 3, 4}) {
    EXPECT_EQ(lines[i]["kind"], "hint");
    EXPECT_EQ(lines[i]["trusted"], false);
  }
  EXPECT_EQ(lines[2]["report"]["call"], "checkin");
  EXPECT_EQ(lines[4]["summary"].get<std::string>().find("preload reports:"), 0u);
  EXPECT_EQ(lines[5]["kind"], "preload");
  EXPECT_EQ(lines[5]["checked_in"], 1);
  const nlohmann::json& end = lines[6];
  EXPECT_EQ(end["kind"], "end");
  EXPECT_EQ(end["exit_status"], 3);

  r = RunCordon(args);  // a second session continues the chain
  EXPECT_EQ(r.status, 3);
  EXPECT_EQ(policy::VerifyAuditBytes(ReadFile(log)).records, 14u);

  bytes = ReadFile(log);
  bytes[bytes.find("\"exit\"") + 1] = 'E';
  WriteFile(log, bytes);
  r = RunCordon(args);
  EXPECT_EQ(r.status, 125) << "a tampered log is not extended";
  EXPECT_EQ(ReadFile(log), bytes);
}

}  // namespace
}  // namespace cordon::testing
