// policy::BypassEligible and RefusedByRule, table-driven: one row per
// refusal that may be offered to the approver as a bypass and one per
// refusal that never may. Removing any clause of the rule fails a row.
#include "policy/bypass.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <string>
#include <vector>

namespace cordon::policy {
namespace {

using B = RefusedBy;

BypassFacts F(B by, FileOp op = FileOp::kOpenWrite, bool directory = false) {
  BypassFacts f;
  f.directory = directory;
  f.allow_bypass = true;
  f.can_ask = true;
  f.op = op;
  f.in_workspace = true;
  f.refused_by = by;
  return f;
}

TEST(BypassEligible, PolicyRefusalsInsideTheWorkspaceMayBeAsked) {
  for (B by : {B::kProtectedPath, B::kDenyGlob, B::kDeniedPath, B::kReadOnlyPath}) {
    for (FileOp op : {FileOp::kOpenWrite, FileOp::kDelete}) {
      EXPECT_TRUE(BypassEligible(F(by, op))) << static_cast<int>(by) << " " << static_cast<int>(op);
    }
  }
}

TEST(BypassEligible, NeverWithoutAllowBypassOrAnApprover) {
  BypassFacts f = F(B::kProtectedPath);
  f.allow_bypass = false;
  EXPECT_FALSE(BypassEligible(f)) << "sandbox.allowBypass off";
  f = F(B::kProtectedPath);
  f.can_ask = false;
  EXPECT_FALSE(BypassEligible(f)) << "--approvals deny";
}

TEST(BypassEligible, NeverOutsideTheWorkspaceNorACredential) {
  BypassFacts f = F(B::kDeniedPath);
  f.in_workspace = false;
  EXPECT_FALSE(BypassEligible(f)) << "outside the workspace";
  f = F(B::kDeniedPath);
  f.credential = true;
  EXPECT_FALSE(BypassEligible(f)) << "a credential path, whatever rule covers it";
  f = F(B::kProtectedPath);
  f.dotdot = true;
  EXPECT_FALSE(BypassEligible(f)) << "a path written with ..";
}

TEST(BypassEligible, NeverForOtherRefusals) {
  for (B by : {B::kOther, B::kCredential, B::kOutside}) {
    EXPECT_FALSE(BypassEligible(F(by))) << static_cast<int>(by);
  }
}

// rmdir of a directory (kDelete), mkdir (kCreate of a directory): each
// refusal the policy's own rules make may be asked.
TEST(BypassEligible, RmdirAndMkdirMayBeAsked) {
  for (B by : {B::kProtectedPath, B::kDenyGlob, B::kDeniedPath, B::kReadOnlyPath}) {
    EXPECT_TRUE(BypassEligible(F(by, FileOp::kDelete, true))) << "rmdir " << static_cast<int>(by);
    EXPECT_TRUE(BypassEligible(F(by, FileOp::kCreate, true))) << "mkdir " << static_cast<int>(by);
  }
  BypassFacts f = F(B::kDeniedPath, FileOp::kCreate, true);
  f.credential = true;
  EXPECT_FALSE(BypassEligible(f)) << "a mkdir in a credential path";
  f = F(B::kDeniedPath, FileOp::kDelete, true);
  f.in_workspace = false;
  EXPECT_FALSE(BypassEligible(f)) << "an rmdir outside the workspace";
  f = F(B::kDeniedPath, FileOp::kCreate, true);
  f.dotdot = true;
  EXPECT_FALSE(BypassEligible(f)) << "a mkdir through ..";
  EXPECT_FALSE(BypassEligible(F(B::kOther, FileOp::kCreate, true)));
}

TEST(BypassEligible, OnlyWriteOpensDeletesAndMkdirs) {
  for (FileOp op : {FileOp::kCreate, FileOp::kRename, FileOp::kExchange, FileOp::kLink,
                    FileOp::kMetadata, FileOp::kRead}) {
    EXPECT_FALSE(BypassEligible(F(B::kProtectedPath, op))) << static_cast<int>(op);
  }
  // A create of anything but a directory (a symbolic link, a device), an
  // open of a directory for writing: never.
  EXPECT_FALSE(BypassEligible(F(B::kProtectedPath, FileOp::kCreate, false))) << "symlink, mknod";
  EXPECT_FALSE(BypassEligible(F(B::kProtectedPath, FileOp::kOpenWrite, true)));
}

// A rename of a file: one end refused by a rule that may be asked, the
// other that too or allowed; both inside the workspace, neither a
// credential nor written with "..". One row per clause.
TEST(BypassRenameEligible, OneEndRefusedByARuleThatMayBeAskedTheOtherAllowedOrSo) {
  auto ends = [](B from, bool from_allowed, B to, bool to_allowed) {
    RenameEnds r;
    r.from = F(from, FileOp::kRename);
    r.to = F(to, FileOp::kRename);
    r.from_allowed = from_allowed;
    r.to_allowed = to_allowed;
    return r;
  };
  const B kAllowed = B::kOther;
  struct Row {
    const char* what;
    RenameEnds r;
    bool offered;
  };
  std::vector<Row> rows;
  for (B by : {B::kProtectedPath, B::kDenyGlob, B::kDeniedPath, B::kReadOnlyPath}) {
    rows.push_back({"onto a refused name", ends(kAllowed, true, by, false), true});
    rows.push_back({"a refused name away", ends(by, false, kAllowed, true), true});
    rows.push_back({"refused to refused", ends(by, false, by, false), true});
  }
  rows.push_back({"nothing refused", ends(kAllowed, true, kAllowed, true), false});
  for (B by : {B::kOther, B::kCredential, B::kOutside}) {
    rows.push_back({"onto a name no bypass may touch", ends(kAllowed, true, by, false), false});
    rows.push_back(
        {"from a name no bypass may touch", ends(by, false, B::kProtectedPath, false), false});
  }
  RenameEnds r = ends(kAllowed, true, B::kProtectedPath, false);
  r.from.in_workspace = false;
  rows.push_back({"from outside the workspace", r, false});
  r = ends(kAllowed, true, B::kProtectedPath, false);
  r.from.credential = true;
  rows.push_back({"from a credential path", r, false});
  r = ends(kAllowed, true, B::kProtectedPath, false);
  r.from.dotdot = true;
  rows.push_back({"from a path written with ..", r, false});
  r = ends(B::kProtectedPath, false, kAllowed, true);
  r.to.in_workspace = false;
  rows.push_back({"onto a name outside the workspace", r, false});
  r = ends(B::kProtectedPath, false, kAllowed, true);
  r.to.credential = true;
  rows.push_back({"onto a credential path", r, false});
  r = ends(B::kProtectedPath, false, kAllowed, true);
  r.to.dotdot = true;
  rows.push_back({"onto a path written with ..", r, false});
  r = ends(kAllowed, true, B::kProtectedPath, false);
  r.from.directory = r.to.directory = true;
  rows.push_back({"a directory", r, false});
  r = ends(kAllowed, true, B::kProtectedPath, false);
  r.from.op = r.to.op = FileOp::kExchange;
  rows.push_back({"an exchange", r, false});
  r = ends(kAllowed, true, B::kProtectedPath, false);
  r.from.allow_bypass = r.to.allow_bypass = false;
  rows.push_back({"without allowBypass", r, false});
  r = ends(kAllowed, true, B::kProtectedPath, false);
  r.from.can_ask = r.to.can_ask = false;
  rows.push_back({"without an approver", r, false});
  for (const Row& row : rows) EXPECT_EQ(BypassRenameEligible(row.r), row.offered) << row.what;
}

// Decide names the rule that refused: the policy's own (a protected path,
// a deny glob) apart from an entry refused for what it is.
TEST(BypassEligible, DecideSaysWhichRuleRefused) {
  FileRequest q;
  q.op = FileOp::kOpenWrite;
  q.place.protected_path = true;
  EXPECT_EQ(Decide(q, {}).by, B::kProtectedPath);
  q.place = {};
  q.place.deny_glob = true;
  EXPECT_EQ(Decide(q, {}).by, B::kDenyGlob);
  q.op = FileOp::kDelete;
  EXPECT_EQ(Decide(q, {}).by, B::kDenyGlob);
  q.place = {};
  q.place.protected_path = true;
  EXPECT_EQ(Decide(q, {}).by, B::kProtectedPath);
  // A symbolic link, a hard-linked file: refused for what they are.
  q = {};
  q.op = FileOp::kOpenWrite;
  q.entry.kind = EntryKind::kSymlink;
  EXPECT_EQ(Decide(q, {}).verdict, Verdict::kRefuse);
  EXPECT_EQ(Decide(q, {}).by, B::kOther);
  q.entry.kind = EntryKind::kRegular;
  q.entry.nlink = 2;
  EXPECT_EQ(Decide(q, {}).by, B::kOther);
  q = {};
  q.op = FileOp::kDelete;
  q.place.root = true;
  EXPECT_EQ(Decide(q, {}).by, B::kOther);
}

TEST(RefusedByRule, SaysWhichRuleCoversTheRefusal) {
  std::vector<PathRule> rules = {
      PathRule::ReadWrite("/ws"),
      {"/ws/.git/config", Access::kReadOnly, true, kProtectedPathSource},
      {"/ws/x.pem", Access::kDenied, false, kDenyGlobSource},
      {"/ws/secret", Access::kDenied, false, "--deny"},
      {"/ws/data", Access::kDenied, false, "policy /sandbox/filesystem/deniedPaths/0"},
      {"/ws/ro", Access::kReadOnly, true, "--ro"},
      {"/ws/.ssh", Access::kDenied, false, kCredentialSource},
      {"/ws/journal", Access::kDenied, false, "the run journals"},
      {"/ws/audit.jsonl", Access::kDenied, false, "the run's audit log"},
      {"/ws/linked", Access::kDenied, false, kRefusedEntrySource},
      PathRule::ReadOnly("/ro-ws"),
  };
  auto by = [&](const char* p) { return RefusedByRule(CoverPath(rules, p)); };
  EXPECT_EQ(by("/ws/.git/config"), B::kProtectedPath);
  EXPECT_EQ(by("/ws/x.pem"), B::kDenyGlob);
  EXPECT_EQ(by("/ws/secret/a"), B::kDeniedPath);
  EXPECT_EQ(by("/ws/data"), B::kDeniedPath);
  EXPECT_EQ(by("/ws/ro/f"), B::kReadOnlyPath);
  EXPECT_EQ(by("/ro-ws/f"), B::kReadOnlyPath) << "the read-only profile's workspace";
  EXPECT_EQ(by("/ws/.ssh/id_ed25519"), B::kCredential);
  EXPECT_EQ(by("/ws/journal/run/x"), B::kOther);
  EXPECT_EQ(by("/ws/audit.jsonl"), B::kOther);
  EXPECT_EQ(by("/ws/linked"), B::kOther);
  EXPECT_EQ(by("/elsewhere/f"), B::kOutside);
  EXPECT_EQ(by("/ws/a/../secret"), B::kOutside) << "a raw .. segment";
  EXPECT_EQ(by("/ws/ok"), B::kOther) << "not refused";
}

TEST(IsCredentialPath, TheListWhateverRuleCoversIt) {
  std::vector<PathRule> base = {{"/home/u/.ssh", Access::kDenied, false, kCredentialSource},
                                {"/home/u/other", Access::kDenied, false, "--deny"}};
  EXPECT_TRUE(IsCredentialPath(base, "/home/u/.ssh"));
  EXPECT_TRUE(IsCredentialPath(base, "/home/u/.ssh/id_rsa"));
  EXPECT_FALSE(IsCredentialPath(base, "/home/u/.sshx"));
  EXPECT_FALSE(IsCredentialPath(base, "/home/u/other/f"));
}

}  // namespace
}  // namespace cordon::policy
