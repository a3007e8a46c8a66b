// The approval outcome model: only allowed-once for that id and digest
// grants; wrong digest, replayed ids, timeouts, cancels and shutdown refuse.
// Plus the rules and tty approvers and the audit records of every ask.
#include "supervisor/approvals/approver.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <atomic>
#include <future>
#include <thread>

#include "supervisor/audit/audit_log.h"
#include "supervisor/approvals/make_approver.h"
#include "supervisor/approvals/rules_approver.h"
#include "supervisor/approvals/tty_approver.h"
#include "tests/support/json_lines.h"
#include "tests/support/test_env.h"

namespace cordon::supervisor {
namespace {

using namespace cordon::policy;  // the request, preview and record formats

using namespace std::chrono_literals;
using cordon::testing::JsonLines;
using cordon::testing::ReadFile;
using cordon::testing::ScratchTree;
using cordon::testing::WriteFile;

ApprovalRequest Request(uint64_t id, std::string path = "notes.txt", uint64_t size = 5) {
  ApprovalRequest r;
  r.request_id = id;
  r.preview = {std::move(path), size, std::string(64, 'a'), 1, 2, 3, 4};
  r.preview_digest = r.preview.Digest();
  r.tool_pid = 42;
  r.tool_argv0 = "rm";
  return r;
}

// A scripted approver: grants unless told otherwise, or waits for the
// cancel fd / deadline like a real one.
class ScriptedApprover final : public Approver {
 public:
  explicit ScriptedApprover(bool wait) : wait_(wait) {}
  const char* Name() const override { return "scripted"; }
  std::atomic<int> decided{0};

 protected:
  Outcome Decide(const ApprovalRequest&, std::chrono::steady_clock::time_point deadline,
                 int cancel_fd, std::string*) override {
    ++decided;
    if (!wait_) return Outcome::kAllowedOnce;
    int w = WaitReadable(-1, cancel_fd, deadline);
    return w == 2 ? Outcome::kCancelled : w == 0 ? Outcome::kTimeout : Outcome::kAllowedOnce;
  }

 private:
  bool wait_;
};

TEST(PreviewDigest, CoversEveryField) {
  DeletePreview base = Request(1).preview;
  std::string d = base.Digest();
  EXPECT_EQ(d.size(), 64u);
  auto changed = [&](auto mutate) {
    DeletePreview p = base;
    mutate(p);
    return p.Digest() != d;
  };
  EXPECT_TRUE(changed([](DeletePreview& p) { p.rel_path = "other.txt"; }));
  EXPECT_TRUE(changed([](DeletePreview& p) { p.size++; }));
  EXPECT_TRUE(changed([](DeletePreview& p) { p.sha256[0] = 'b'; }));
  EXPECT_TRUE(changed([](DeletePreview& p) { p.dev++; }));
  EXPECT_TRUE(changed([](DeletePreview& p) { p.ino++; }));
  EXPECT_TRUE(changed([](DeletePreview& p) { p.mtime_ns++; }));
  EXPECT_TRUE(changed([](DeletePreview& p) { p.ctime_ns++; }));
  auto round = DeletePreview::FromJson(base.ToJson());
  ASSERT_TRUE(round.has_value());
  EXPECT_EQ(round->Digest(), d);
}

TEST(Approver, GrantsOnlyTheFirstAskOfAnId) {
  ScriptedApprover a(false);
  EXPECT_EQ(a.Ask(Request(7), 1s), Outcome::kAllowedOnce);
  EXPECT_EQ(a.Ask(Request(7), 1s), Outcome::kStale) << "a replayed id never grants";
  EXPECT_EQ(a.Ask(Request(8), 1s), Outcome::kAllowedOnce) << "a new id is asked";
  EXPECT_EQ(a.decided, 2);
}

TEST(Approver, WrongDigestIsStaleWithoutAsking) {
  ScriptedApprover a(false);
  ApprovalRequest r = Request(1);
  r.preview_digest = Request(1, "other.txt").preview_digest;
  EXPECT_EQ(a.Ask(r, 1s), Outcome::kStale);
  EXPECT_EQ(a.Ask(Request(2), 1s), Outcome::kAllowedOnce);
  EXPECT_EQ(a.decided, 1);
}

TEST(Approver, TimeoutRefuses) {
  ScriptedApprover a(true);
  EXPECT_EQ(a.Ask(Request(1), 50ms), Outcome::kTimeout);
  EXPECT_EQ(a.Ask(Request(1), 1s), Outcome::kStale) << "a timed-out id cannot be retried";
}

TEST(Approver, CancelRefusesThePendingAskAndBurnsUnaskedIds) {
  ScriptedApprover a(true);
  auto pending = std::async(std::launch::async, [&] { return a.Ask(Request(1), 30s); });
  while (a.decided == 0) std::this_thread::sleep_for(1ms);
  a.Cancel(1);
  EXPECT_EQ(pending.get(), Outcome::kCancelled);
  a.Cancel(5);
  EXPECT_EQ(a.Ask(Request(5), 1s), Outcome::kStale);
}

TEST(Approver, CancelAllShutsDownPendingAndFutureAsks) {
  ScriptedApprover a(true);
  auto p1 = std::async(std::launch::async, [&] { return a.Ask(Request(1), 30s); });
  auto p2 = std::async(std::launch::async, [&] { return a.Ask(Request(2), 30s); });
  while (a.decided < 2) std::this_thread::sleep_for(1ms);
  a.CancelAll();
  EXPECT_EQ(p1.get(), Outcome::kShutdown);
  EXPECT_EQ(p2.get(), Outcome::kShutdown);
  EXPECT_EQ(a.Ask(Request(3), 1s), Outcome::kShutdown);
}

TEST(Approver, DenyApproverNeverGrants) {
  DenyApprover a;
  EXPECT_EQ(a.Ask(Request(1), 1s), Outcome::kDenied);
}

TEST(Approver, EveryRequestAndOutcomeIsAudited) {
  ScratchTree t;
  auto log = AuditLog::Open(t.Ws("a.jsonl"));
  ASSERT_TRUE(log.ok());
  std::shared_ptr<AuditLog> shared = std::move(log.value());
  ASSERT_TRUE(shared->Append("header", {}).ok());
  ScriptedApprover a(false);
  a.SetAuditLog(shared);
  EXPECT_EQ(a.Ask(Request(9), 1s), Outcome::kAllowedOnce);
  EXPECT_EQ(a.Ask(Request(9), 1s), Outcome::kStale);
  ASSERT_TRUE(shared->Close().ok());
  std::string bytes = ReadFile(t.Ws("a.jsonl"));
  ASSERT_TRUE(VerifyAuditBytes(bytes).intact);
  std::vector<nlohmann::json> recs = JsonLines(bytes);
  ASSERT_EQ(recs.size(), 4u);
  EXPECT_EQ(recs[1]["kind"], "approval");
  EXPECT_EQ(recs[1]["event"], "request");
  EXPECT_EQ(recs[1]["preview"]["path"], "notes.txt");
  EXPECT_EQ(recs[1]["preview_digest"], Request(9).preview_digest);
  EXPECT_EQ(recs[2]["event"], "outcome");
  EXPECT_EQ(recs[2]["outcome"], "allowed-once");
  EXPECT_EQ(recs[3]["outcome"], "stale");
  EXPECT_EQ(recs[3]["preview"]["path"], "notes.txt");
}

TEST(RulesApprover, AllowsByGlobAndSize) {
  std::string err;
  auto a = RulesApprover::FromText(
      R"([{"glob": "build/*.o", "max_bytes": 10}, {"glob": "*.tmp"}])", &err);
  ASSERT_TRUE(a) << err;
  EXPECT_EQ(a->Ask(Request(1, "build/x.o", 10), 1s), Outcome::kAllowedOnce);
  EXPECT_EQ(a->Ask(Request(2, "build/x.o", 11), 1s), Outcome::kDenied) << "over max_bytes";
  EXPECT_EQ(a->Ask(Request(3, "build/sub/x.o", 1), 1s), Outcome::kDenied) << "* stays in one dir";
  EXPECT_EQ(a->Ask(Request(4, "a.tmp", 1u << 30), 1s), Outcome::kAllowedOnce);
  EXPECT_EQ(a->Ask(Request(5, "notes.txt", 1), 1s), Outcome::kDenied);
}

// A write in place the journal cannot keep is allowed only by a rule that
// says "op": "write"; a rule for deletes never allows one, nor the reverse.
TEST(RulesApprover, AWriteInPlaceNeedsAWriteRule) {
  std::string err;
  auto a = RulesApprover::FromText(
      R"([{"glob": "*.log", "op": "write", "max_bytes": 100}, {"glob": "*.o"}])", &err);
  ASSERT_TRUE(a) << err;
  auto write = [](uint64_t id, std::string path, uint64_t size) {
    ApprovalRequest r = Request(id, std::move(path), size);
    r.preview.sha256.clear();
    r.preview.write_in_place = true;
    r.preview_digest = r.preview.Digest();
    return r;
  };
  EXPECT_EQ(a->Ask(write(1, "big.log", 100), 1s), Outcome::kAllowedOnce);
  EXPECT_EQ(a->Ask(write(2, "big.log", 101), 1s), Outcome::kDenied) << "over max_bytes";
  EXPECT_EQ(a->Ask(write(3, "x.o", 1), 1s), Outcome::kDenied) << "a delete rule";
  EXPECT_EQ(a->Ask(Request(4, "a.log", 1), 1s), Outcome::kDenied) << "a write rule";
  EXPECT_EQ(a->Ask(Request(5, "x.o", 1), 1s), Outcome::kAllowedOnce);
  EXPECT_NE(write(6, "x.o", 1).preview_digest, Request(6, "x.o", 1).preview_digest);
}

// A bypass request (policy/bypass.h) is answered only by a bypass rule
// ("bypass" any operation, "bypass-open"/"bypass-unlink" that one); a
// delete's or a write's rule never answers one, nor a bypass rule a delete.
TEST(RulesApprover, ABypassNeedsABypassRuleForThatOperation) {
  std::string err;
  auto a = RulesApprover::FromText(R"([{"glob": ".gitmodules", "op": "bypass-open"},
      {"glob": "*.pem", "op": "bypass"}, {"glob": "*.txt"}, {"glob": "*.log", "op": "write"}])",
                                   &err);
  ASSERT_TRUE(a) << err;
  auto bypass = [](uint64_t id, std::string path, const char* op) {
    ApprovalRequest r = Request(id, std::move(path), 1);
    r.preview.bypass = op;
    r.preview.open_flags = op == std::string("open") ? 02001 : 0;
    r.preview.bypass_rule = "protected path";
    r.preview_digest = r.preview.Digest();
    return r;
  };
  EXPECT_EQ(a->Ask(bypass(1, ".gitmodules", "open"), 1s), Outcome::kAllowedOnce);
  EXPECT_EQ(a->Ask(bypass(2, ".gitmodules", "unlink"), 1s), Outcome::kDenied) << "another op";
  EXPECT_EQ(a->Ask(bypass(3, "k.pem", "unlink"), 1s), Outcome::kAllowedOnce);
  EXPECT_EQ(a->Ask(bypass(4, "k.pem", "open"), 1s), Outcome::kAllowedOnce);
  EXPECT_EQ(a->Ask(bypass(5, "a.txt", "unlink"), 1s), Outcome::kDenied) << "a delete rule";
  EXPECT_EQ(a->Ask(bypass(6, "a.log", "open"), 1s), Outcome::kDenied) << "a write rule";
  EXPECT_EQ(a->Ask(Request(7, "k.pem", 1), 1s), Outcome::kDenied) << "a bypass rule, a delete";
  EXPECT_EQ(a->Ask(Request(8, "a.txt", 1), 1s), Outcome::kAllowedOnce);
  // The operation, its flags and the rule are in the digest.
  ApprovalRequest open = bypass(9, "k.pem", "open");
  ApprovalRequest other = open;
  other.preview.open_flags = 01;
  EXPECT_NE(open.preview.Digest(), other.preview.Digest());
  other = open;
  other.preview.bypass = "unlink";
  EXPECT_NE(open.preview.Digest(), other.preview.Digest());
  EXPECT_NE(open.preview.Digest(), Request(9, "k.pem", 1).preview.Digest());
  // It travels as JSON and back unchanged.
  auto back = DeletePreview::FromJson(open.preview.ToJson());
  ASSERT_TRUE(back);
  EXPECT_EQ(back->Digest(), open.preview.Digest());
  EXPECT_EQ(BypassOperation(open.preview), "open O_WRONLY|O_APPEND");
  nlohmann::json bad = open.preview.ToJson();
  bad["op"] = "rename";
  EXPECT_FALSE(DeletePreview::FromJson(bad)) << "no such bypass operation";
}

// "bypass-rmdir" and "bypass-mkdir" answer only their own operation;
// "bypass" answers them as any bypass.
TEST(RulesApprover, RmdirAndMkdirRulesAnswerOnlyTheirOwn) {
  std::string err;
  auto a = RulesApprover::FromText(R"([{"glob": "gone", "op": "bypass-rmdir"},
      {"glob": "made", "op": "bypass-mkdir"}, {"glob": "any", "op": "bypass"}])",
                                   &err);
  ASSERT_TRUE(a) << err;
  auto bypass = [](uint64_t id, std::string path, const char* op) {
    ApprovalRequest r = Request(id, std::move(path), 0);
    r.preview.bypass = op;
    r.preview.directory = op == std::string("rmdir");
    r.preview.bypass_rule = "denied path";
    r.preview_digest = r.preview.Digest();
    return r;
  };
  EXPECT_EQ(a->Ask(bypass(1, "gone", "rmdir"), 1s), Outcome::kAllowedOnce);
  EXPECT_EQ(a->Ask(bypass(2, "gone", "unlink"), 1s), Outcome::kDenied) << "another op";
  EXPECT_EQ(a->Ask(bypass(3, "gone", "mkdir"), 1s), Outcome::kDenied) << "another op";
  EXPECT_EQ(a->Ask(bypass(4, "made", "mkdir"), 1s), Outcome::kAllowedOnce);
  EXPECT_EQ(a->Ask(bypass(5, "made", "rmdir"), 1s), Outcome::kDenied) << "another op";
  EXPECT_EQ(a->Ask(bypass(6, "made", "open"), 1s), Outcome::kDenied) << "another op";
  EXPECT_EQ(a->Ask(bypass(7, "any", "rmdir"), 1s), Outcome::kAllowedOnce);
  EXPECT_EQ(a->Ask(bypass(8, "any", "mkdir"), 1s), Outcome::kAllowedOnce);
  // Each travels as JSON and back with its digest; the operation is in it.
  for (const char* op : {"rmdir", "mkdir"}) {
    ApprovalRequest r = bypass(9, "any", op);
    auto back = DeletePreview::FromJson(r.preview.ToJson());
    ASSERT_TRUE(back) << op;
    EXPECT_EQ(back->Digest(), r.preview.Digest()) << op;
    EXPECT_EQ(back->directory, r.preview.directory) << op;
    EXPECT_EQ(BypassOperation(r.preview), op);
  }
  EXPECT_NE(bypass(10, "any", "rmdir").preview.Digest(), bypass(10, "any", "mkdir").preview.Digest());
}

// A rename's preview carries its destination and what it replaces, in the
// digest and the JSON; a rules file answers it only with "bypass" or
// "bypass-rename", and only when the glob covers both ends.
TEST(RulesApprover, ARenameRuleMustCoverBothEnds) {
  std::string err;
  auto a = RulesApprover::FromText(R"([{"glob": ".gitmodules*", "op": "bypass-rename"},
      {"glob": "notes*", "op": "bypass-open"}])",
                                   &err);
  ASSERT_TRUE(a) << err;
  auto rename = [](uint64_t id, std::string from, std::string to, uint64_t replaced_ino) {
    ApprovalRequest r = Request(id, std::move(from), 0);
    r.preview.bypass = "rename";
    r.preview.bypass_rule = "protected path";
    r.preview.to.rel_path = std::move(to);
    r.preview.to.ino = replaced_ino;
    r.preview.to.sha256 = replaced_ino ? std::string(64, 'a') : "";
    r.preview_digest = r.preview.Digest();
    return r;
  };
  EXPECT_EQ(a->Ask(rename(1, ".gitmodules.new", ".gitmodules", 7), 1s), Outcome::kAllowedOnce);
  EXPECT_EQ(a->Ask(rename(2, ".gitmodules", "elsewhere", 0), 1s), Outcome::kDenied)
      << "the glob covers the source only";
  EXPECT_EQ(a->Ask(rename(3, "elsewhere", ".gitmodules", 7), 1s), Outcome::kDenied)
      << "the glob covers the destination only";
  EXPECT_EQ(a->Ask(rename(4, "notes.a", "notes.b", 0), 1s), Outcome::kDenied) << "another op";
  // Where it goes and what it replaces are in the digest.
  const ApprovalRequest r = rename(5, ".gitmodules.new", ".gitmodules", 7);
  ApprovalRequest other = r;
  other.preview.to.rel_path = ".gitmodules.x";
  EXPECT_NE(r.preview.Digest(), other.preview.Digest());
  other = r;
  other.preview.to.ino = 0;
  EXPECT_NE(r.preview.Digest(), other.preview.Digest()) << "a free name is another answer";
  other = r;
  other.preview.to.sha256 = std::string(64, 'b');
  EXPECT_NE(r.preview.Digest(), other.preview.Digest());
  // It travels as JSON and back unchanged; without its destination it is
  // no rename.
  auto back = DeletePreview::FromJson(r.preview.ToJson());
  ASSERT_TRUE(back);
  EXPECT_EQ(back->Digest(), r.preview.Digest());
  EXPECT_EQ(back->to.rel_path, ".gitmodules");
  EXPECT_EQ(BypassOperation(r.preview), "rename to .gitmodules (replacing the file there)");
  nlohmann::json bad = r.preview.ToJson();
  bad.erase("to");
  EXPECT_FALSE(DeletePreview::FromJson(bad));
  bad = r.preview.ToJson();
  bad["to"].erase("sha256");
  EXPECT_FALSE(DeletePreview::FromJson(bad));
  bad = r.preview.ToJson();
  bad["op"] = "link";
  EXPECT_FALSE(DeletePreview::FromJson(bad)) << "a link never replaces the file at its new name";
  bad = r.preview.ToJson();
  bad["op"] = "frobnicate";
  EXPECT_FALSE(DeletePreview::FromJson(bad)) << "no such bypass operation";
}

// The file a rename replaces, as its own preview and as the rename's
// destination: the two shapes convert both ways without losing a field.
TEST(DeletePreview, ADestinationAndItsPreviewConvertBothWays) {
  DeletePreview f;
  f.rel_path = "a/b";
  f.size = 5;
  f.sha256 = std::string(64, 'c');
  f.dev = 1;
  f.ino = 2;
  f.mtime_ns = 3;
  f.ctime_ns = 4;
  DeletePreview rename;
  rename.to = DeletePreview::DestinationOf(f);
  EXPECT_EQ(rename.to.rel_path, "a/b");
  EXPECT_EQ(rename.ReplacedPreview().Digest(), f.Digest());
}

TEST(RulesApprover, MalformedRulesAreRefused) {
  for (const char* bad :
       {"", "{", "{}", R"([1])", R"([{"max_bytes": 1}])", R"([{"glob": ""}])",
        R"([{"glob": "/abs/*"}])", R"([{"glob": "a", "max_bytes": -1}])",
        R"([{"glob": "a", "max_bytes": "1"}])", R"([{"glob": "a", "extra": 1}])",
        R"([{"glob": "a", "op": "rename"}])"}) {
    std::string err;
    EXPECT_EQ(RulesApprover::FromText(bad, &err), nullptr) << bad;
    EXPECT_FALSE(err.empty()) << bad;
  }
}

TEST(MakeApprover, ParsesSpecs) {
  ScratchTree t;
  WriteFile(t.Ws("rules.json"), R"([{"glob": "*.o"}])");
  WriteFile(t.Ws("bad.json"), "[{");
  std::string err;
  auto deny = MakeApprover("deny", &err);
  ASSERT_TRUE(deny);
  EXPECT_STREQ(deny->Name(), "deny");
  auto rules = MakeApprover("rules:" + t.Ws("rules.json"), &err);
  ASSERT_TRUE(rules) << err;
  EXPECT_STREQ(rules->Name(), "rules");
  auto sock = MakeApprover("socket:/nonexistent/sock", &err);
  ASSERT_TRUE(sock);
  EXPECT_EQ(sock->Ask(Request(1), 1s), Outcome::kDisconnected);
  for (std::string bad : {std::string("allow"), "rules:" + t.Ws("bad.json"),
                          "rules:" + t.Ws("missing.json"), std::string("socket:")}) {
    err.clear();
    EXPECT_EQ(MakeApprover(bad, &err), nullptr) << bad;
    EXPECT_FALSE(err.empty()) << bad;
  }
}

// The tty approver on a real pseudo-terminal.
class TtyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    master_.reset(::posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC));
    ASSERT_TRUE(master_.valid());
    ASSERT_EQ(::grantpt(master_.get()), 0);
    ASSERT_EQ(::unlockpt(master_.get()), 0);
    Fd slave(::open(::ptsname(master_.get()), O_RDWR | O_NOCTTY | O_CLOEXEC));
    ASSERT_TRUE(slave.valid());
    approver_ = std::make_unique<TtyApprover>(std::move(slave));
  }
  // Answers once the prompt has been shown; returns what the terminal showed.
  std::string AnswerAfterPrompt(const std::string& answer) {
    std::string shown;
    while (shown.find("anything else keeps it: ") == std::string::npos) {
      char buf[512];
      ssize_t n = ::read(master_.get(), buf, sizeof buf);
      if (n <= 0) break;
      shown.append(buf, static_cast<size_t>(n));
    }
    if (!answer.empty()) {
      EXPECT_EQ(::write(master_.get(), answer.data(), answer.size()),
                static_cast<ssize_t>(answer.size()));
    }
    return shown;
  }
  Fd master_;
  std::unique_ptr<TtyApprover> approver_;
};

TEST_F(TtyTest, TheTypedNameAllowsOnceAndThePreviewIsShown) {
  auto ask = std::async(std::launch::async, [&] { return approver_->Ask(Request(1), 10s); });
  std::string shown = AnswerAfterPrompt("notes.txt\n");
  EXPECT_EQ(ask.get(), Outcome::kAllowedOnce);
  EXPECT_NE(shown.find("notes.txt"), std::string::npos) << shown;
  EXPECT_NE(shown.find(std::string(64, 'a')), std::string::npos) << "shows the SHA-256";
  EXPECT_NE(shown.find(Request(1).preview_digest), std::string::npos);
}

// "y" no longer answers: a tool sharing the terminal could print a
// look-alike prompt for a harmless file over the real one.
TEST_F(TtyTest, AnythingElseDenies) {
  for (std::string answer :
       {"n\n", "\n", "y\n", "yes\n", "notes\n", "notes.txt \n", "dir/notes.txt\n"}) {
    static uint64_t id = 10;
    auto ask = std::async(std::launch::async, [&] { return approver_->Ask(Request(++id), 10s); });
    AnswerAfterPrompt(answer);
    EXPECT_EQ(ask.get(), Outcome::kDenied) << answer;
  }
}

// A crafted file name cannot redraw the prompt: control bytes are shown
// escaped, and the escaped form is what allows.
TEST_F(TtyTest, ControlBytesInANameAreShownEscaped) {
  const std::string name = "a\x1b[2K\rb\nc";
  auto ask = std::async(std::launch::async,
                        [&] { return approver_->Ask(Request(30, "dir/" + name), 10s); });
  std::string shown = AnswerAfterPrompt("a\\x1b[2K\\x0db\\x0ac\n");
  EXPECT_EQ(ask.get(), Outcome::kAllowedOnce);
  EXPECT_EQ(shown.find('\x1b'), std::string::npos) << "no raw escape reaches the terminal";
  EXPECT_NE(shown.find("dir/a\\x1b[2K\\x0db\\x0ac"), std::string::npos) << shown;
}

TEST_F(TtyTest, TimeoutRefuses) {
  EXPECT_EQ(approver_->Ask(Request(1), 100ms), Outcome::kTimeout);
}

TEST_F(TtyTest, CancelRefuses) {
  auto ask = std::async(std::launch::async, [&] { return approver_->Ask(Request(2), 30s); });
  AnswerAfterPrompt("");
  approver_->Cancel(2);
  EXPECT_EQ(ask.get(), Outcome::kCancelled);
}

}  // namespace
}  // namespace cordon::supervisor
