// policy::Decide, table-driven: one row per rule and per honest neighbour,
// each naming its rule. Removing any rule from Decide fails a row.
#include "policy/decide.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <string>
#include <vector>

#include "tests/policy/decide_rows.h"

namespace cordon::policy {
namespace {

using namespace decide_rows;  // NOLINT(google-build-using-namespace): the table's words

std::vector<Row> Rows() {
  return {
      // --- open for writing ---
      Allow("open: a regular file in a writable path", R(kOpen)),
      Allow("open: a file the call created", R(kOpen).created()),
      Allow("open: entry not looked at yet (before the open)", R(kOpen, K::kUnknown)),
      Allow("open: a directory (the kernel answers EISDIR)", R(kOpen, K::kDirectory)),
      Refuse("open: protected path", R(kOpen).prot(), EACCES),
      Refuse("open: protected path, before the open", R(kOpen, K::kUnknown).prot(), EACCES),
      Refuse("open: protected path, even made in the run", R(kOpen).prot().born(), EACCES),
      Refuse("open: symbolic link", R(kOpen, K::kSymlink), EACCES),
      Refuse("open: hard-linked file", R(kOpen).nlink(2), EACCES),
      Refuse("open: hard-linked file, many links", R(kOpen).nlink(9), EACCES),
      Refuse("open: hard-linked file made in the run", R(kOpen).nlink(2).born(), EACCES),
      Refuse("open: special file", R(kOpen, K::kSpecial), EACCES),
      Allow("open: O_TMPFILE has no name to check", R(kOpen, K::kSpecial).tmpfile()),
      Allow("open: O_TMPFILE of a regular inode", R(kOpen).tmpfile()),
      Refuse("open: shared, not made by this run", R(kOpen).shared().notown(), EACCES),
      Allow("open: shared, made by this run", R(kOpen).shared()),
      Allow("open: shared, created by this call", R(kOpen).shared().notown().created()),
      Allow("open: not shared, ownership does not matter", R(kOpen).notown()),
      Allow("open: pinned inode opened for writing is the kernel's (content)", R(kOpen).pinned()),
      Refuse("open: shared and protected: protected first", R(kOpen).shared().prot(), EACCES),

      // --- brokered read: an entry Landlock's launch-time grant missed ---
      Allow("read: a regular file the run made beside a carve-out", R(kRead)),
      Allow("read: a directory (opendir)", R(kRead, K::kDirectory)),
      Allow("read: a hard-linked file, as the kernel reads one", R(kRead).nlink(2)),
      Allow("read: a protected path is read-only, not unreadable", R(kRead).prot()),
      Allow("read: a pinned directory is on the way to a denial", R(kRead, K::kDirectory).pinned()),
      Refuse("read: a directory holding an unlisted denial (its listing names it)",
             R(kRead, K::kDirectory).unlisted(), EACCES),
      Refuse("read: holding an unlisted denial, pinned too",
             R(kRead, K::kDirectory).pinned().unlisted(), EACCES),
      Refuse("read: another name of a denied file", R(kRead).pinned().nlink(2), EACCES),
      Refuse("read: a deny glob's match made after the launch scan", R(kRead).glob(), EACCES),
      Refuse("read: a deny glob's match, a directory", R(kRead, K::kDirectory).glob(), EACCES),
      Refuse("read: special file (a FIFO, a device)", R(kRead, K::kSpecial), EACCES),
      Refuse("read: symbolic link (never opened as itself)", R(kRead, K::kSymlink), EACCES),

      // --- create: mkdir, symlink, mknod ---
      Allow("create: a directory", R(kCreate, K::kAbsent).make(K::kDirectory)),
      Allow("create: a symlink", R(kCreate, K::kAbsent).make(K::kSymlink)),
      Allow("create: a regular file (mknod)", R(kCreate, K::kAbsent).make(K::kRegular)),
      Refuse("create: the root exists", R(kCreate, K::kAbsent).root().make(K::kDirectory), EEXIST),
      Refuse("create: the root exists, even shared", R(kCreate, K::kAbsent).root().shared(),
             EEXIST),
      Refuse("create: shared, a directory", R(kCreate, K::kAbsent).shared().make(K::kDirectory),
             EACCES),
      Refuse("create: shared, a symlink", R(kCreate, K::kAbsent).shared().make(K::kSymlink),
             EACCES),
      Allow("create: shared, a regular file", R(kCreate, K::kAbsent).shared().make(K::kRegular)),
      Refuse("create: a file grant, a directory",
             R(kCreate, K::kAbsent).file_grant().make(K::kDirectory), EACCES),
      Refuse("create: a file grant, a symlink",
             R(kCreate, K::kAbsent).file_grant().make(K::kSymlink), EACCES),
      Allow("create: a file grant, a regular file",
            R(kCreate, K::kAbsent).file_grant().make(K::kRegular)),
      Refuse("create: protected path", R(kCreate, K::kAbsent).prot().make(K::kDirectory), EACCES),
      Refuse("create: protected symlink", R(kCreate, K::kAbsent).prot().make(K::kSymlink), EACCES),
      Refuse("create: protected path the tool sees: EEXIST",
             R(kCreate, K::kAbsent).prot().sees().make(K::kDirectory), EEXIST),
      Allow("create: an unprotected name the tool sees (the kernel answers)",
            R(kCreate, K::kAbsent).sees().make(K::kDirectory)),
      Refuse("create: special file", R(kCreate, K::kAbsent).make(K::kSpecial), EACCES),
      Refuse("create: special file in a shared directory",
             R(kCreate, K::kAbsent).shared().make(K::kSpecial), EACCES),

      // --- delete ---
      Allow("delete: made in the run", R(kDel).born()),
      Allow("delete: made in the run, a directory", R(kDel, K::kDirectory).born().want_dir()),
      Allow("delete: made in the run, a symlink", R(kDel, K::kSymlink).born()),
      Allow("delete: made in the run, hard-linked", R(kDel).born().nlink(3)),
      Allow("delete: made in the run, special", R(kDel, K::kSpecial).born()),
      Refuse("delete: the user's file, no approver", R(kDel), EACCES),
      Ask("delete: the user's file, an approver", R(kDel).can_ask()),
      Allow("delete: the user's file, sensitive.delete allow", R(kDel).allow_delete()),
      Allow("delete: allow covers a pre-existing directory",
            R(kDel, K::kDirectory).want_dir().allow_delete()),
      Refuse("delete: pre-existing directory", R(kDel, K::kDirectory).want_dir(), EACCES),
      Refuse("delete: a full directory: the kernel's ENOTEMPTY before the rule",
             R(kDel, K::kDirectory).want_dir().full(), ENOTEMPTY),
      Refuse("delete: a full directory made in the run",
             R(kDel, K::kDirectory).want_dir().full().born(), ENOTEMPTY),
      Allow("delete: entries of a file mean nothing (unlink)", R(kDel).full().born()),
      Refuse("delete: protected before ENOTEMPTY", R(kDel, K::kDirectory).want_dir().full().prot(),
             EACCES),
      Refuse("delete: a protected directory the tool sees holding entries: ENOTEMPTY, no rule",
             R(kDel, K::kDirectory).want_dir().full().prot().sees(), ENOTEMPTY),
      Refuse("delete: an empty protected directory the tool sees",
             R(kDel, K::kDirectory).want_dir().prot().sees(), EACCES),
      Refuse("delete: unlink of a full protected directory the tool sees",
             R(kDel, K::kDirectory).full().prot().sees(), EACCES),
      Refuse("delete: rmdir of a protected file", R(kDel).want_dir().full().prot().sees(), EACCES),
      Refuse("delete: a full directory the tool sees, a deny glob's match",
             R(kDel, K::kDirectory).want_dir().full().glob().sees(), EACCES),
      Refuse("delete: pinned before ENOTEMPTY", R(kDel, K::kDirectory).want_dir().full().pinned(),
             EACCES),
      Allow("delete: unlink of a full directory: the kernel's EISDIR first",
            R(kDel, K::kDirectory).full()),
      Ask("delete: pre-existing empty directory, an approver (issue 26)",
          R(kDel, K::kDirectory).want_dir().can_ask()),
      Refuse("delete: pre-existing full directory, an approver: the kernel's ENOTEMPTY",
             R(kDel, K::kDirectory).want_dir().full().can_ask(), ENOTEMPTY),
      Refuse("delete: pre-existing symlink", R(kDel, K::kSymlink).can_ask(), EACCES),
      Refuse("delete: pre-existing hard-linked file", R(kDel).nlink(2).can_ask(), EACCES),
      Refuse("delete: pre-existing special file", R(kDel, K::kSpecial).can_ask(), EACCES),
      Allow("delete: rmdir of a file: the kernel's ENOTDIR", R(kDel).want_dir()),
      Allow("delete: unlink of a directory: the kernel's EISDIR", R(kDel, K::kDirectory)),
      Allow("delete: nothing there: the kernel's ENOENT", R(kDel, K::kAbsent)),
      Refuse("delete: a writable root", R(kDel, K::kDirectory).root().want_dir().born(), EACCES),
      Refuse("delete: a writable root, even allowed",
             R(kDel, K::kDirectory).root().want_dir().allow_delete(), EACCES),
      Refuse("delete: protected path", R(kDel).prot().born(), EACCES),
      Refuse("delete: protected path, allowed deletes", R(kDel).prot().allow_delete(), EACCES),
      Refuse("delete: protected directory", R(kDel, K::kDirectory).prot().want_dir().born(),
             EACCES),
      Refuse("delete: pinned (on the way to a denied path)",
             R(kDel, K::kDirectory).pinned().want_dir().born(), EACCES),
      Refuse("delete: pinned file, allowed deletes", R(kDel).pinned().allow_delete(), EACCES),
      Refuse("delete: shared, not made by this run", R(kDel).shared().notown().born(), EACCES),
      Refuse("delete: shared, not made by this run, allowed deletes",
             R(kDel).shared().notown().allow_delete(), EACCES),
      Allow("delete: shared, made by this run", R(kDel).shared().born()),
      Allow("delete: not shared, ownership does not matter", R(kDel).notown().born()),
      // The private cache (policy/private_cache.h): what an earlier run
      // left there is the tool's own.
      Allow("delete: an earlier run's file in the private cache", R(kDel).cache()),
      Allow("delete: an earlier run's directory in the private cache",
            R(kDel, K::kDirectory).want_dir().cache()),
      Refuse("delete: the private cache's root itself",
             R(kDel, K::kDirectory).want_dir().root().cache(), EACCES),
      Refuse("delete: a pinned entry, even in the private cache", R(kDel).pinned().cache(), EACCES),

      // --- rename ---
      Allow("rename: a file to a new name", R(kRen)),
      Allow("rename: over a file made in the run", R(kRen).to(K::kRegular).oborn()),
      Allow("rename: over the user's file (an atomic save)", R(kRen).to(K::kRegular)),
      Allow("rename: a directory to a new name", R(kRen, K::kDirectory)),
      Allow("rename: over the user's directory, allowed deletes",
            R(kRen, K::kDirectory).to(K::kDirectory).allow_delete()),
      Allow("rename: over an earlier run's directory in the private cache",
            R(kRen, K::kDirectory).to(K::kDirectory).cache().ocache()),
      Allow("rename: over a directory made in the run",
            R(kRen, K::kDirectory).to(K::kDirectory).oborn()),
      Refuse("rename: over a pre-existing directory", R(kRen, K::kDirectory).to(K::kDirectory),
             EACCES),
      Refuse("rename: over a full pre-existing directory: the kernel's ENOTEMPTY",
             R(kRen, K::kDirectory).to(K::kDirectory).ofull(), ENOTEMPTY),
      Refuse("rename: over a full directory made in the run",
             R(kRen, K::kDirectory).to(K::kDirectory).ofull().oborn(), ENOTEMPTY),
      Allow("exchange: with a full directory (nothing is removed)",
            R(kEx, K::kDirectory).to(K::kDirectory).ofull()),
      Refuse("rename: over a pinned full directory: the pin first",
             R(kRen, K::kDirectory).to(K::kDirectory).ofull().opinned(), EACCES),
      Allow("exchange: with a pre-existing directory (nothing is removed)",
            R(kEx, K::kDirectory).to(K::kDirectory)),
      Refuse("rename: the source is a root", R(kRen, K::kDirectory).root(), EBUSY),
      Refuse("rename: the destination is a root", R(kRen).oroot(), EBUSY),
      Refuse("rename: root before protected", R(kRen).root().oprot(), EBUSY),
      Refuse("rename: from a protected path", R(kRen).prot(), EACCES),
      Refuse("rename: to a protected path", R(kRen).oprot(), EACCES),
      Refuse("exchange: with a protected path", R(kEx).to(K::kRegular).oprot(), EACCES),
      Refuse("rename: a directory that leads to a protected path", R(kRen, K::kDirectory).lead(),
             EXDEV),
      Refuse("rename: to a name that leads to a protected path", R(kRen, K::kDirectory).olead(),
             EXDEV),
      Refuse("rename: a file named like a lead", R(kRen).lead(), EXDEV),
      Refuse("rename: protected before lead", R(kRen).prot().lead(), EACCES),
      Refuse("rename: across writable roots", R(kRen).cross(), EXDEV),
      Refuse("rename: across roots, a directory", R(kRen, K::kDirectory).cross(), EXDEV),
      Refuse("rename: lead before across roots", R(kRen).lead().cross(), EXDEV),
      Refuse("rename: a directory beneath a ** lead", R(kRen, K::kDirectory).lead_any(), EXDEV),
      Refuse("rename: a directory into a ** lead", R(kRen, K::kDirectory).olead_any(), EXDEV),
      Allow("rename: a file beneath a ** lead (git's own renames)", R(kRen).lead_any()),
      Allow("rename: a file into a ** lead", R(kRen).olead_any()),
      Allow("rename: unknown source kind beneath a ** lead", R(kRen, K::kUnknown).lead_any()),
      Refuse("rename: over a pinned destination", R(kRen).to(K::kRegular).opinned().oborn(),
             EACCES),
      Refuse("exchange: with a pinned destination", R(kEx).to(K::kDirectory).opinned(), EACCES),
      Allow("rename: a pinned flag on an absent destination means nothing",
            R(kRen).to(K::kAbsent).opinned()),
      Refuse("rename: a pinned source", R(kRen, K::kDirectory).pinned(), EACCES),
      Refuse("exchange: a pinned source", R(kEx).to(K::kRegular).pinned(), EACCES),
      Refuse("rename: shared source not made by this run", R(kRen).shared().notown(), EACCES),
      Refuse("rename: over a shared file not made by this run",
             R(kRen).oshared().to(K::kRegular).onotown().oborn(), EACCES),
      Allow("rename: shared, both made by this run", R(kRen).shared().oshared().to(K::kRegular)),
      Allow("rename: not shared, ownership does not matter", R(kRen).notown()),
      Allow("rename: unknown source facts pass", R(kRen, K::kUnknown)),

      // --- link ---
      Allow("link: a second name in one root", R(kLink)),
      Refuse("link: across writable roots", R(kLink).cross(), EXDEV),
      Refuse("link: across roots before a root", R(kLink).cross().root(), EXDEV),
      Refuse("link: from a root", R(kLink, K::kDirectory).root(), EPERM),
      Refuse("link: to a root", R(kLink).oroot(), EPERM),
      Refuse("link: to a protected path", R(kLink).oprot(), EACCES),
      Refuse("link: from a protected path", R(kLink).prot(), EACCES),
      Refuse("link: from a pinned inode", R(kLink).pinned(), EACCES),
      Refuse("link: shared, not made by this run", R(kLink).shared().notown(), EACCES),
      Allow("link: shared, source not looked at yet", R(kLink, K::kUnknown).shared()),
      Refuse("link: shared, source absent", R(kLink, K::kAbsent).shared(), EACCES),
      Allow("link: shared, made by this run", R(kLink).shared()),
      Allow("link: unknown source, not shared (the kernel answers)", R(kLink, K::kUnknown)),
      Allow("link: not shared, ownership does not matter", R(kLink).notown()),

      // --- metadata ---
      Allow("metadata: a regular file", R(kMeta)),
      Allow("metadata: a directory", R(kMeta, K::kDirectory)),
      Allow("metadata: a file made in the run", R(kMeta).born()),
      Refuse("metadata: protected path", R(kMeta).prot(), EACCES),
      Refuse("metadata: protected directory", R(kMeta, K::kDirectory).prot(), EACCES),
      Refuse("metadata: shared, not made by this run", R(kMeta).shared().notown(), EACCES),
      Allow("metadata: shared, made by this run", R(kMeta).shared()),
      Allow("metadata: the symlink itself (lchown, utimensat NOFOLLOW)",
            R(kMeta, K::kSymlink).nofollow()),
      Refuse("metadata: through a symlink", R(kMeta, K::kSymlink), EACCES),
      Refuse("metadata: a hard-linked symlink itself", R(kMeta, K::kSymlink).nofollow().nlink(2),
             EACCES),
      Refuse("metadata: hard-linked file", R(kMeta).nlink(2), EACCES),
      Refuse("metadata: hard-linked file, nofollow", R(kMeta).nlink(2).nofollow(), EACCES),
      Refuse("metadata: special file", R(kMeta, K::kSpecial), EACCES),
      Refuse("metadata: special file, nofollow", R(kMeta, K::kSpecial).nofollow(), EACCES),
      Allow("metadata: not shared, ownership does not matter", R(kMeta).notown()),
      Allow("metadata: pinned inode (content, not its name)", R(kMeta).pinned()),
      // --- a new repository's config (policy/git_config_keys.h) ---
      Refuse("config: open for writing", R(kOpen).guarded().born(), EACCES),
      Refuse("config: made by an open", R(kOpen, K::kUnknown).guarded(), EACCES),
      Refuse("config: made as a symlink", R(kCreate, K::kAbsent).guarded().make(K::kSymlink),
             EACCES),
      Refuse("config: linked into place", R(kLink).oguarded(), EACCES),
      Refuse("config: exchanged into place", R(kEx).oguarded().to(K::kRegular).oborn(), EACCES),
      Refuse("config: renamed into place, sets a key that runs a program",
             R(kRen).born().oguarded().to(K::kRegular).oborn().content(ContentFact::kRunnable),
             EACCES),
      Refuse("config: renamed into place, not a readable regular file",
             R(kRen).born().oguarded().content(ContentFact::kUnreadable), EACCES),
      Allow("config: renamed into place, content not read yet",
            R(kRen).born().oguarded().to(K::kRegular).oborn()),
      Allow("config: renamed into place, checked content (git's lock file)",
            R(kRen).born().oguarded().to(K::kRegular).oborn().content(ContentFact::kSafe)),
      Allow("config: its metadata (chmod)", R(kMeta).guarded()),
      Allow("config: renamed away", R(kRen).guarded().born()),
      // --- the config of a repository the user had (git submodule init) ---
      Allow("user's config: renamed into place, only a registration changed",
            R(kRen).born().ousers_cfg().to(K::kRegular).content(ContentFact::kSafe)),
      Refuse("user's config: renamed into place, another entry changed",
             R(kRen).born().ousers_cfg().to(K::kRegular).content(ContentFact::kChangesUsers),
             EACCES),
      Refuse("user's config: exchanged into place", R(kEx).ousers_cfg().to(K::kRegular), EACCES),
      Refuse("user's config: deleted (even where the journal would keep it)",
             R(kDel).users_cfg().kept(), EACCES),
      Refuse("user's config: renamed away", R(kRen).users_cfg(), EACCES),
      Refuse("user's config: open for writing", R(kOpen).users_cfg(), EACCES),
      Refuse("user's config: linked into place", R(kLink).ousers_cfg(), EACCES),
      Refuse("user's config: its metadata", R(kMeta).users_cfg(), EACCES),
      // --- deny globs (policy/deny_glob.h) ---
      Refuse("glob: open for writing a match", R(kOpen, K::kUnknown).glob(), EACCES),
      Refuse("glob: open of a match even made in the run", R(kOpen).glob().born(), EACCES),
      Refuse("glob: create a match (a new .env)", R(kCreate, K::kAbsent).glob(), EACCES),
      Refuse("glob: mkdir a match", R(kCreate, K::kAbsent).glob().make(K::kDirectory), EACCES),
      Refuse("glob: delete a match", R(kDel).glob().allow_delete(), EACCES),
      Refuse("glob: rename onto a match", R(kRen).oglob(), EACCES),
      Refuse("glob: rename a match away", R(kRen).glob(), EACCES),
      Refuse("glob: link a match's new name", R(kLink).oglob(), EACCES),
      Refuse("glob: link a second name to a match", R(kLink).glob(), EACCES),
      Refuse("glob: metadata of a match", R(kMeta).glob(), EACCES),
      Refuse("glob: a directory rename where a glob looks at directory names",
             R(kRen, K::kDirectory).glob_parents(), EXDEV),
      Refuse("glob: an exchange bringing a directory, where a glob looks at directory names",
             R(kEx).to(K::kDirectory).glob_parents(), EXDEV),
      Allow("glob: a file rename where a glob looks at directory names (its name decides)",
            R(kRen).glob_parents()),
      Allow("glob: a directory rename where globs look at last names only", R(kRen, K::kDirectory)),
      Allow("glob: a new name beside a match", R(kCreate, K::kAbsent)),
  };
}

// The same rules asked of every operation, so that a rule that holds for all
// of them (protected paths, shared directories) is checked for each.
std::vector<Row> EveryOpRows() {
  std::vector<Row> rows;
  struct OpCase {
    FileOp op;
    K kind;
  } ops[] = {{kOpen, K::kRegular}, {kDel, K::kRegular},  {kRen, K::kRegular},
             {kEx, K::kRegular},   {kLink, K::kRegular}, {kMeta, K::kRegular}};
  for (const OpCase& o : ops) {
    rows.push_back(Refuse("every op: protected path", R(o.op, o.kind).prot().born(),
                          o.op == kDel || o.op == kOpen || o.op == kMeta || o.op == kLink ||
                                  o.op == kRen || o.op == kEx
                              ? EACCES
                              : 0));
    R own = R(o.op, o.kind).born();
    if (o.op == kEx) own.to(K::kRegular).oborn();
    rows.push_back(Allow("every op: the honest neighbour", own));
    R notown = R(o.op, o.kind).shared().notown().born();
    if (o.op == kEx) notown.to(K::kRegular).oborn();
    rows.push_back(Refuse("every op: shared, not made by this run", notown, EACCES));
    R hard = R(o.op, o.kind).nlink(2);
    const bool refuses_links = o.op == kOpen || o.op == kMeta || o.op == kDel;
    if (o.op == kEx) hard.to(K::kRegular).oborn();
    rows.push_back(refuses_links
                       ? Refuse("every op: a hard-linked file through its name", hard, EACCES)
                       : Allow("every op: moving or linking a hard-linked name is the kernel's",
                               hard));
    R sym = R(o.op, K::kSymlink).born();
    if (o.op == kEx) sym.to(K::kRegular).oborn();
    const bool refuses_symlinks = o.op == kOpen || o.op == kMeta;
    rows.push_back(refuses_symlinks
                       ? Refuse("every op: through a symbolic link", sym, EACCES)
                       : Allow("every op: a symlink's own name moves or goes", sym));
  }
  return rows;
}

// The one open that makes a new worktree's commondir says so; no other
// open does.
TEST(Decide, ANewWorktreeLinkIsMadeByTheSupervisor) {
  R made = R(kOpen, K::kAbsent).new_wt();
  EXPECT_TRUE(Decide(made.q, made.s).make_link);
  R file = R(kOpen, K::kAbsent);
  EXPECT_FALSE(Decide(file.q, file.s).make_link);
  R there = R(kOpen).new_wt();
  EXPECT_FALSE(Decide(there.q, there.s).make_link);
}

TEST(Decide, CheckedConfigIsPutInPlaceAsACopy) {
  R r = R(kRen).born().oguarded().to(K::kRegular).oborn().content(ContentFact::kSafe);
  EXPECT_TRUE(Decide(r.q, r.s).copy_checked);
  R plain = R(kRen).born();
  EXPECT_FALSE(Decide(plain.q, plain.s).copy_checked);
}

TEST(Decide, Table) {
  std::vector<Row> rows = Rows();
  for (Row& r : EveryOpRows()) rows.push_back(r);
  EXPECT_GE(rows.size(), 150u);
  ExpectRows(rows);
}

// A rename over a file of the user's marks the moved inode: deleting it
// later is deleting the user's file.
TEST(Decide, ARenameOverTheUsersFileLaundersNothing) {
  EXPECT_TRUE(Decide(R(kRen).to(K::kRegular).q, {}).launders);
  EXPECT_FALSE(Decide(R(kRen).to(K::kRegular).ocache().q, {}).launders)
      << "an earlier run's file in the private cache is the tool's own";
  EXPECT_FALSE(Decide(R(kRen).to(K::kRegular).oborn().q, {}).launders);
  EXPECT_FALSE(Decide(R(kRen).to(K::kAbsent).q, {}).launders);
  EXPECT_FALSE(Decide(R(kEx).to(K::kRegular).q, {}).launders) << "an exchange removes nothing";
  Settings allow;
  allow.delete_allowed = true;
  EXPECT_FALSE(Decide(R(kRen).to(K::kRegular).q, allow).launders);
}

// Recoverable runs (issue 26): what the journal keeps first, and only for
// a file of the user's in the place it covers.
TEST(Decide, ARecoverableRunKeepsTheUsersFileFirst) {
  auto keep = [](const R& r) { return Decide(r.q, r.s).keep; };
  auto allowed = [](const R& r) { return Decide(r.q, r.s).allowed(); };
  // Deletes: a file, a symlink, a hard-linked file, an empty directory.
  EXPECT_EQ(keep(R(kDel).kept()), Keep::kMove);
  EXPECT_TRUE(allowed(R(kDel).kept()));
  EXPECT_EQ(keep(R(kDel, K::kSymlink).kept()), Keep::kMove);
  EXPECT_EQ(keep(R(kDel).nlink(2).kept()), Keep::kMove);
  EXPECT_EQ(keep(R(kDel, K::kDirectory).want_dir().kept()), Keep::kMove);
  // ... but a full directory is the kernel's ENOTEMPTY, and the rules before stay.
  EXPECT_EQ(Decide(R(kDel, K::kDirectory).want_dir().full().kept().q, R(kDel).kept().s).err, ENOTEMPTY);
  EXPECT_FALSE(allowed(R(kDel).prot().kept()));
  EXPECT_FALSE(allowed(R(kDel).pinned().kept()));
  EXPECT_FALSE(allowed(R(kDel).glob().kept()));
  // The run's own, the private cache, allow, and a place the journal does not cover: nothing kept.
  EXPECT_EQ(keep(R(kDel).born().kept()), Keep::kNothing);
  EXPECT_EQ(keep(R(kDel).cache().kept()), Keep::kNothing);
  R outside = R(kDel);
  outside.s.recoverable = true;
  EXPECT_EQ(keep(outside), Keep::kNothing);
  EXPECT_FALSE(allowed(outside)) << "outside the journal: the approval rule";
  // A rename over the user's file keeps it, and launders nothing; over the run's own, nothing.
  EXPECT_EQ(keep(R(kRen).to(K::kRegular).kept()), Keep::kMove);
  EXPECT_FALSE(Decide(R(kRen).to(K::kRegular).kept().q, R(kRen).kept().s).launders);
  EXPECT_EQ(keep(R(kRen).to(K::kRegular).oborn().kept()), Keep::kNothing);
  EXPECT_EQ(keep(R(kEx).to(K::kRegular).kept()), Keep::kNothing) << "an exchange removes nothing";
  EXPECT_TRUE(allowed(R(kRen).to(K::kDirectory).kept())) << "an empty directory of the user's";
  // Opens: O_TRUNC moves the old inode, a write in place copies; a new file nothing.
  EXPECT_EQ(keep(R(kOpen).kept().trunc()), Keep::kMove);
  EXPECT_EQ(keep(R(kOpen).kept()), Keep::kCopy);
  EXPECT_EQ(keep(R(kOpen).kept().created()), Keep::kNothing);
  EXPECT_EQ(keep(R(kOpen).kept().born()), Keep::kNothing);
  EXPECT_FALSE(allowed(R(kOpen).nlink(2).kept())) << "a hard-linked file stays refused";
  // truncate(2) copies; other metadata keeps the old value of what it
  // alters (issue 27; more in attr_keep_test.cc).
  EXPECT_EQ(keep(R(kMeta).kept().trunc()), Keep::kCopy);
  EXPECT_EQ(keep(R(kMeta).kept()), Keep::kAttr);
}

// The path step before Decide: the one rule lookup must grant read-write,
// and a raw ".." is refused as written, whatever the facts say.
TEST(Decide, DecideAtRefusesWhatThePathStepRefuses) {
  const std::vector<PathRule> rules = {PathRule::ReadWrite("/w"), PathRule::ReadOnly("/w/ro"),
                                       PathRule::Denied("/w/no"), PathRule::ReadWrite("/w/no/yes")};
  const R honest = R(kDel).born();
  struct Case {
    const char* path;
    Verdict want;
    int err;
  } cases[] = {
      {"/w/f", Verdict::kAllow, 0},          {"/w/no/yes/f", Verdict::kAllow, 0},
      {"/w/a/../f", Verdict::kRefuse, EACCES}, {"/w/ro/f", Verdict::kRefuse, EACCES},
      {"/w/no/f", Verdict::kRefuse, EACCES},  {"/x/f", Verdict::kRefuse, EACCES},
      {"w/f", Verdict::kRefuse, EACCES},      {"", Verdict::kRefuse, EACCES},
  };
  for (const Case& c : cases) {
    Decision d = DecideAt(rules, c.path, honest.q, honest.s);
    EXPECT_EQ(d.verdict, c.want) << c.path << ": " << Describe(d);
    EXPECT_EQ(d.err, c.err) << c.path;
  }
  // The facts still decide once the path is granted.
  EXPECT_EQ(DecideAt(rules, "/w/f", R(kDel).q, {}).verdict, Verdict::kRefuse);
}

// A brokered read's path step: any rule but a denial grants it (the read
// fence's lookup), a denial refuses it wherever it lies.
TEST(Decide, DecideAtReadsWhatTheRulesLetTheToolRead) {
  const std::vector<PathRule> rules = {PathRule::ReadWrite("/w"), PathRule::ReadOnly("/w/ro"),
                                       PathRule::Denied("/w/.env"), PathRule::Denied("/w/later")};
  const R read = R(kRead);
  EXPECT_TRUE(DecideAt(rules, "/w/new", read.q, read.s).allowed());
  EXPECT_TRUE(DecideAt(rules, "/w/.venv/pyvenv.cfg", read.q, read.s).allowed());
  EXPECT_TRUE(DecideAt(rules, "/w/ro/f", read.q, read.s).allowed());
  for (const char* refused : {"/w/.env", "/w/.env/x", "/w/later", "/x/f", "/w/a/../.env"}) {
    Decision d = DecideAt(rules, refused, read.q, read.s);
    EXPECT_EQ(d.verdict, Verdict::kRefuse) << refused;
    EXPECT_EQ(d.err, EACCES) << refused;
  }
}

TEST(Decide, EntryRefusalTable) {
  EntryFacts e;
  struct Case {
    K kind;
    unsigned nlink;
    bool refused;
  } cases[] = {{K::kRegular, 1, false},  {K::kRegular, 2, true},    {K::kDirectory, 5, false},
               {K::kSymlink, 1, true},   {K::kSpecial, 1, true},    {K::kAbsent, 1, false},
               {K::kUnknown, 1, false}};
  for (const Case& c : cases) {
    e.kind = c.kind;
    e.nlink = c.nlink;
    EXPECT_EQ(EntryRefusal(e) != nullptr, c.refused) << static_cast<int>(c.kind) << " " << c.nlink;
  }
}

}  // namespace
}  // namespace cordon::policy
