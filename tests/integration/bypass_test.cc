// Per-operation bypass (issue 27 item 1, seed 004: "Tools can request a
// bypass only when sandbox.allowBypass is enabled, and the permission UI
// records whether the operation ran sandboxed or bypassed"), end to end:
// the real cordon, a forked probe (dynamic, through the preload, and
// static), answers from a rules file or the real policyd and `cordon
// approve`, the disk and the audit log read afterwards.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <future>
#include <memory>
#include <thread>

#include "policy/audit_record.h"
#include "policy/digest.h"
#include "tests/integration/bypass_fixture.h"
#include "tests/support/child_process.h"
#include "tests/support/json_lines.h"
#include "tests/support/test_env.h"

namespace cordon::testing {
namespace {

using namespace std::chrono_literals;
using ::testing::HasSubstr;

class BypassTest : public BypassFixture {};

// Without sandbox.allowBypass nobody is asked, whatever the approver would
// say: the protected path stays refused, as before.
TEST_P(BypassTest, WithoutAllowBypassNoRequestIsMade) {
  const std::string allow =
      Rules(R"([{"glob": "*", "op": "bypass"}, {"glob": ".*", "op": "bypass"}])");
  EXPECT_EQ(Run(kWrite, allow, {"append", ".gitmodules"}), EACCES) << last_.err;
  EXPECT_EQ(ReadFile(t_.Ws(".gitmodules")), kModules);
  EXPECT_EQ(Run(kWrite, allow, {"unlink", "key.pem"}), EACCES) << last_.err;
  EXPECT_TRUE(Exists(t_.Ws("key.pem")));
  EXPECT_TRUE(Approvals().empty()) << "no request without allowBypass";
  EXPECT_EQ(Decisions("bypassed"), 0);
}

// The read-only profile: every change in the workspace is refused by its
// rule, so with allowBypass each may be asked about (docs/approvals.md: a
// path "made read-only inside the workspace"). The approved one is made,
// beneath the workspace held for bypasses alone; its neighbour stays
// refused; without allowBypass nobody is asked.
TEST_P(BypassTest, UnderTheReadOnlyProfileAChangeMayBeAsked) {
  const std::vector<std::string> ro = {"--profile", "read-only"};
  const std::string allow =
      Rules(R"([{"glob": "notes.txt", "op": "bypass-open"}, {"glob": "made", "op": "bypass"}])");
  EXPECT_EQ(Run(kWrite, allow, {"append", "notes.txt"}, {}, ro), EACCES) << last_.err;
  EXPECT_EQ(ReadFile(t_.Ws("notes.txt")), "notes\n");
  EXPECT_TRUE(Approvals().empty());
  EXPECT_EQ(Run(kWriteBypass, allow, {"append", "notes.txt"}, {}, ro), 0) << last_.err;
  EXPECT_EQ(ReadFile(t_.Ws("notes.txt")), "notes\nprobe\n");
  EXPECT_EQ(Decisions("bypassed"), 1);
  ASSERT_FALSE(Approvals().empty());
  EXPECT_EQ(Approvals()[0]["preview"]["path"], "notes.txt");
  EXPECT_EQ(Run(kWriteBypass, allow, {"mkdir", "made"}, {}, ro), 0) << last_.err;
  EXPECT_TRUE(Exists(t_.Ws("made")));
  WriteFile(t_.Ws("other.txt"), "other\n");
  EXPECT_EQ(Run(kWriteBypass, allow, {"append", "other.txt"}, {}, ro), EACCES) << last_.err;
  EXPECT_EQ(ReadFile(t_.Ws("other.txt")), "other\n");
  EXPECT_EQ(Outcomes(), std::vector<std::string>{"denied"});
}

// --approvals deny is no approver: no request either.
TEST_P(BypassTest, WithoutAnApproverNoRequestIsMade) {
  EXPECT_EQ(Run(kWriteBypass, "deny", {"append", ".gitmodules"}), EACCES) << last_.err;
  EXPECT_EQ(ReadFile(t_.Ws(".gitmodules")), kModules);
  EXPECT_TRUE(Approvals().empty());
}

// allowBypass and an approver who allows this one operation: exactly that
// operation runs, the audit log says "bypassed"; the neighbouring
// operation on the same file (an unlink) is asked on its own and refused.
TEST_P(BypassTest, AnAllowedOnceRunsExactlyThatOperation) {
  const std::string allow = Rules(R"([{"glob": ".gitmodules", "op": "bypass-open"}])");
  EXPECT_EQ(Run(kWriteBypass, allow, {"append", ".gitmodules"}), 0) << last_.err;
  EXPECT_EQ(ReadFile(t_.Ws(".gitmodules")), std::string(kModules) + "probe\n");
  EXPECT_EQ(Decisions("bypassed"), 1);
  auto approvals = Approvals();
  ASSERT_FALSE(approvals.empty());
  const nlohmann::json& preview = approvals[0]["preview"];
  EXPECT_EQ(preview["kind"], "bypass");
  EXPECT_EQ(preview["op"], "open");
  EXPECT_EQ(preview["path"], ".gitmodules");
  EXPECT_EQ(preview["rule"], "protected path");
  EXPECT_EQ(preview["ino"], [&] {
    struct stat st {};
    ::stat(t_.Ws(".gitmodules").c_str(), &st);
    return static_cast<uint64_t>(st.st_ino);
  }());
  EXPECT_EQ(Outcomes(), std::vector<std::string>{"allowed-once"});
  EXPECT_EQ(RunCordon({"audit", "verify", log_}).status, 0);
  // The neighbour: an unlink of the same file is another operation.
  EXPECT_EQ(Run(kWriteBypass, allow, {"unlink", ".gitmodules"}), EACCES) << last_.err;
  EXPECT_TRUE(Exists(t_.Ws(".gitmodules")));
  EXPECT_EQ(Outcomes(), std::vector<std::string>{"denied"});
  EXPECT_EQ(Decisions("bypassed"), 0);
  // An honest file beside it needs no bypass.
  EXPECT_EQ(Run(kWriteBypass, allow, {"append", "notes.txt"}), 0) << last_.err;
  EXPECT_TRUE(Approvals().empty());
}

// A deny glob's match, deleted by a bypass: the preview is a delete's
// (with its SHA-256), the file is gone, its neighbour stays.
TEST_P(BypassTest, AnUnlinkOfADenyGlobMatch) {
  const std::string allow = Rules(R"([{"glob": "key.pem", "op": "bypass-unlink"}])");
  EXPECT_EQ(Run(kWriteBypass, allow, {"unlink", "key.pem"}), 0) << last_.err;
  EXPECT_FALSE(Exists(t_.Ws("key.pem")));
  EXPECT_EQ(Decisions("bypassed"), 1);
  auto approvals = Approvals();
  ASSERT_FALSE(approvals.empty());
  EXPECT_EQ(approvals[0]["preview"]["op"], "unlink");
  EXPECT_EQ(approvals[0]["preview"]["sha256"], policy::Sha256Hex("key\n"));
  EXPECT_EQ(Run(kWriteBypass, allow, {"unlink", "other.pem"}), EACCES) << last_.err;
  EXPECT_TRUE(Exists(t_.Ws("other.pem")));
  EXPECT_EQ(Outcomes(), std::vector<std::string>{"denied"});
}

// The issue's other examples: a repository's .git/config and a path the
// user denied inside the workspace. Each allowed once; the file beside
// each (no rule for it) stays refused.
TEST_P(BypassTest, ARepositoryConfigAndAUserDeniedPath) {
  ASSERT_EQ(::mkdir(t_.Ws(".git").c_str(), 0755), 0);
  WriteFile(t_.Ws(".git/config"), "[core]\n");
  ASSERT_EQ(::mkdir(t_.Ws("secret").c_str(), 0755), 0);
  WriteFile(t_.Ws("secret/token"), "t\n");
  WriteFile(t_.Ws("secret/other"), "o\n");
  const std::string allow = Rules(
      R"([{"glob": ".git/config", "op": "bypass-open"}, {"glob": "secret/token", "op": "bypass"}])");
  const std::vector<std::string> deny = {"--deny", t_.Ws("secret")};
  EXPECT_EQ(Run(kWriteBypass, allow, {"append", ".git/config"}, {}, deny), 0) << last_.err;
  EXPECT_EQ(ReadFile(t_.Ws(".git/config")), "[core]\nprobe\n");
  EXPECT_EQ(Decisions("bypassed"), 1);
  EXPECT_EQ(Run(kWriteBypass, allow, {"append", "secret/token"}, {}, deny), 0) << last_.err;
  EXPECT_EQ(ReadFile(t_.Ws("secret/token")), "t\nprobe\n");
  EXPECT_EQ(Approvals()[0]["preview"]["rule"], "denied path");
  EXPECT_EQ(Run(kWriteBypass, allow, {"append", "secret/other"}, {}, deny), EACCES) << last_.err;
  EXPECT_EQ(ReadFile(t_.Ws("secret/other")), "o\n");
  EXPECT_EQ(Outcomes(), std::vector<std::string>{"denied"});
  // A name that does not exist yet: made exclusively, once allowed.
  EXPECT_EQ(Run(kWriteBypass, allow, {"create", "secret/token2"}, {}, deny), EACCES) << last_.err;
  EXPECT_FALSE(Exists(t_.Ws("secret/token2")));
  const std::string create = Rules(R"([{"glob": "secret/new", "op": "bypass-open"}])");
  EXPECT_EQ(Run(kWriteBypass, create, {"create", "secret/new"}, {}, deny), 0) << last_.err;
  EXPECT_EQ(ReadFile(t_.Ws("secret/new")), "probe\n");
  EXPECT_EQ(Approvals()[0]["preview"]["ino"], 0);
}

// The inode number of `path` (0 when it is gone).
uint64_t Ino(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0 ? static_cast<uint64_t>(st.st_ino) : 0;
}

// rmdir of an empty directory inside a path the user denied: allowed once,
// the directory is gone and the log says bypassed. A directory with
// entries is not offered; a rule for another operation answers no rmdir;
// an honest empty directory beside them needs no ask.
TEST_P(BypassTest, AnRmdirOfAnEmptyDirectory) {
  for (const char* d : {"secret", "secret/empty", "secret/full", "secret/other", "plain"}) {
    ASSERT_EQ(::mkdir(t_.Ws(d).c_str(), 0755), 0) << d;
  }
  WriteFile(t_.Ws("secret/full/f"), "f\n");
  const uint64_t ino = Ino(t_.Ws("secret/empty"));
  const std::string allow = Rules(R"([{"glob": "secret/empty", "op": "bypass-rmdir"},
      {"glob": "secret/full", "op": "bypass"}, {"glob": "secret/other", "op": "bypass-unlink"},
      {"glob": "secret/other", "op": "bypass-mkdir"}])");
  const std::vector<std::string> deny = {"--deny", t_.Ws("secret")};
  EXPECT_EQ(Run(kWriteBypass, allow, {"sys", "rmdir", "secret/empty"}, {}, deny), 0) << last_.err;
  EXPECT_FALSE(Exists(t_.Ws("secret/empty")));
  EXPECT_EQ(Decisions("bypassed"), 1);
  auto approvals = Approvals();
  ASSERT_FALSE(approvals.empty());
  const nlohmann::json& preview = approvals[0]["preview"];
  EXPECT_EQ(preview["kind"], "bypass");
  EXPECT_EQ(preview["op"], "rmdir");
  EXPECT_EQ(preview["path"], "secret/empty");
  EXPECT_EQ(preview["rule"], "denied path");
  EXPECT_EQ(preview["ino"], ino);
  EXPECT_EQ(Outcomes(), std::vector<std::string>{"allowed-once"});
  EXPECT_EQ(RunCordon({"audit", "verify", log_}).status, 0);
  // With an entry: refused as before, nobody asked, nothing removed.
  EXPECT_EQ(Run(kWriteBypass, allow, {"sys", "rmdir", "secret/full"}, {}, deny), EACCES)
      << last_.err;
  EXPECT_TRUE(Exists(t_.Ws("secret/full/f")));
  EXPECT_TRUE(Approvals().empty());
  // An unlink's or a mkdir's rule is no answer for an rmdir.
  EXPECT_EQ(Run(kWriteBypass, allow, {"sys", "rmdir", "secret/other"}, {}, deny), EACCES)
      << last_.err;
  EXPECT_TRUE(Exists(t_.Ws("secret/other")));
  EXPECT_EQ(Outcomes(), std::vector<std::string>{"denied"});
  EXPECT_EQ(Decisions("bypassed"), 0);
  // The honest neighbour: no refusal, no ask.
  EXPECT_EQ(Run(kWriteBypass, allow, {"sys", "rmdir", "plain"}, {}, deny), 0) << last_.err;
  EXPECT_FALSE(Exists(t_.Ws("plain")));
  EXPECT_TRUE(Approvals().empty());
}

// mkdir of a new name inside a path the user made read-only: allowed once,
// made with the tool's umask; a name that exists is EEXIST; a rule for
// another operation answers no mkdir; an honest mkdir needs no ask.
TEST_P(BypassTest, AMkdirOfANewName) {
  ASSERT_EQ(::mkdir(t_.Ws("ro").c_str(), 0755), 0);
  ASSERT_EQ(::mkdir(t_.Ws("ro/taken").c_str(), 0755), 0);
  const std::string allow = Rules(R"([{"glob": "ro/made", "op": "bypass-mkdir"},
      {"glob": "ro/taken", "op": "bypass"}, {"glob": "ro/other", "op": "bypass-rmdir"},
      {"glob": "ro/other", "op": "bypass-open"}])");
  const std::vector<std::string> ro = {"--ro", t_.Ws("ro")};
  EXPECT_EQ(Run(kWriteBypass, allow, {"sys", "umask=027", "mkdir", "ro/made", "777"}, {}, ro), 0)
      << last_.err;
  struct stat st {};
  ASSERT_EQ(::stat(t_.Ws("ro/made").c_str(), &st), 0);
  EXPECT_TRUE(S_ISDIR(st.st_mode));
  EXPECT_EQ(st.st_mode & 07777, 0750u) << "the tool's umask";
  EXPECT_EQ(Decisions("bypassed"), 1);
  auto approvals = Approvals();
  ASSERT_FALSE(approvals.empty());
  const nlohmann::json& preview = approvals[0]["preview"];
  EXPECT_EQ(preview["kind"], "bypass");
  EXPECT_EQ(preview["op"], "mkdir");
  EXPECT_EQ(preview["path"], "ro/made");
  EXPECT_EQ(preview["rule"], "read-only path");
  EXPECT_EQ(preview["ino"], 0);
  EXPECT_EQ(Outcomes(), std::vector<std::string>{"allowed-once"});
  EXPECT_EQ(RunCordon({"audit", "verify", log_}).status, 0);
  // A name that exists: the kernel's EEXIST, as before, nobody asked.
  EXPECT_EQ(Run(kWriteBypass, allow, {"sys", "mkdir", "ro/taken", "755"}, {}, ro), EEXIST)
      << last_.err;
  EXPECT_TRUE(Approvals().empty());
  // An rmdir's or an open's rule is no answer for a mkdir.
  EXPECT_EQ(Run(kWriteBypass, allow, {"sys", "mkdir", "ro/other", "755"}, {}, ro), EACCES)
      << last_.err;
  EXPECT_FALSE(Exists(t_.Ws("ro/other")));
  EXPECT_EQ(Outcomes(), std::vector<std::string>{"denied"});
  EXPECT_EQ(Decisions("bypassed"), 0);
  // A new name a deny glob matches (refused by the policy's decision, not
  // by a path rule): asked the same way.
  const std::string glob = Rules(R"([{"glob": "made.pem", "op": "bypass-mkdir"}])");
  EXPECT_EQ(Run(kWriteBypass, glob, {"sys", "mkdir", "made.pem", "755"}), 0) << last_.err;
  EXPECT_TRUE(Exists(t_.Ws("made.pem")));
  EXPECT_EQ(Decisions("bypassed"), 1);
  EXPECT_EQ(Run(kWriteBypass, glob, {"sys", "mkdir", "other.pem.d.pem", "755"}), EACCES)
      << last_.err;
  EXPECT_FALSE(Exists(t_.Ws("other.pem.d.pem")));
  EXPECT_EQ(Outcomes(), std::vector<std::string>{"denied"});
  // The honest neighbour: no refusal, no ask.
  EXPECT_EQ(Run(kWriteBypass, allow, {"sys", "mkdir", "plain", "755"}, {}, ro), 0) << last_.err;
  EXPECT_TRUE(Exists(t_.Ws("plain")));
  EXPECT_TRUE(Approvals().empty());
}

// A deny and an answer for another operation (a delete's rule, a write's)
// change nothing, and the log says denied.
// A file renamed onto a protected path (git's way of writing one: new
// bytes renamed over the old), allowed once: the new bytes stand there; the
// preview names both ends and the SHA-256 of the file replaced; the log
// says bypassed. A rule that covers one end only answers no rename; without
// allowBypass nobody is asked; a rename no rule refuses needs no ask.
TEST_P(BypassTest, ARenameOntoAProtectedPath) {
  const std::string fresh = "[submodule \"x\"]\n";
  WriteFile(t_.Ws(".gitmodules.new"), fresh);
  const uint64_t ino = Ino(t_.Ws(".gitmodules"));
  const std::string allow = Rules(R"([{"glob": ".gitmodules*", "op": "bypass-rename"}])");
  EXPECT_EQ(Run(kWriteBypass, allow, {"rename", ".gitmodules.new", ".gitmodules"}), 0) << last_.err;
  EXPECT_EQ(ReadFile(t_.Ws(".gitmodules")), fresh);
  EXPECT_FALSE(Exists(t_.Ws(".gitmodules.new")));
  EXPECT_EQ(Decisions("bypassed"), 1);
  auto approvals = Approvals();
  ASSERT_FALSE(approvals.empty());
  const nlohmann::json& preview = approvals[0]["preview"];
  EXPECT_EQ(preview["kind"], "bypass");
  EXPECT_EQ(preview["op"], "rename");
  EXPECT_EQ(preview["path"], ".gitmodules.new");
  EXPECT_EQ(preview["rule"], "protected path");
  EXPECT_EQ(preview["to"]["path"], ".gitmodules");
  EXPECT_EQ(preview["to"]["ino"], ino);
  EXPECT_EQ(preview["to"]["sha256"], policy::Sha256Hex(kModules));
  EXPECT_EQ(Outcomes(), std::vector<std::string>{"allowed-once"});
  EXPECT_EQ(RunCordon({"audit", "verify", log_}).status, 0);
  // Away from the protected path: asked, and the rule covers the source
  // only: denied, nothing moved.
  EXPECT_EQ(Run(kWriteBypass, allow, {"rename", ".gitmodules", "moved"}), EACCES) << last_.err;
  EXPECT_EQ(ReadFile(t_.Ws(".gitmodules")), fresh);
  EXPECT_FALSE(Exists(t_.Ws("moved")));
  EXPECT_EQ(Outcomes(), std::vector<std::string>{"denied"});
  EXPECT_EQ(Decisions("bypassed"), 0);
  // Without allowBypass: refused as before, nobody asked.
  WriteFile(t_.Ws(".gitmodules.new"), "again\n");
  EXPECT_EQ(Run(kWrite, allow, {"rename", ".gitmodules.new", ".gitmodules"}), EACCES) << last_.err;
  EXPECT_EQ(ReadFile(t_.Ws(".gitmodules")), fresh);
  EXPECT_TRUE(Approvals().empty());
  // The honest neighbour: no refusal, no ask.
  EXPECT_EQ(Run(kWriteBypass, allow, {"rename", "notes.txt", "notes2.txt"}), 0) << last_.err;
  EXPECT_EQ(ReadFile(t_.Ws("notes2.txt")), "notes\n");
  EXPECT_TRUE(Approvals().empty());
}

TEST_P(BypassTest, ADenyOrAnAnswerForAnotherOperationChangesNothing) {
  EXPECT_EQ(Run(kWriteBypass, Rules(R"([{"glob": "notes.txt", "op": "bypass"}])"),
                {"append", ".gitmodules"}),
            EACCES);
  EXPECT_EQ(Outcomes(), std::vector<std::string>{"denied"});
  EXPECT_THAT(last_.err, HasSubstr("bypass denied"));
  for (const char* other :
       {R"([{"glob": ".gitmodules"}])", R"([{"glob": ".gitmodules", "op": "write"}])",
        R"([{"glob": ".gitmodules", "op": "bypass-unlink"}])"}) {
    EXPECT_EQ(Run(kWriteBypass, Rules(other), {"append", ".gitmodules"}), EACCES) << other;
    EXPECT_EQ(ReadFile(t_.Ws(".gitmodules")), kModules) << other;
    EXPECT_EQ(Outcomes(), std::vector<std::string>{"denied"}) << other;
    EXPECT_EQ(Decisions("bypassed"), 0) << other;
  }
}

// The built-in credential list is never offered, whatever the approver
// would say: a workspace that is the home holds ~/.ssh.
TEST_P(BypassTest, ACredentialPathIsNeverAsked) {
  ASSERT_EQ(::mkdir(t_.Ws(".ssh").c_str(), 0700), 0);
  WriteFile(t_.Ws(".ssh/config"), "Host *\n");
  const std::string allow = Rules(R"([{"glob": ".ssh/*", "op": "bypass"}])");
  EXPECT_EQ(Run(kWriteBypass, allow, {"append", ".ssh/config"}, {"HOME=" + t_.ws()}), EACCES)
      << last_.err;
  EXPECT_EQ(Run(kWriteBypass, allow, {"unlink", ".ssh/config"}, {"HOME=" + t_.ws()}), EACCES)
      << last_.err;
  EXPECT_TRUE(Approvals().empty()) << "a credential path is never asked about";
  // A user's own --deny of that path takes the credential rule's place in
  // the lookup; the path is still on the credential list.
  EXPECT_EQ(Run(kWriteBypass, allow, {"append", ".ssh/config"}, {"HOME=" + t_.ws()},
                {"--deny", t_.Ws(".ssh")}),
            EACCES)
      << last_.err;
  EXPECT_TRUE(Approvals().empty()) << "a credential path is never asked about";
  EXPECT_EQ(ReadFile(t_.Ws(".ssh/config")), "Host *\n");
}

// Outside the workspace, and through a raw "..": never offered.
TEST_P(BypassTest, OutsideTheWorkspaceIsNeverAsked) {
  WriteFile(t_.Out("elsewhere.txt"), "elsewhere\n");
  const std::string allow =
      Rules(R"([{"glob": "*", "op": "bypass"}, {"glob": "*/*", "op": "bypass"}])");
  EXPECT_EQ(Run(kWriteBypass, allow, {"append", t_.Out("elsewhere.txt")}), EACCES) << last_.err;
  EXPECT_EQ(Run(kWriteBypass, allow, {"append", "../ws/.gitmodules"}), EACCES) << last_.err;
  EXPECT_EQ(ReadFile(t_.Out("elsewhere.txt")), "elsewhere\n");
  EXPECT_EQ(ReadFile(t_.Ws(".gitmodules")), kModules);
  EXPECT_TRUE(Approvals().empty());
}

INSTANTIATE_TEST_SUITE_P(Probes, BypassTest, ::testing::Values(PROBE_DYNAMIC, PROBE_STATIC),
                         ProbeKindName);

// `cordon policy explain` says whether refusals may be asked about.
TEST(BypassExplain, SaysWhetherABypassMayBeAsked) {
  ScratchTree t;
  const std::string p = t.root() + "/policy.json";
  WriteFile(p, kWriteBypass);
  RunResult r = RunCordon({"policy", "explain", p}, t.ws());
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out,
              HasSubstr("per operation: a write-open, delete, rmdir or mkdir the policy refuses"));
  EXPECT_THAT(r.out,
              HasSubstr("a rename, a link or a metadata change (mode, owner, times, xattr)"));
  WriteFile(p, kWrite);
  r = RunCordon({"policy", "explain", p}, t.ws());
  EXPECT_THAT(r.out, HasSubstr("none: no refusal is ever offered to the approver"));
}

// Bad answers through the real policyd: another request id, another
// digest, a timeout. Each changes nothing and the run says why.
class BypassSocketTest : public ::testing::Test {
 protected:
  void SetUp() override {
    WriteFile(t_.Ws(".gitmodules"), kModules);
    sock_ = t_.root() + "/policyd.sock";
    log_ = t_.root() + "/audit.jsonl";
    policy_ = t_.root() + "/policy.json";
    WriteFile(policy_, kWriteBypass);
    daemon_ = std::make_unique<PolicyDaemon>(sock_);
    ASSERT_TRUE(daemon_->up()) << "policyd did not come up";
  }
  std::future<RunResult> Start(const std::string& timeout = "30") {
    std::vector<std::string> a = {
        "run",   "--workspace", t_.ws(),           "--ro",    ProbeDir(),   "--policy",
        policy_, "--approvals", "socket:" + sock_, "--audit", log_,         "--approval-timeout",
        timeout, "--",          PROBE_DYNAMIC,     "append",  ".gitmodules"};
    return std::async(std::launch::async, [a] { return RunCordon(a); });
  }
  nlohmann::json WaitForRequest() {
    for (int i = 0; i < 1000; ++i) {
      auto l = JsonLines(RunCordon({"approve", "--socket", sock_, "--list"}).out);
      if (!l.empty()) return l[0];
      std::this_thread::sleep_for(10ms);
    }
    ADD_FAILURE() << "no request arrived";
    return nlohmann::json::object();
  }
  int Answer(uint64_t id, const std::string& digest) {
    return RunCordon(
               {"approve", "--socket", sock_, "--allow", std::to_string(id), "--digest", digest})
        .status;
  }
  std::string Outcome() {
    for (auto& r : JsonLines(ReadFile(log_))) {
      if (r["kind"] == "approval" && r["event"] == "outcome") return r["outcome"];
    }
    return "<none>";
  }

  ScratchTree t_;
  std::string sock_, log_, policy_;
  std::unique_ptr<PolicyDaemon> daemon_;
};

TEST_F(BypassSocketTest, AnAnswerForAnotherIdOrDigestChangesNothing) {
  auto run = Start();
  nlohmann::json req = WaitForRequest();
  EXPECT_EQ(req["preview"]["kind"], "bypass");
  const uint64_t id = req["id"].get<uint64_t>();
  EXPECT_EQ(Answer(id + 1000, req["digest"]), 1) << "not pending: stale";
  EXPECT_EQ(Answer(id, std::string(64, '0')), 1) << "another digest: stale";
  RunResult r = run.get();
  EXPECT_EQ(r.status, EACCES) << r.err;
  EXPECT_THAT(r.err, HasSubstr("bypass stale"));
  EXPECT_EQ(ReadFile(t_.Ws(".gitmodules")), kModules);
  EXPECT_EQ(Outcome(), "stale");
}

TEST_F(BypassSocketTest, ATimeoutChangesNothing) {
  auto run = Start("0.5");
  (void)WaitForRequest();
  RunResult r = run.get();
  EXPECT_EQ(r.status, EACCES) << r.err;
  EXPECT_THAT(r.err, HasSubstr("bypass timeout"));
  EXPECT_EQ(ReadFile(t_.Ws(".gitmodules")), kModules);
  EXPECT_EQ(Outcome(), "timeout");
}

TEST_F(BypassSocketTest, TheRightAnswerRunsIt) {
  auto run = Start();
  nlohmann::json req = WaitForRequest();
  EXPECT_EQ(Answer(req["id"].get<uint64_t>(), req["digest"]), 0);
  RunResult r = run.get();
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(ReadFile(t_.Ws(".gitmodules")), std::string(kModules) + "probe\n");
  EXPECT_EQ(Outcome(), "allowed-once");
}

}  // namespace
}  // namespace cordon::testing
