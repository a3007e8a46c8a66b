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

// A metadata change (chmod, chown, utimes, an xattr) of a regular file with
// one name or a directory: each refusal the policy's own rules make may be
// asked; one row per clause that keeps it from being asked.
TEST(BypassEligible, MetadataOfAFileOrADirectory) {
  auto meta = [](B by, AttrOp attr, EntryKind entry = EntryKind::kRegular, uint64_t nlink = 1) {
    BypassFacts f = F(by, FileOp::kMetadata);
    f.attr = attr;
    f.entry = entry;
    f.nlink = nlink;
    return f;
  };
  struct Row {
    const char* what;
    BypassFacts f;
    bool offered;
  };
  std::vector<Row> rows;
  for (B by : {B::kProtectedPath, B::kDenyGlob, B::kDeniedPath, B::kReadOnlyPath}) {
    for (AttrOp a : {AttrOp::kMode, AttrOp::kOwner, AttrOp::kTimes, AttrOp::kXattr}) {
      rows.push_back({"a file", meta(by, a), true});
      rows.push_back({"a directory", meta(by, a, EntryKind::kDirectory, 2), true});
    }
  }
  for (B by : {B::kOther, B::kCredential, B::kOutside}) {
    rows.push_back({"a refusal no bypass touches", meta(by, AttrOp::kMode), false});
  }
  rows.push_back({"a truncate or inode flags", meta(B::kProtectedPath, AttrOp::kOther), false});
  rows.push_back({"no change named", meta(B::kProtectedPath, AttrOp::kNone), false});
  rows.push_back({"a hard-linked file",
                  meta(B::kProtectedPath, AttrOp::kMode, EntryKind::kRegular, 2), false});
  rows.push_back(
      {"a symbolic link", meta(B::kProtectedPath, AttrOp::kOwner, EntryKind::kSymlink), false});
  rows.push_back(
      {"a special file", meta(B::kProtectedPath, AttrOp::kMode, EntryKind::kSpecial), false});
  rows.push_back(
      {"not looked at", meta(B::kProtectedPath, AttrOp::kMode, EntryKind::kUnknown), false});
  BypassFacts f = meta(B::kDeniedPath, AttrOp::kMode);
  f.credential = true;
  rows.push_back({"a credential path", f, false});
  f = meta(B::kDeniedPath, AttrOp::kTimes);
  f.in_workspace = false;
  rows.push_back({"outside the workspace", f, false});
  f = meta(B::kProtectedPath, AttrOp::kXattr);
  f.dotdot = true;
  rows.push_back({"a path written with ..", f, false});
  f = meta(B::kProtectedPath, AttrOp::kOwner);
  f.allow_bypass = false;
  rows.push_back({"without allowBypass", f, false});
  f = meta(B::kProtectedPath, AttrOp::kMode);
  f.can_ask = false;
  rows.push_back({"under --approvals deny", f, false});
  for (const Row& row : rows) EXPECT_EQ(BypassEligible(row.f), row.offered) << row.what;
}

// A directory renamed: to a free name, no rule beneath it; each end as a
// file's. One row per clause.
TEST(BypassRenameEligible, ADirectoryToAFreeNameWithNoRuleBeneathIt) {
  auto ends = [](B from, bool from_allowed, B to, bool to_allowed) {
    RenameEnds r;
    r.from = F(from, FileOp::kRename, true);
    r.from.entry = EntryKind::kDirectory;
    r.to = F(to, FileOp::kRename);
    r.to.entry = EntryKind::kAbsent;
    r.from_allowed = from_allowed;
    r.to_allowed = to_allowed;
    return r;
  };
  struct Row {
    const char* what;
    RenameEnds r;
    bool offered;
  };
  std::vector<Row> rows;
  for (B by : {B::kProtectedPath, B::kDenyGlob, B::kDeniedPath, B::kReadOnlyPath}) {
    rows.push_back({"a refused directory away", ends(by, false, B::kOther, true), true});
    rows.push_back({"into a refused name", ends(B::kOther, true, by, false), true});
  }
  for (B by : {B::kOther, B::kCredential, B::kOutside}) {
    rows.push_back({"from a name no bypass touches", ends(by, false, B::kOther, true), false});
    rows.push_back({"to a name no bypass touches", ends(B::kDeniedPath, false, by, false), false});
  }
  rows.push_back({"nothing refused", ends(B::kOther, true, B::kOther, true), false});
  RenameEnds r = ends(B::kDeniedPath, false, B::kOther, true);
  r.to.entry = EntryKind::kUnknown;
  rows.push_back({"a destination not looked at", r, false});
  r = ends(B::kDeniedPath, false, B::kOther, true);
  r.to.entry = EntryKind::kRegular;
  rows.push_back({"over a file", r, false});
  r = ends(B::kDeniedPath, false, B::kOther, true);
  r.to.entry = EntryKind::kDirectory;
  r.to.directory = true;
  rows.push_back({"over a directory", r, false});
  r = ends(B::kDeniedPath, false, B::kOther, true);
  r.from.holds_rules = true;
  rows.push_back({"a rule beneath it", r, false});
  r = ends(B::kDeniedPath, false, B::kOther, true);
  r.to.in_workspace = false;
  rows.push_back({"out of the workspace", r, false});
  r = ends(B::kOther, true, B::kDeniedPath, false);
  r.from.in_workspace = false;
  rows.push_back({"from outside the workspace", r, false});
  r = ends(B::kDeniedPath, false, B::kOther, true);
  r.from.credential = true;
  rows.push_back({"a credential directory", r, false});
  r = ends(B::kDeniedPath, false, B::kOther, true);
  r.to.dotdot = true;
  rows.push_back({"to a path written with ..", r, false});
  r = ends(B::kDeniedPath, false, B::kOther, true);
  r.from.allow_bypass = r.to.allow_bypass = false;
  rows.push_back({"without allowBypass", r, false});
  r = ends(B::kDeniedPath, false, B::kOther, true);
  r.from.can_ask = r.to.can_ask = false;
  rows.push_back({"under --approvals deny", r, false});
  r = ends(B::kDeniedPath, false, B::kOther, true);
  r.from.op = r.to.op = FileOp::kExchange;
  rows.push_back({"an exchange", r, false});
  for (const Row& row : rows) EXPECT_EQ(BypassRenameEligible(row.r), row.offered) << row.what;
}

// A link: a new, free name a rule refuses, for a file the tool may write
// (regular, one name, not pinned). One row per clause.
TEST(BypassLinkEligible, ANewNameForAFileTheToolMayWrite) {
  auto ends = [](B to) {
    LinkEnds l;
    l.from = F(B::kOther, FileOp::kLink);
    l.from.entry = EntryKind::kRegular;
    l.from.nlink = 1;
    l.from_allowed = true;
    l.to = F(to, FileOp::kLink);
    l.to.entry = EntryKind::kAbsent;
    return l;
  };
  struct Row {
    const char* what;
    LinkEnds l;
    bool offered;
  };
  std::vector<Row> rows;
  for (B by : {B::kProtectedPath, B::kDenyGlob, B::kDeniedPath, B::kReadOnlyPath}) {
    rows.push_back({"a refused new name", ends(by), true});
  }
  for (B by : {B::kOther, B::kCredential, B::kOutside}) {
    rows.push_back({"a new name no bypass touches", ends(by), false});
  }
  LinkEnds l = ends(B::kDeniedPath);
  l.from_allowed = false;
  l.from.refused_by = B::kDeniedPath;
  rows.push_back({"from a denied file (a second, readable name)", l, false});
  l = ends(B::kDeniedPath);
  l.from.nlink = 2;
  rows.push_back({"a hard-linked source", l, false});
  l = ends(B::kDeniedPath);
  l.from.entry = EntryKind::kSymlink;
  rows.push_back({"a symbolic link", l, false});
  l = ends(B::kDeniedPath);
  l.from.entry = EntryKind::kDirectory;
  rows.push_back({"a directory", l, false});
  l = ends(B::kDeniedPath);
  l.from.pinned = true;
  rows.push_back({"another name of a denied file", l, false});
  l = ends(B::kDeniedPath);
  l.to.entry = EntryKind::kRegular;
  rows.push_back({"a name that is taken", l, false});
  l = ends(B::kDeniedPath);
  l.to.entry = EntryKind::kUnknown;
  rows.push_back({"a name not looked at", l, false});
  l = ends(B::kDeniedPath);
  l.from.in_workspace = false;
  rows.push_back({"from outside the workspace", l, false});
  l = ends(B::kDeniedPath);
  l.to.in_workspace = false;
  rows.push_back({"to outside the workspace", l, false});
  l = ends(B::kDeniedPath);
  l.to.credential = true;
  rows.push_back({"to a credential path", l, false});
  l = ends(B::kDeniedPath);
  l.from.credential = true;
  rows.push_back({"from a credential path", l, false});
  l = ends(B::kProtectedPath);
  l.to.dotdot = true;
  rows.push_back({"to a path written with ..", l, false});
  l = ends(B::kProtectedPath);
  l.from.dotdot = true;
  rows.push_back({"from a path written with ..", l, false});
  l = ends(B::kProtectedPath);
  l.from.allow_bypass = l.to.allow_bypass = false;
  rows.push_back({"without allowBypass", l, false});
  l = ends(B::kProtectedPath);
  l.from.can_ask = l.to.can_ask = false;
  rows.push_back({"under --approvals deny", l, false});
  l = ends(B::kProtectedPath);
  l.from.op = l.to.op = FileOp::kRename;
  rows.push_back({"not a link", l, false});
  for (const Row& row : rows) EXPECT_EQ(BypassLinkEligible(row.l), row.offered) << row.what;
}

TEST(HoldsRuleBeneath, OnlyARuleStrictlyBeneath) {
  std::vector<PathRule> rules = {PathRule::ReadWrite("/ws"),
                                 {"/ws/a/secret", Access::kDenied, false, "--deny"}};
  EXPECT_TRUE(HoldsRuleBeneath(rules, "/ws/a"));
  EXPECT_FALSE(HoldsRuleBeneath(rules, "/ws/a/secret")) << "its own rule moves with its name";
  EXPECT_FALSE(HoldsRuleBeneath(rules, "/ws/b"));
  EXPECT_FALSE(HoldsRuleBeneath(rules, "/ws/a/secretx"));
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

// Decide's own rules, by the place's facts: the kind a rename's or a
// link's end is offered by.
TEST(RefusedByPlace, SaysWhichOfDecidesRulesTheFactsAre) {
  PlaceFacts glob;
  glob.deny_glob = true;
  glob.protected_path = true;  // a deny glob's match says so first
  EXPECT_EQ(RefusedByPlace(glob), B::kDenyGlob);
  PlaceFacts prot;
  prot.protected_path = true;
  EXPECT_EQ(RefusedByPlace(prot), B::kProtectedPath);
  EXPECT_EQ(RefusedByPlace(PlaceFacts{}), B::kOther) << "a plain place";
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
