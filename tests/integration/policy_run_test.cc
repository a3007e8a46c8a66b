// cordon run --policy / --receipt / --no-sandbox and cordon policy
// check|explain, end to end: the real binary, the real kernel, the probe
// (exit status = errno). Ground truth is checked on disk from outside.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cerrno>

#include <nlohmann/json.hpp>

#include "policy/digest.h"
#include "tests/support/test_env.h"

namespace cordon::testing {
namespace {

using ::testing::HasSubstr;

class PolicyRunTest : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    WriteFile(t_.Ws("inside.txt"), "inside\n");
    policy_ = t_.root() + "/policy.json";
  }
  // cordon run ARGS... -- probe OP...; returns the status.
  int Run(std::vector<std::string> args, std::vector<std::string> op) {
    std::vector<std::string> a = {"run", "--workspace", t_.ws(), "--ro", ProbeDir()};
    a.insert(a.end(), args.begin(), args.end());
    a.push_back("--");
    a.push_back(GetParam());
    a.insert(a.end(), op.begin(), op.end());
    last_ = RunCordon(a);
    return last_.status;
  }
  void Policy(const std::string& json) { WriteFile(policy_, json); }
  void Mkdirs(std::initializer_list<const char*> dirs) {
    for (const char* d : dirs) ASSERT_EQ(::mkdir(t_.Ws(d).c_str(), 0755), 0) << d;
  }
  ScratchTree t_;
  std::string policy_;
  RunResult last_;
};

constexpr const char* kV1 = R"({"security":{"assistantPermissions":{"profile":"workspace-managed/v1"}}})";

TEST_P(PolicyRunTest, ProfileVersionDecidesWorkspaceWrite) {
  Policy(R"({"security":{"assistantPermissions":{"profile":"workspace-managed/v2"}}})");
  EXPECT_EQ(Run({"--policy", policy_}, {"create", "new.txt"}), EACCES) << last_.err;
  EXPECT_FALSE(Exists(t_.Ws("new.txt"))) << "unknown version keeps the read-only policy";
  Policy(kV1);
  EXPECT_EQ(Run({"--policy", policy_}, {"create", "new.txt"}), 0) << last_.err;
  EXPECT_TRUE(Exists(t_.Ws("new.txt")));
  // --profile overrides the file for this run only.
  EXPECT_EQ(Run({"--policy", policy_, "--profile", "read-only"}, {"create", "other.txt"}), EACCES);
  EXPECT_FALSE(Exists(t_.Ws("other.txt")));
}

TEST_P(PolicyRunTest, ReceiptMismatchRefusesToRun) {
  Policy(kV1);
  std::string receipt = t_.root() + "/receipt.json";
  WriteFile(receipt, R"({"policy_sha256": ")" + policy::Sha256Hex("something else") + "\"}");
  EXPECT_EQ(Run({"--policy", policy_, "--receipt", receipt}, {"create", "new.txt"}), 125);
  EXPECT_THAT(last_.err, HasSubstr("does not match"));
  EXPECT_FALSE(Exists(t_.Ws("new.txt"))) << "the tool must not have run";
  WriteFile(receipt, "not json");
  EXPECT_EQ(Run({"--policy", policy_, "--receipt", receipt}, {"create", "new.txt"}), 125);
  EXPECT_EQ(Run({"--policy", policy_, "--receipt", t_.root() + "/absent"}, {"create", "new.txt"}),
            125);
  EXPECT_FALSE(Exists(t_.Ws("new.txt")));
  // The honest case: the receipt names the file's digest.
  WriteFile(receipt, R"({"policy_sha256": ")" + policy::Sha256Hex(kV1) + "\"}");
  EXPECT_EQ(Run({"--policy", policy_, "--receipt", receipt}, {"create", "new.txt"}), 0) << last_.err;
  EXPECT_TRUE(Exists(t_.Ws("new.txt")));
}

TEST_P(PolicyRunTest, BadPolicyGrantsNothing) {
  Policy(R"({"security":{"assistantPermissions":{"profile":"workspace-managed/v1"}},"typo":1})");
  EXPECT_EQ(Run({"--policy", policy_}, {"create", "new.txt"}), 125);
  EXPECT_THAT(last_.err, HasSubstr("/typo: unknown key"));
  EXPECT_FALSE(Exists(t_.Ws("new.txt")));
}

TEST_P(PolicyRunTest, NoSandboxNeedsAllowBypass) {
  Policy(kV1);
  EXPECT_EQ(Run({"--policy", policy_, "--no-sandbox"}, {"create", t_.Out("escaped")}), 125);
  EXPECT_THAT(last_.err, HasSubstr("allowBypass"));
  EXPECT_EQ(Run({"--no-sandbox"}, {"create", t_.Out("escaped")}), 125) << "no policy, no bypass";
  EXPECT_FALSE(Exists(t_.Out("escaped")));
  // With allowBypass the run is unconfined, and says so.
  Policy(R"({"sandbox":{"allowBypass":true}})");
  EXPECT_EQ(Run({"--policy", policy_, "--no-sandbox"}, {"create", t_.Out("escaped")}), 0)
      << last_.err;
  EXPECT_THAT(last_.err, HasSubstr("SANDBOX BYPASSED"));
  EXPECT_TRUE(Exists(t_.Out("escaped")));
  // Without the flag the same policy confines.
  EXPECT_EQ(Run({"--policy", policy_}, {"create", t_.Out("escaped2")}), EACCES);
  EXPECT_FALSE(Exists(t_.Out("escaped2")));
}

TEST_P(PolicyRunTest, ABypassedRunIsInTheAuditLogBeforeTheToolStarts) {
  Policy(R"({"sandbox":{"allowBypass":true}})");
  std::string log = t_.Out("audit.jsonl");
  ASSERT_EQ(Run({"--policy", policy_, "--no-sandbox", "--audit", log},
                {"create", t_.Out("escaped")}),
            0)
      << last_.err;
  std::string text = ReadFile(log);
  EXPECT_THAT(text, HasSubstr(R"("kind":"header")"));
  EXPECT_THAT(text, HasSubstr(R"("rung":"bypassed")"));
  EXPECT_THAT(text, HasSubstr(R"("kind":"bypass")"));
  EXPECT_THAT(text, HasSubstr(GetParam()));
  EXPECT_EQ(RunCordon({"audit", "verify", log}).status, 0);
  // A log that cannot be written stops the bypass: nothing runs unrecorded.
  std::string bad = t_.Out("no-such-dir/audit.jsonl");
  EXPECT_EQ(Run({"--policy", policy_, "--no-sandbox", "--audit", bad},
                {"create", t_.Out("escaped2")}),
            125);
  EXPECT_FALSE(Exists(t_.Out("escaped2")));
}

TEST_P(PolicyRunTest, SandboxFlagOverridesADisabledPolicy) {
  Policy(R"({"sandbox":{"enabled":false,"allowBypass":true}})");
  EXPECT_EQ(Run({"--policy", policy_, "--sandbox"}, {"create", t_.Out("escaped")}), EACCES);
  EXPECT_FALSE(Exists(t_.Out("escaped")));
}

TEST_P(PolicyRunTest, DenyInsideAnAllowedDirectory) {
  ASSERT_EQ(::mkdir(t_.Out("data").c_str(), 0755), 0);
  ASSERT_EQ(::mkdir(t_.Out("data/keys").c_str(), 0755), 0);
  WriteFile(t_.Out("data/keys/id"), "secret\n");
  WriteFile(t_.Out("data/ok.txt"), "ok\n");
  Policy(R"({"sandbox":{"filesystem":{"readwritePaths":[")" + t_.Out("data") +
         R"("],"deniedPaths":[")" + t_.Out("data/keys") + R"("]}}})");
  EXPECT_EQ(Run({"--policy", policy_}, {"read", t_.Out("data/keys/id")}), EACCES);
  EXPECT_EQ(Run({"--policy", policy_}, {"write", t_.Out("data/keys/id")}), EACCES);
  EXPECT_EQ(ReadFile(t_.Out("data/keys/id")), "secret\n");
  EXPECT_EQ(Run({"--policy", policy_}, {"write", t_.Out("data/ok.txt")}), 0) << last_.err;
  EXPECT_EQ(ReadFile(t_.Out("data/ok.txt")), "probe\n");
}

TEST_P(PolicyRunTest, ProtectedPathsStayReadOnlyUnderWorkspaceWrite) {
  Mkdirs({".git", ".git/hooks", ".git/objects", "src", "sub", "sub/.git", "sub/.git/hooks",
          ".git/modules", ".git/modules/lib", ".git/modules/lib/zlib",
          ".git/modules/lib/zlib/hooks", ".git/modules/lib/zlib/objects"});
  WriteFile(t_.Ws(".git/config"), "[core]\n");
  WriteFile(t_.Ws(".git/modules/lib/zlib/config"), "[core]\n");
  WriteFile(t_.Ws("sub/.git/config"), "[core]\n");
  WriteFile(t_.Ws("README"), "r\n");
  std::vector<std::string> ww = {"--profile", "workspace-write"};
  EXPECT_EQ(Run(ww, {"write", ".git/config"}), EACCES);
  EXPECT_EQ(Run(ww, {"create", ".git/hooks/pre-commit"}), EACCES);
  EXPECT_EQ(Run(ww, {"write", "sub/.git/config"}), EACCES) << "a nested repository";
  EXPECT_EQ(Run(ww, {"create", "sub/.git/hooks/pre-commit"}), EACCES);
  EXPECT_EQ(Run(ww, {"create", ".git/commondir"}), EACCES) << "would point git at a tool's config";
  EXPECT_EQ(Run(ww, {"create", ".git/modules/lib/zlib/hooks/post-checkout"}), EACCES)
      << "a submodule's hooks run when git runs there";
  EXPECT_EQ(Run(ww, {"write", ".git/modules/lib/zlib/config"}), EACCES);
  EXPECT_EQ(ReadFile(t_.Ws(".git/modules/lib/zlib/config")), "[core]\n");
  EXPECT_FALSE(Exists(t_.Ws(".git/modules/lib/zlib/hooks/post-checkout")));
  EXPECT_EQ(Run(ww, {"create", ".git/modules/lib/zlib/objects/ab"}), 0) << last_.err;
  EXPECT_EQ(Run(ww, {"unlink", ".git/config"}), EACCES);
  EXPECT_EQ(Run(ww, {"rename", "README", ".git/config"}), EACCES);
  EXPECT_EQ(ReadFile(t_.Ws(".git/config")), "[core]\n");
  EXPECT_EQ(ReadFile(t_.Ws("sub/.git/config")), "[core]\n");
  EXPECT_FALSE(Exists(t_.Ws(".git/hooks/pre-commit")));
  EXPECT_FALSE(Exists(t_.Ws("sub/.git/hooks/pre-commit")));
  EXPECT_FALSE(Exists(t_.Ws(".git/commondir")));
  // The honest neighbours: git's objects and ordinary files.
  EXPECT_EQ(Run(ww, {"read", ".git/config"}), 0);
  EXPECT_EQ(Run(ww, {"create", ".git/objects/ab"}), 0) << last_.err;
  EXPECT_EQ(Run(ww, {"write", "README"}), 0);
  EXPECT_EQ(Run(ww, {"create", "src/main.c"}), 0);
  EXPECT_TRUE(Exists(t_.Ws(".git/objects/ab")));
  EXPECT_EQ(ReadFile(t_.Ws("README")), "probe\n");
  // The list is a policy setting: "-.git/config" lifts that one protection.
  Policy(R"({"security":{"assistantPermissions":{"profile":"workspace-managed/v1"}},
             "protectedPaths":["-.git/config"]})");
  EXPECT_EQ(Run({"--policy", policy_}, {"write", ".git/config"}), 0) << last_.err;
  EXPECT_EQ(Run({"--policy", policy_}, {"create", ".git/hooks/pre-commit"}), EACCES);
}

// A workspace past the launch scan's bound (limits.treeDepth here) is
// refused whole, whatever links and sensitive.delete relax: the scan must
// see every hard-linked and special file (and with it every protected path
// the relaxed groups would carve), so no part of the tree runs unlooked at.
TEST_P(PolicyRunTest, AWorkspacePastTheScanBoundIsRefusedWhole) {
  Mkdirs({"a", "a/b", "a/b/c", "a/b/c/.git"});
  const std::string cfg = "a/b/c/.git/config";
  WriteFile(t_.Ws(cfg), "[core]\n");
  WriteFile(t_.Ws("a/b/c/notes.txt"), "n\n");
  const std::string kRelaxed[] = {
      R"({"links":"kernel","limits":{"treeDepth":2}})",
      R"({"sensitive":{"delete":"allow"},"limits":{"treeDepth":2}})",
      R"({"links":"kernel","sensitive":{"delete":"allow"},"limits":{"treeDepth":2}})"};
  const std::vector<std::string> a = {"--policy", policy_, "--profile", "workspace-write"};
  for (const std::string& json : kRelaxed) {
    SCOPED_TRACE(json);
    Policy(json);
    EXPECT_EQ(Run(a, {"write", cfg}), 125) << last_.err;
    EXPECT_THAT(last_.err, HasSubstr("deeper than 2 levels"));
    EXPECT_EQ(Run(a, {"write", "a/b/c/notes.txt"}), 125);
    EXPECT_EQ(ReadFile(t_.Ws(cfg)), "[core]\n");
    EXPECT_EQ(ReadFile(t_.Ws("a/b/c/notes.txt")), "n\n");
  }
  // The honest neighbour: within the bound the run goes ahead, the protected
  // file still refused and the file beside it written.
  Policy(R"({"links":"kernel","sensitive":{"delete":"allow"},"limits":{"treeDepth":5}})");
  EXPECT_EQ(Run(a, {"write", cfg}), EACCES) << last_.err;
  EXPECT_EQ(Run(a, {"write", "a/b/c/notes.txt"}), 0) << last_.err;
  EXPECT_EQ(ReadFile(t_.Ws(cfg)), "[core]\n");
  EXPECT_EQ(ReadFile(t_.Ws("a/b/c/notes.txt")), "probe\n");
}

// A second name for a protected file is not protected: a later writer that
// trusts names (a links: kernel run, an editor) would change it through that
// name. Linking from a protected path is refused; honest links still work.
TEST_P(PolicyRunTest, NoHardLinkAliasesAProtectedPath) {
  Mkdirs({".git", ".git/hooks"});
  WriteFile(t_.Ws(".git/config"), "[core]\n");
  WriteFile(t_.Ws(".git/hooks/pre-commit"), "#!/bin/sh\n");
  WriteFile(t_.Ws(".envrc"), "export A=1\n");
  std::vector<std::string> ww = {"--profile", "workspace-write"};
  for (const char* op : {"link", "linkat"}) {
    SCOPED_TRACE(op);
    EXPECT_EQ(Run(ww, {op, ".git/config", "cfg"}), EACCES) << last_.err;
    EXPECT_EQ(Run(ww, {op, ".git/hooks/pre-commit", "hook"}), EACCES);
    EXPECT_EQ(Run(ww, {op, ".envrc", "envrc"}), EACCES);
    EXPECT_FALSE(Exists(t_.Ws("cfg")) || Exists(t_.Ws("hook")) || Exists(t_.Ws("envrc")));
  }
  struct stat st;
  ASSERT_EQ(::stat(t_.Ws(".git/config").c_str(), &st), 0);
  EXPECT_EQ(st.st_nlink, 1u);
  // The honest neighbour: a link of an ordinary file in the workspace. A
  // later run refuses the file with two names by default (issue 27 item 8);
  // hardLinks: inside-workspace keeps it, as every name is in the workspace.
  EXPECT_EQ(Run(ww, {"link", "inside.txt", "inside2.txt"}), 0) << last_.err;
  EXPECT_EQ(Run(ww, {"linkat", "inside.txt", "inside3.txt"}), EACCES) << last_.err;
  Policy(R"({"hardLinks":"inside-workspace"})");
  EXPECT_EQ(Run({"--policy", policy_, "--profile", "workspace-write"},
                {"linkat", "inside.txt", "inside3.txt"}),
            0)
      << last_.err;
  EXPECT_EQ(ReadFile(t_.Ws("inside3.txt")), "inside\n");
  ASSERT_EQ(::stat(t_.Ws("inside.txt").c_str(), &st), 0);
  EXPECT_EQ(st.st_nlink, 3u);
}

// Renaming a directory renames what lies beneath it, so one that could
// hold a protected path (with "ci/deploy.sh" protected: ci, or sub/ci) is
// refused with EXDEV: tools then copy, and each file is decided by name.
TEST_P(PolicyRunTest, ADirectoryRenameCannotMoveProtectedNames) {
  Mkdirs({"ci", "stage", "sub"});
  WriteFile(t_.Ws("ci/deploy.sh"), "ok\n");
  WriteFile(t_.Ws("stage/deploy.sh"), "evil\n");
  Policy(R"({"security":{"assistantPermissions":{"profile":"workspace-managed/v1"}},
             "protectedPaths":["+ci/deploy.sh"]})");
  const std::vector<std::string> a = {"--policy", policy_};
  EXPECT_EQ(Run(a, {"rename", "ci", "ci2"}), EXDEV) << "ci2/deploy.sh would be writable";
  EXPECT_EQ(Run(a, {"rename", "stage", "sub/ci"}), EXDEV) << "the tool's file, protected";
  EXPECT_EQ(ReadFile(t_.Ws("ci/deploy.sh")), "ok\n");
  EXPECT_FALSE(Exists(t_.Ws("ci2")) || Exists(t_.Ws("sub/ci")));
  // The honest neighbours: other directory renames, files beside it.
  EXPECT_EQ(Run(a, {"rename", "stage", "sub/stage"}), 0) << last_.err;
  EXPECT_EQ(Run(a, {"write", "ci/notes.txt"}), 0) << last_.err;
  EXPECT_EQ(ReadFile(t_.Ws("sub/stage/deploy.sh")), "evil\n");
}

// A repository the run creates may write its config (git's way: a lock
// file renamed over it, its content checked), never its hooks:
// not by moving its .git away, writing x/hooks/..., and moving it back,
// nor in the git directories of its submodules.
TEST(ProtectedRename, ANewRepositorysHooksStayProtected) {
  struct Case {
    const char* script;
    const char* hook;
    const char* config;
  } cases[] = {
      {"mkdir -p sub/.git/hooks && printf '[user]\\n' > sub/.git/config.lock && "
       "mv sub/.git/config.lock sub/.git/config && "
       "mv sub/.git sub/x; echo evil > sub/x/hooks/pre-commit; mv sub/x sub/.git; exit 0",
       // mv of a .git is EXDEV, so mv copies: the config reached sub/x, and
       // its copy back is refused (a new config is written by rename only).
       "sub/.git/hooks/pre-commit", "sub/x/config"},
      {"mkdir -p .git/modules/lib/zlib/hooks && printf '[user]\\n' > .git/modules/lib/zlib/c.lock && "
       "mv .git/modules/lib/zlib/c.lock .git/modules/lib/zlib/config && "
       "echo evil > .git/modules/lib/zlib/hooks/post-checkout; exit 0",
       ".git/modules/lib/zlib/hooks/post-checkout", ".git/modules/lib/zlib/config"},
  };
  for (const Case& c : cases) {
    ScratchTree t;
    RunResult r = RunCordon({"run", "--workspace", t.ws(), "--profile", "workspace-write", "--",
                             "/bin/sh", "-c", c.script});
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_FALSE(Exists(t.Ws(c.hook))) << c.hook << r.err;
    EXPECT_EQ(ReadFile(t.Ws(c.config)), "[user]\n") << "the new repository's own config";
  }
}

// On the notify-all rung every open is the supervisor's, O_PATH ones too:
// ADDFD cannot install an O_PATH file and openat2 takes no other flag with
// O_PATH, so they must be handed over another way, not fail or hang (the
// probe ends itself with SIGALRM, status 142). The read fence still holds.
TEST_P(PolicyRunTest, OPathOpensWorkOnTheNotifyAllRung) {
  WriteFile(t_.Out("granted"), "g\n");
  WriteFile(t_.Out("secret"), "s\n");
  const std::vector<std::string> all = {"--test-force-notify-all", "--ro", t_.Out("granted")};
  EXPECT_EQ(Run(all, {"opath", t_.Out("granted")}), 0) << last_.err;
  EXPECT_EQ(Run(all, {"opath", "inside.txt"}), 0) << last_.err;
  EXPECT_EQ(Run(all, {"opath", "."}), 0) << last_.err;
  EXPECT_EQ(Run(all, {"opath", t_.Out("secret")}), EACCES);
}

// Every open the supervisor answers must be answered, whatever the fd:
// one the tool has no room for gets EMFILE, as from the kernel, on either
// rung, and a file the supervisor created for it is gone again (the kernel
// takes the fd before it creates anything). The probe ends itself with
// SIGALRM (status 142) instead of hanging.
TEST_P(PolicyRunTest, FailedInstallsAreAnsweredAndUndone) {
  std::vector<std::string> ww = {"--profile", "workspace-write"};
  for (bool notify_all : {false, true}) {
    if (notify_all) ww.push_back("--test-force-notify-all");
    EXPECT_EQ(Run(ww, {"emfile-write", "inside.txt"}), EMFILE) << last_.err;
    EXPECT_EQ(Run(ww, {"emfile-write", "new.txt", "create"}), EMFILE) << last_.err;
    EXPECT_FALSE(Exists(t_.Ws("new.txt"))) << "notify-all " << notify_all;
    // An O_TRUNC that cannot hand its fd over truncates nothing.
    EXPECT_EQ(Run(ww, {"emfile-write", "inside.txt", "trunc"}), EMFILE) << last_.err;
    EXPECT_EQ(ReadFile(t_.Ws("inside.txt")), "inside\n") << "notify-all " << notify_all;
  }
  // The honest neighbour: with room for the fd, O_TRUNC truncates.
  WriteFile(t_.Ws("long.txt"), "longer than the new text\n");
  EXPECT_EQ(Run(ww, {"trunc", "long.txt"}), 0) << last_.err;
  EXPECT_EQ(ReadFile(t_.Ws("long.txt")), "probe\n");
}

// Approvals off (and links: kernel) leave deletes and renames to Landlock.
// Without Landlock (the notify-all rung) the supervisor must still decide
// them: nothing else would keep them inside the workspace.
TEST_P(PolicyRunTest, RelaxedPoliciesStillFenceDeletesAndRenamesWithoutLandlock) {
  WriteFile(t_.Out("victim"), "precious\n");
  ASSERT_EQ(::mkdir(t_.Out("dir").c_str(), 0755), 0);
  WriteFile(t_.Ws("old.txt"), "old\n");
  WriteFile(t_.Ws("old2.txt"), "old\n");
  const std::string kRelaxed[] = {R"({"sensitive":{"delete":"allow"}})",
                                  R"({"sensitive":{"delete":"allow"},"links":"kernel"})"};
  const std::vector<std::string> a = {"--policy", policy_, "--profile", "workspace-write",
                                      "--test-force-notify-all"};
  for (const std::string& json : kRelaxed) {
    SCOPED_TRACE(json);
    Policy(json);
    EXPECT_EQ(Run(a, {"unlink", t_.Out("victim")}), EACCES) << last_.err;
    EXPECT_EQ(Run(a, {"rename", t_.Out("victim"), t_.Out("moved")}), EACCES);
    EXPECT_EQ(Run(a, {"rename", t_.Out("victim"), "stolen"}), EACCES);
    EXPECT_EQ(Run(a, {"exchange", t_.Out("victim"), "inside.txt"}), EACCES);
    EXPECT_EQ(Run(a, {"rmdir", t_.Out("dir")}), EACCES);
    EXPECT_EQ(ReadFile(t_.Out("victim")), "precious\n");
    EXPECT_TRUE(Exists(t_.Out("dir")));
    EXPECT_FALSE(Exists(t_.Out("moved")) || Exists(t_.Ws("stolen")));
    EXPECT_EQ(ReadFile(t_.Ws("inside.txt")), "inside\n");
  }
  // The honest neighbours: a file of the user's is deleted and renamed
  // inside without an approval.
  EXPECT_EQ(Run(a, {"unlink", "old.txt"}), 0) << last_.err;
  EXPECT_EQ(Run(a, {"rename", "old2.txt", "new2.txt"}), 0) << last_.err;
  EXPECT_FALSE(Exists(t_.Ws("old.txt")));
  EXPECT_EQ(ReadFile(t_.Ws("new2.txt")), "old\n");
}

// With approvals off a rename needs no approval, but it still makes a name:
// under links: strict it is decided like a create, so it cannot make a
// protected path that an open could not.
TEST_P(PolicyRunTest, ARenameCannotMakeAProtectedPathWithApprovalsOff) {
  Mkdirs({"sub"});
  WriteFile(t_.Ws("x"), "export EVIL=1\n");
  WriteFile(t_.Ws("y"), "y\n");
  // The user's .gitmodules (where there is none, git submodule add makes
  // one: SubmoduleTest.SubmoduleAddMakesANewGitmodules).
  WriteFile(t_.Ws("sub/.gitmodules"), "[submodule \"s\"]\n");
  Policy(R"({"sensitive":{"delete":"allow"}})");
  std::vector<std::string> a = {"--policy", policy_, "--profile", "workspace-write"};
  EXPECT_EQ(Run(a, {"rename", "x", ".envrc"}), EACCES) << last_.err;
  EXPECT_EQ(Run(a, {"rename", "x", "sub/.envrc"}), EACCES);
  EXPECT_EQ(Run(a, {"rename", "x", "sub/.gitmodules"}), EACCES);
  EXPECT_EQ(Run(a, {"create", "sub/.gitmodules"}), EACCES);
  EXPECT_FALSE(Exists(t_.Ws(".envrc")) || Exists(t_.Ws("sub/.envrc")));
  EXPECT_EQ(ReadFile(t_.Ws("sub/.gitmodules")), "[submodule \"s\"]\n");
  // The honest rename, and a delete with no approval asked.
  EXPECT_EQ(Run(a, {"rename", "x", "sub/envrc.txt"}), 0) << last_.err;
  EXPECT_EQ(Run(a, {"unlink", "y"}), 0) << last_.err;
  EXPECT_EQ(ReadFile(t_.Ws("sub/envrc.txt")), "export EVIL=1\n");
  EXPECT_FALSE(Exists(t_.Ws("y")));
}

// A submodule's git directory moved away, its hooks written under another
// name, moved back: refused at the first and the last step. git's own
// renames of files there go on.
TEST_P(PolicyRunTest, ASubmodulesGitDirectoryCannotBeMovedAwayAndBack) {
  Mkdirs({".git", ".git/modules", ".git/modules/sub", ".git/modules/sub/hooks", "staged",
          "staged/hooks"});
  WriteFile(t_.Ws(".git/modules/sub/config"), "[core]\n");
  WriteFile(t_.Ws(".git/modules/sub/index.lock"), "index\n");
  std::vector<std::string> ww = {"--profile", "workspace-write"};
  EXPECT_EQ(Run(ww, {"rename", ".git/modules/sub", "away"}), EXDEV) << last_.err;
  EXPECT_EQ(Run(ww, {"rename", "staged", ".git/modules/other"}), EXDEV) << last_.err;
  EXPECT_TRUE(Exists(t_.Ws(".git/modules/sub/config")));
  EXPECT_FALSE(Exists(t_.Ws("away")) || Exists(t_.Ws(".git/modules/other")));
  EXPECT_EQ(Run(ww, {"rename", ".git/modules/sub/index.lock", ".git/modules/sub/index"}), 0)
      << last_.err;
  EXPECT_EQ(ReadFile(t_.Ws(".git/modules/sub/index")), "index\n");
}

// Under links: kernel Landlock alone keeps a submodule's config: the scan
// carves what a "**" pattern starts with (.git/modules) whole.
TEST_P(PolicyRunTest, ASubmodulesGitDirectoryStaysReadOnlyUnderLinksKernel) {
  Mkdirs({".git", ".git/modules", ".git/modules/lib", ".git/modules/lib/zlib", "src"});
  WriteFile(t_.Ws(".git/modules/lib/zlib/config"), "[core]\n");
  Policy(R"({"links":"kernel"})");
  std::vector<std::string> a = {"--policy", policy_, "--profile", "workspace-write"};
  EXPECT_EQ(Run(a, {"write", ".git/modules/lib/zlib/config"}), EACCES) << last_.err;
  EXPECT_EQ(ReadFile(t_.Ws(".git/modules/lib/zlib/config")), "[core]\n");
  EXPECT_EQ(Run(a, {"create", "src/main.c"}), 0) << last_.err;
}

INSTANTIATE_TEST_SUITE_P(Probes, PolicyRunTest, ::testing::Values(PROBE_DYNAMIC, PROBE_STATIC),
                         [](const auto& info) { return info.index == 0 ? "dynamic" : "static"; });

TEST(PolicyCommand, CheckListsEveryErrorAndExits125) {
  ScratchTree t;
  std::string f = t.root() + "/p.json";
  WriteFile(f, R"({"sandbox":{"enabeld":true,"filesystem":{"readonlyPaths":["rel","/a/../b"]}}})");
  RunResult r = RunCordon({"policy", "check", f});
  EXPECT_EQ(r.status, 125);
  EXPECT_THAT(r.err, HasSubstr("/sandbox/enabeld: unknown key"));
  EXPECT_THAT(r.err, HasSubstr("/sandbox/filesystem/readonlyPaths/0: 'rel' must be an absolute"));
  EXPECT_THAT(r.err, HasSubstr("/sandbox/filesystem/readonlyPaths/1: '/a/../b'"));
  WriteFile(f, "{\n  \"links\": strict\n}\n");
  r = RunCordon({"policy", "check", f});
  EXPECT_EQ(r.status, 125);
  EXPECT_THAT(r.err, HasSubstr(f + ":2:"));
  WriteFile(f, kV1);
  r = RunCordon({"policy", "check", f});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(RunCordon({"policy", "check", t.root() + "/absent.json"}).status, 125);
}

TEST(PolicyCommand, ExplainListsDroppedPathsAndWhy) {
  ScratchTree t;
  std::string f = t.root() + "/p.json";
  WriteFile(f, R"({"security":{"assistantPermissions":{"profile":"workspace-managed/v7"}},
                   "sandbox":{"filesystem":{"readonlyPaths":[")" + t.outside() + R"(",")" +
                   t.Out("nope") + R"("]}}})");
  RunResult r = RunCordon({"policy", "explain", f, "--workspace", t.ws()});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("read-only"));
  EXPECT_THAT(r.out, HasSubstr("unknown profile version \"workspace-managed/v7\""));
  EXPECT_THAT(r.out, HasSubstr("Dropped"));
  EXPECT_THAT(r.out, HasSubstr(t.Out("nope") + ": No such file or directory"));
  r = RunCordon({"policy", "explain", f, "--workspace", t.ws(), "--json"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("\"dropped\""));
  EXPECT_THAT(r.out, HasSubstr("\"profile\": \"read-only\""));
}

// A grant of / is enforced without /dev (policy/kernel_interfaces.h), and
// explain shows that carve-out beside the policy's own paths; a device
// node asked for is an error, as in a run.
TEST(PolicyCommand, ExplainShowsDevCarvedOutOfTheRoot) {
  ScratchTree t;
  std::string f = t.root() + "/p.json";
  WriteFile(f, R"({"sandbox":{"filesystem":{"readonlyPaths":["/"]}}})");
  RunResult r = RunCordon({"policy", "explain", f, "--workspace", t.ws()});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("denied      /dev\n              (device nodes, carved out of a "
                               "grant of their parent)"));
  r = RunCordon({"policy", "explain", f, "--workspace", t.ws(), "--json"});
  EXPECT_THAT(r.out,
              HasSubstr("\"source\": \"device nodes, carved out of a grant of their parent\""));
  WriteFile(f, R"({"sandbox":{"filesystem":{"readonlyPaths":["/opt"]}}})");
  r = RunCordon({"policy", "explain", f, "--workspace", t.ws()});
  EXPECT_THAT(r.out, Not(HasSubstr("carved out")));
  WriteFile(f, R"({"sandbox":{"filesystem":{"readwritePaths":["/dev/shm", "/dev"]}}})");
  r = RunCordon({"policy", "explain", f, "--workspace", t.ws()});
  EXPECT_EQ(r.status, 125);
  EXPECT_THAT(r.err, HasSubstr("/dev: the machine's device nodes")) << r.err;
  EXPECT_THAT(r.err, Not(HasSubstr("/dev/shm:"))) << r.err;
}

// Paths need not be UTF-8 and JSON text must be: the one policy writer
// (policy/policy_json.h) spells such a path "hex:" + its bytes, in explain
// as in the digest and the audit log, instead of aborting on it.
TEST(PolicyCommand, ExplainJsonSpellsANonUtf8PathInHex) {
  ScratchTree t;
  const std::string ws = t.root() + "/ws\xff";
  ASSERT_EQ(::mkdir(ws.c_str(), 0755), 0);
  const std::string f = t.root() + "/p.json";
  WriteFile(f, "{}");
  RunResult r = RunCordon({"policy", "explain", f, "--workspace", ws, "--json", "--path", ws + "/a"});
  ASSERT_EQ(r.status, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  const std::string hex = "hex:" + [&] {
    std::string h;
    for (unsigned char c : ws) h += "0123456789abcdef"[c >> 4], h += "0123456789abcdef"[c & 15];
    return h;
  }();
  EXPECT_EQ(j["workspace"], hex);
  EXPECT_EQ(j["decisions"][0]["rule"], hex);
  EXPECT_EQ(j["decisions"][0]["access"], "read-only");
}

// A relative --path is the tool's, in the workspace (its cwd): what
// `cordon run -- ./build/app` would meet, not "outside".
TEST(PolicyCommand, ExplainTakesARelativePathInTheWorkspace) {
  ScratchTree t;
  const std::string f = t.root() + "/p.json";
  WriteFile(f, "{}");
  RunResult r = RunCordon({"policy", "explain", f, "--workspace", t.ws(), "--profile",
                           "workspace-write", "--json", "--path", "build/app", "--path", "../x"},
                          t.root());
  ASSERT_EQ(r.status, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["decisions"][0]["canonical"], t.Ws("build/app"));
  EXPECT_EQ(j["decisions"][0]["access"], "read-write");
  // A '..' out of the workspace is judged where it leads (here: outside).
  EXPECT_EQ(j["decisions"][1]["access"], "outside") << j["decisions"][1].dump();
}

// explain names what goes to the supervisor under each relaxation, from
// the same mapping a run uses, and says what links: kernel gives up.
TEST(PolicyCommand, ExplainSaysWhatEachRelaxationLeavesToTheKernel) {
  ScratchTree t;
  std::string f = t.root() + "/p.json";
  std::string out;  // the last explain's whole text
  auto decided_by = [&](const std::string& json) {
    WriteFile(f, json);
    RunResult r =
        RunCordon({"policy", "explain", f, "--workspace", t.ws(), "--profile", "workspace-write"});
    EXPECT_EQ(r.status, 0) << r.err;
    out = r.out;
    size_t at = out.find("Decided by");
    return at == std::string::npos ? std::string() : out.substr(at, out.find('\n', at) - at);
  };
  std::string strict = decided_by("{}");
  EXPECT_THAT(strict, HasSubstr(" openat"));
  EXPECT_THAT(strict, HasSubstr(" unlink"));
  EXPECT_THAT(strict, HasSubstr(" rename"));
  EXPECT_THAT(strict, ::testing::Not(HasSubstr("execve"))) << "no exec allowlist";
  std::string no_approvals = decided_by(R"({"sensitive":{"delete":"allow"}})");
  EXPECT_THAT(no_approvals, ::testing::Not(HasSubstr(" unlink")));
  EXPECT_THAT(no_approvals, HasSubstr(" rename")) << "a rename still makes a name";
  std::string fast = decided_by(R"({"sensitive":{"delete":"allow"},"links":"kernel"})");
  EXPECT_THAT(fast, ::testing::Not(HasSubstr(" openat")));
  EXPECT_THAT(fast, ::testing::Not(HasSubstr(" rename")));
  EXPECT_THAT(fast, HasSubstr(" mkdir"));
  EXPECT_THAT(out, HasSubstr("is NOT refused"));
  EXPECT_THAT(out, HasSubstr("Shared mem   none: the kernel takes writes under this policy"));
  decided_by("{}");
  EXPECT_THAT(out, HasSubstr("Shared mem   /dev/shm: files the run makes there, and only those"));
  // The preload's check-in: when exec is followed, and what it never does.
  EXPECT_THAT(out, HasSubstr("Preload      glibc dynamic programs take libcordon_preload.so"));
  EXPECT_THAT(out, HasSubstr("never a grant"));
  EXPECT_THAT(out, HasSubstr("execve and execveat are notified too"));
}

// explain of a workspace past the launch scan's bound says why a run there
// is refused (issue 27 item 8: the scan must see the whole tree).
TEST(PolicyCommand, ExplainSaysAWorkspacePastTheScanBoundIsRefused) {
  ScratchTree t;
  for (const char* d : {"a", "a/b", "a/b/.git"}) ASSERT_EQ(::mkdir(t.Ws(d).c_str(), 0755), 0);
  WriteFile(t.Ws("a/b/.git/config"), "[core]\n");
  std::string f = t.root() + "/p.json";
  WriteFile(f, R"({"sensitive":{"delete":"allow"},"links":"kernel","limits":{"treeDepth":2}})");
  RunResult r =
      RunCordon({"policy", "explain", f, "--workspace", t.ws(), "--profile", "workspace-write"});
  EXPECT_EQ(r.status, 125);
  EXPECT_THAT(r.err, HasSubstr("launch scan of the workspace is incomplete"));
  EXPECT_THAT(r.err, HasSubstr("deeper than 2 levels at 'a/b/.git'"));
}

TEST(PolicyCommand, ExplainOfTheDocsExampleReadsWell) {
  ScratchTree t;
  RunResult r = RunCordon({"policy", "explain", std::string(CORDON_SOURCE_DIR) +
                                                    "/docs/policy.example.json", "--workspace", t.ws()});
  ASSERT_EQ(r.status, 0) << r.err;
  for (const char* s : {"Profile      workspace-write", "workspace-managed/v1", "Network",
                        "Protected paths", ".git/hooks", "Enforced by", "/etc/ssl/private"}) {
    EXPECT_THAT(r.out, HasSubstr(s));
  }
}

}  // namespace
}  // namespace cordon::testing
