// Sensitive deletes under `cordon run` end to end (issue 6's "Done when"):
// a real pre-existing workspace file, the real policyd daemon, answers from
// the real `cordon approve`, ground truth on disk and in the audit log.
//
// NOT registered in tests/CMakeLists.txt yet: it needs the notify loop to
// route unlink/unlinkat/rename through the Approver. To enable:
//   cordon_test(approval_integration_test integration/approval_test.cc LIBS cordon_policy)
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <future>
#include <memory>
#include <thread>

#include "policy/approval_protocol.h"
#include "policy/digest.h"
#include "supervisor/audit/audit_log.h"
#include "tests/support/child_process.h"
#include "tests/support/json_lines.h"
#include "tests/support/test_env.h"

namespace cordon::testing {
namespace {

using namespace std::chrono_literals;

class ApprovalRunTest : public ::testing::Test {
 protected:
  void SetUp() override {
    WriteFile(t_.Ws("notes.txt"), "user data\n");
    sock_ = t_.root() + "/policyd.sock";
    log_ = t_.Out("audit.jsonl");
    daemon_ = std::make_unique<PolicyDaemon>(sock_);
    ASSERT_TRUE(daemon_->up()) << "policyd did not come up";
  }
  // cordon run under workspace-write with the socket approver, in the background.
  std::future<RunResult> Start(std::vector<std::string> cmd, const std::string& approvals = "",
                               const std::string& timeout = "30",
                               const std::vector<std::string>& more = {}) {
    std::vector<std::string> args = {"run", "--workspace", t_.ws(), "--ro", ProbeDir(),
                                     "--profile", "workspace-write", "--sensitive-delete", "ask",
                                     "--audit", log_,
                                     "--approvals", approvals.empty() ? "socket:" + sock_ : approvals,
                                     "--approval-timeout", timeout};
    args.insert(args.end(), more.begin(), more.end());
    args.push_back("--");
    args.insert(args.end(), cmd.begin(), cmd.end());
    return std::async(std::launch::async, [args] { return RunCordon(args); });
  }
  std::vector<nlohmann::json> List() {
    return JsonLines(RunCordon({"approve", "--socket", sock_, "--list"}).out);
  }
  nlohmann::json WaitForRequest() {
    for (int i = 0; i < 1000; ++i) {
      auto l = List();
      if (!l.empty()) return l[0];
      std::this_thread::sleep_for(10ms);
    }
    ADD_FAILURE() << "no request arrived";
    return nlohmann::json::object();
  }
  int Allow(const nlohmann::json& p, std::string digest = "") {
    if (digest.empty()) digest = p["digest"].get<std::string>();
    return RunCordon({"approve", "--socket", sock_, "--allow",
                      std::to_string(p["id"].get<uint64_t>()), "--digest", digest}).status;
  }
  int Deny(const nlohmann::json& p) {
    return RunCordon({"approve", "--socket", sock_, "--deny",
                      std::to_string(p["id"].get<uint64_t>())}).status;
  }
  std::vector<nlohmann::json> Log() {
    std::string bytes = ReadFile(log_);
    EXPECT_TRUE(policy::VerifyAuditBytes(bytes).intact);
    return JsonLines(bytes);
  }
  bool LogHasOutcome(const std::string& outcome) {
    for (const auto& r : Log()) {
      if (r["kind"] == "approval" && r.value("outcome", "") == outcome) return true;
    }
    return false;
  }

  ScratchTree t_;
  std::string sock_, log_;
  std::unique_ptr<PolicyDaemon> daemon_;
};

TEST_F(ApprovalRunTest, AllowedOnceDeletesAndTheLogShowsPreviewAndGrant) {
  auto run = Start({PROBE_DYNAMIC, "unlink", "notes.txt"});
  nlohmann::json req = WaitForRequest();
  EXPECT_EQ(req["preview"]["path"], "notes.txt");
  EXPECT_EQ(req["preview"]["size"], 10);
  EXPECT_EQ(req["preview"]["sha256"], policy::Sha256Hex("user data\n"));
  EXPECT_EQ(Allow(req), 0);
  RunResult r = run.get();
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_FALSE(Exists(t_.Ws("notes.txt")));
  bool saw_request = false;
  for (const auto& rec : Log()) {
    if (rec["kind"] == "approval" && rec["event"] == "request") {
      saw_request = rec["preview"]["path"] == "notes.txt";
    }
  }
  EXPECT_TRUE(saw_request);
  EXPECT_TRUE(LogHasOutcome("allowed-once"));
  EXPECT_EQ(RunCordon({"audit", "verify", log_}).status, 0);
}

// The preview is the supervisor's read, the unlink the tool's: a file the
// capless tool may delete (its directory is the tool's) but not read is
// shown and, once allowed, deleted.
TEST_F(ApprovalRunTest, AFileTheToolCannotReadIsPreviewedAndDeleted) {
  WriteFile(t_.Ws("private.txt"), "private\n");
  if (::geteuid() != 0 || ::chown(t_.Ws("private.txt").c_str(), 65534, 65534) != 0) {
    GTEST_SKIP() << "SKIPPED LOUDLY: needs root to give a file to uid 65534";
  }
  ASSERT_EQ(::chmod(t_.Ws("private.txt").c_str(), 0600), 0);
  auto run = Start({PROBE_DYNAMIC, "unlink", "private.txt"});
  nlohmann::json req = WaitForRequest();
  EXPECT_EQ(req["preview"]["sha256"], policy::Sha256Hex("private\n"));
  EXPECT_EQ(Allow(req), 0);
  RunResult r = run.get();
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_FALSE(Exists(t_.Ws("private.txt")));
}

TEST_F(ApprovalRunTest, DenyLeavesTheFile) {
  auto run = Start({PROBE_DYNAMIC, "unlink", "notes.txt"});
  nlohmann::json req = WaitForRequest();
  EXPECT_EQ(Deny(req), 0);
  EXPECT_EQ(run.get().status, EACCES);
  EXPECT_EQ(ReadFile(t_.Ws("notes.txt")), "user data\n");
  EXPECT_EQ(Allow(req), 1) << "a replayed id is not delivered";
  EXPECT_EQ(ReadFile(t_.Ws("notes.txt")), "user data\n");
  EXPECT_TRUE(LogHasOutcome("denied"));
}

TEST_F(ApprovalRunTest, TimeoutLeavesTheFile) {
  auto run = Start({PROBE_DYNAMIC, "unlink", "notes.txt"}, "", "1");
  EXPECT_EQ(run.get().status, EACCES);
  EXPECT_EQ(ReadFile(t_.Ws("notes.txt")), "user data\n");
  EXPECT_TRUE(LogHasOutcome("timeout"));
}

TEST_F(ApprovalRunTest, ApproverDisconnectLeavesTheFile) {
  auto run = Start({PROBE_DYNAMIC, "unlink", "notes.txt"});
  WaitForRequest();
  daemon_->Kill();
  EXPECT_EQ(run.get().status, EACCES);
  EXPECT_EQ(ReadFile(t_.Ws("notes.txt")), "user data\n");
  EXPECT_TRUE(LogHasOutcome("disconnected"));
}

TEST_F(ApprovalRunTest, WrongDigestLeavesTheFile) {
  auto run = Start({PROBE_DYNAMIC, "unlink", "notes.txt"});
  nlohmann::json req = WaitForRequest();
  EXPECT_EQ(Allow(req, std::string(64, '0')), 1);
  EXPECT_EQ(run.get().status, EACCES);
  EXPECT_EQ(ReadFile(t_.Ws("notes.txt")), "user data\n");
  EXPECT_TRUE(LogHasOutcome("stale"));
}

TEST_F(ApprovalRunTest, KillingTheToolWhilePendingLeavesTheFile) {
  auto run = Start({PROBE_DYNAMIC, "unlink", "notes.txt"});
  nlohmann::json req = WaitForRequest();
  ASSERT_GT(req["tool_pid"].get<int>(), 1);
  ::kill(req["tool_pid"].get<int>(), SIGKILL);
  EXPECT_EQ(run.get().status, 128 + SIGKILL);
  EXPECT_NE(Allow(req), 0) << "the request died with its tool";
  EXPECT_EQ(ReadFile(t_.Ws("notes.txt")), "user data\n");
}

TEST_F(ApprovalRunTest, ContentChangedBeforeTheAnswerRefuses) {
  auto run = Start({PROBE_DYNAMIC, "unlink", "notes.txt"});
  nlohmann::json req = WaitForRequest();
  WriteFile(t_.Ws("notes.txt"), "user DATA\n");
  EXPECT_EQ(Allow(req), 0) << "the answer is delivered; the recheck refuses";
  EXPECT_EQ(run.get().status, EACCES);
  EXPECT_EQ(ReadFile(t_.Ws("notes.txt")), "user DATA\n");
}

TEST_F(ApprovalRunTest, FilesBornInTheRunAreDeletedWithoutARequest) {
  auto run = Start({"/bin/sh", "-c", "echo x > new.txt && mkdir newdir && rm new.txt && rmdir newdir"},
                   "deny");
  RunResult r = run.get();
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_FALSE(Exists(t_.Ws("new.txt")));
  EXPECT_FALSE(Exists(t_.Ws("newdir")));
  EXPECT_TRUE(Exists(t_.Ws("notes.txt")));
}

TEST_F(ApprovalRunTest, UnqualifiedFilesAreRefusedWithoutARequest) {
  WriteFile(t_.Ws("linked"), "x");
  ASSERT_EQ(::link(t_.Ws("linked").c_str(), t_.Ws("linked2").c_str()), 0);
  ASSERT_EQ(::mkdir(t_.Ws("dir").c_str(), 0755), 0);
  ASSERT_EQ(::symlink("notes.txt", t_.Ws("sym").c_str()), 0);
  WriteFile(t_.Ws("big"), "");
  ASSERT_EQ(::truncate(t_.Ws("big").c_str(), 21 << 20), 0);
  for (std::vector<std::string> cmd : {std::vector<std::string>{PROBE_DYNAMIC, "unlink", "linked"},
                                       {PROBE_DYNAMIC, "unlink", "sym"},
                                       {PROBE_DYNAMIC, "unlink", "big"}}) {
    SCOPED_TRACE(cmd[2]);
    auto run = Start(cmd);
    ASSERT_EQ(run.wait_for(20s), std::future_status::ready) << "asked instead of refusing";
    EXPECT_EQ(run.get().status, EACCES);
    EXPECT_TRUE(List().empty());
  }
  EXPECT_TRUE(Exists(t_.Ws("linked")) && Exists(t_.Ws("sym")) && Exists(t_.Ws("big")));
}

// A pre-existing directory, emptied piecewise, is removed under the rules
// of its files (issue 26): asked about, with a preview of its path and
// identity (no content), and removed once allowed. A full one is the
// kernel's ENOTEMPTY, asked about never.
TEST_F(ApprovalRunTest, AnEmptyPreExistingDirectoryIsAskedAbout) {
  ASSERT_EQ(::mkdir(t_.Ws("dir").c_str(), 0755), 0);
  ASSERT_EQ(::mkdir(t_.Ws("full").c_str(), 0755), 0);
  WriteFile(t_.Ws("full/f"), "x");
  const std::string policy = t_.Out("ask.json");
  WriteFile(policy, R"({"sensitive":{"delete":"ask"}})");
  auto run = Start({PROBE_DYNAMIC, "rmdir", "full"}, "", "30", {"--policy", policy});
  ASSERT_EQ(run.wait_for(20s), std::future_status::ready) << "asked about a full directory";
  EXPECT_EQ(run.get().status, ENOTEMPTY);
  run = Start({PROBE_DYNAMIC, "rmdir", "dir"}, "", "30", {"--policy", policy});
  nlohmann::json req = WaitForRequest();
  EXPECT_EQ(req["preview"]["path"], "dir");
  EXPECT_EQ(req["preview"]["kind"], "directory");
  EXPECT_EQ(req["preview"]["sha256"], "");
  EXPECT_EQ(Allow(req), 0);
  RunResult r = run.get();
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_FALSE(Exists(t_.Ws("dir")));
  EXPECT_TRUE(Exists(t_.Ws("full/f")));
}

TEST_F(ApprovalRunTest, RmRfUnderDenyDeletesExactlyTheFilesBornInTheRun) {
  ASSERT_EQ(::mkdir(t_.Ws("d").c_str(), 0755), 0);
  for (int i = 0; i < 1000; ++i) WriteFile(t_.Ws("d/old_" + std::to_string(i)), "old");
  auto run = Start({"/bin/sh", "-c",
                    "i=0; while [ $i -lt 1000 ]; do : > d/new_$i; i=$((i+1)); done; rm -rf d; true"},
                   "deny");
  RunResult r = run.get();
  EXPECT_EQ(r.status, 0) << r.err;
  int old_left = 0, new_left = 0;
  for (int i = 0; i < 1000; ++i) {
    old_left += Exists(t_.Ws("d/old_" + std::to_string(i)));
    new_left += Exists(t_.Ws("d/new_" + std::to_string(i)));
  }
  EXPECT_EQ(old_left, 1000);
  EXPECT_EQ(new_left, 0);
}

TEST_F(ApprovalRunTest, RenameOverThenUnlinkCannotLaunderADelete) {
  auto run = Start({"/bin/sh", "-c", "echo new > tmp && mv tmp notes.txt && rm notes.txt"}, "deny");
  EXPECT_NE(run.get().status, 0);
  EXPECT_TRUE(Exists(t_.Ws("notes.txt"))) << "the path stays in place";
}

TEST_F(ApprovalRunTest, SedInPlaceAndGitWorkUnderDeny) {
  auto run = Start({"/bin/sh", "-c", "sed -i s/user/USER/ notes.txt"}, "deny");
  RunResult r = run.get();
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(ReadFile(t_.Ws("notes.txt")), "USER data\n");
  if (::access("/usr/bin/git", X_OK) != 0) GTEST_SKIP() << "git not installed";
  run = Start({"/bin/sh", "-c",
               "export HOME=\"$TMPDIR\" && git init -q . && git add . && "
               "git -c user.name=t -c user.email=t@t commit -qm x"},
              "deny");
  r = run.get();
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(Exists(t_.Ws(".git/HEAD")));
}

}  // namespace
}  // namespace cordon::testing
