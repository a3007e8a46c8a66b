// A metadata change in a recoverable run (issue 27), table-tested: which
// attributes a change alters, the journal's attr records (and their
// refusal when edited into something undo must not set), and where undo
// puts old values back among the other steps. Pure, no filesystem.
#include "policy/attr_keep.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "policy/bypass.h"
#include "policy/journal_change.h"
#include "policy/undo_plan.h"
#include "tests/policy/decide_rows.h"

namespace cordon::policy {
namespace {

using K = AttrKind;

Change Attr(std::string path, uint64_t ino, OldAttr a) {
  Change c;
  c.op = ChangeOp::kAttr;
  c.path = std::move(path);
  c.ino = ino;
  c.dev = 2049;
  c.attr = std::move(a);
  return c;
}
OldAttr Mode(uint32_t m) {
  OldAttr a;
  a.mode = m;
  return a;
}
Observed At(uint64_t ino, uint64_t size = 1, int64_t mtime = 1) {
  return {true, ino, size, mtime, KeptType::kFile};
}

TEST(AttrKeepTest, WhatEachChangeAlters) {
  EXPECT_EQ(AttrsAltered(AttrOp::kMode, "", false), std::vector<K>{K::kMode});
  EXPECT_EQ(AttrsAltered(AttrOp::kOwner, "", false), std::vector<K>{K::kOwner});
  EXPECT_EQ(AttrsAltered(AttrOp::kOwner, "", true), (std::vector<K>{K::kMode, K::kOwner}))
      << "a chown clears set-id bits";
  EXPECT_EQ(AttrsAltered(AttrOp::kTimes, "", false), std::vector<K>{K::kTimes});
  EXPECT_EQ(AttrsAltered(AttrOp::kXattr, "user.k", false), std::vector<K>{K::kXattr});
  EXPECT_EQ(AttrsAltered(AttrOp::kXattr, "system.posix_acl_access", false),
            (std::vector<K>{K::kMode, K::kXattr}))
      << "the access ACL holds the permission bits";
  EXPECT_TRUE(AttrsAltered(AttrOp::kOther, "", true).empty()) << "truncate, inode flags";
  // The audit log's change record of each, as `cordon runs show` reads it back.
  EXPECT_STREQ(AttrChangeKind(AttrOp::kMode), "mode changed");
  EXPECT_STREQ(AttrChangeKind(AttrOp::kXattr), "xattr changed");
  EXPECT_EQ(AttrChangeKind(AttrOp::kOther), nullptr);
  EXPECT_TRUE(AttrChangeNamed(AttrChangeKind(AttrOp::kTimes)));
  EXPECT_FALSE(AttrChangeNamed("created"));
}

// Decide keeps the old values (Keep::kAttr) for the user's entry where the
// journal covers it, not the run's own, the private cache, a place no
// journal covers or the workspace itself; a bypass asks the same rule.
TEST(AttrKeepTest, DecideKeepsForTheUsersEntriesOnly) {
  using namespace decide_rows;
  auto keep = [](const R& r) { return Decide(r.q, r.s).keep; };
  EXPECT_EQ(keep(R(kMeta).kept()), Keep::kAttr);
  EXPECT_EQ(keep(R(kMeta, EntryKind::kDirectory).kept()), Keep::kAttr);
  EXPECT_EQ(keep(R(kMeta).kept().born()), Keep::kNothing);
  EXPECT_EQ(keep(R(kMeta).kept().cache()), Keep::kNothing);
  EXPECT_EQ(keep(R(kMeta, EntryKind::kDirectory).kept().root()), Keep::kNothing)
      << "the workspace itself: no name to record";
  R outside = R(kMeta);
  outside.s.recoverable = true;
  EXPECT_EQ(keep(outside), Keep::kNothing);
  EXPECT_FALSE(Decide(R(kMeta).prot().kept().q, R(kMeta).kept().s).allowed());
  R refused = R(kMeta).prot().kept();
  EXPECT_EQ(MetadataKeep(refused.q.entry, refused.q.place, refused.s), Keep::kAttr);
}

TEST(AttrKeepTest, RecordsRoundTrip) {
  OldAttr owner;
  owner.kind = K::kOwner;
  owner.uid = 1000;
  owner.gid = 100;
  OldAttr times;
  times.kind = K::kTimes;
  times.atime_sec = -5;  // before 1970: a time a file may have
  times.atime_nsec = 999999999;
  times.mtime_sec = 1700000000;
  OldAttr xattr;
  xattr.kind = K::kXattr;
  xattr.name = "user.k\x7f";
  xattr.present = true;
  xattr.value = std::string("v\0\xff", 3);
  OldAttr absent;
  absent.kind = K::kXattr;
  absent.name = "user.gone";
  for (const OldAttr& a : {Mode(0644), owner, times, xattr, absent}) {
    const Change c = Attr("d/f", 7, a);
    std::string why;
    auto back = ParseChangeLine(ChangeLine(c), &why);
    ASSERT_TRUE(back) << why << " " << ChangeLine(c);
    EXPECT_EQ(back->op, ChangeOp::kAttr);
    EXPECT_EQ(back->dev, 2049u);
    EXPECT_EQ(back->ino, 7u);
    EXPECT_EQ(back->attr, a) << ChangeLine(c);
  }
}

// A record undo would act on must hold a value it may set: set-id bits
// are permission bits, but a file type, an owner of -1, nanoseconds past a
// second, an xattr outside user. and the ACLs, or a value past the kernel's
// largest, are damage.
TEST(AttrKeepTest, AnEditedRecordIsRefused) {
  EXPECT_TRUE(ParseChangeLine(ChangeLine(Attr("f", 1, Mode(06755))), nullptr));
  EXPECT_FALSE(ParseChangeLine(ChangeLine(Attr("f", 1, Mode(0100644))), nullptr));
  OldAttr a;
  a.kind = K::kOwner;
  a.uid = static_cast<uint32_t>(-1);
  EXPECT_FALSE(ParseChangeLine(ChangeLine(Attr("f", 1, a)), nullptr));
  a = {};
  a.kind = K::kTimes;
  a.mtime_nsec = 1000000000;
  EXPECT_FALSE(ParseChangeLine(ChangeLine(Attr("f", 1, a)), nullptr));
  a = {};
  a.kind = K::kXattr;
  for (const char* name : {"security.capability", "trusted.x", "user.", "system.x"}) {
    a.name = name;
    EXPECT_FALSE(ParseChangeLine(ChangeLine(Attr("f", 1, a)), nullptr)) << name;
  }
  a.name = "user.k";
  a.present = true;
  a.value.assign(kMaxKeptXattr + 1, 'x');
  EXPECT_FALSE(ParseChangeLine(ChangeLine(Attr("f", 1, a)), nullptr));
  EXPECT_FALSE(ParseChangeLine(ChangeLine(Attr("../f", 1, Mode(0644))), nullptr));
  for (const char* bad :
       {R"({"op":"attr","path":"f","type":"file","ino":1,"attr":"mode","mode":420})",
        R"({"op":"attr","path":"f","type":"file","ino":1,"dev":1,"attr":"acl"})",
        R"({"op":"attr","path":"f","type":"file","ino":1,"dev":1,"attr":"mode"})"}) {
    EXPECT_FALSE(ParseChangeLine(bad, nullptr)) << bad;
  }
}

// Walked back in order: a chmod after an in-place write is set back before
// the copy is put back; one before it after (on the copy that took the
// inode's place). A rename after the change is taken back first, so the
// old value goes on the file at its old name.
TEST(AttrKeepTest, UndoSetsOldValuesBackInTheirPlaceAmongTheSteps) {
  Change copy;
  copy.op = ChangeOp::kCopy;
  copy.path = "f";
  copy.ino = 1;
  copy.slot = 1;
  NameStates now = {{"f", At(1)}};
  UndoPlan p = PlanUndo({copy, Attr("f", 1, Mode(0644))}, now, now);
  ASSERT_EQ(p.steps.size(), 2u);
  EXPECT_EQ(p.steps[0].act, UndoAct::kSetAttr);
  EXPECT_EQ(p.steps[0].attr, Mode(0644));
  EXPECT_EQ(p.steps[0].dev, 2049u);
  EXPECT_EQ(p.steps[1].act, UndoAct::kPutCopy);
  p = PlanUndo({Attr("f", 1, Mode(0644)), copy}, now, now);
  ASSERT_EQ(p.steps.size(), 2u);
  EXPECT_EQ(p.steps[0].act, UndoAct::kPutCopy);
  EXPECT_EQ(p.steps[1].act, UndoAct::kSetAttr);
  Change move;
  move.op = ChangeOp::kMove;
  move.path = "f";
  move.to = "g";
  move.ino = 1;
  now = {{"f", {}}, {"g", At(1)}};
  p = PlanUndo({Attr("f", 1, Mode(0600)), move}, now, now);
  ASSERT_EQ(p.steps.size(), 2u);
  EXPECT_EQ(p.steps[0].act, UndoAct::kMove);
  EXPECT_EQ(p.steps[1].act, UndoAct::kSetAttr);
  EXPECT_EQ(p.steps[1].path, "f");
  EXPECT_TRUE(p.conflicts.empty());
}

// Another inode at the name after the run, or the same one changed since,
// or nothing there: no step, and a conflict that says what was not set back.
TEST(AttrKeepTest, AFileChangedAfterTheRunKeepsItsAttributes) {
  const std::vector<Change> c = {Attr("f", 1, Mode(0644))};
  const NameStates end = {{"f", At(1)}};
  for (const NameStates& now :
       {NameStates{{"f", At(2)}}, NameStates{{"f", At(1, 9)}}, NameStates{{"f", {}}}}) {
    UndoPlan p = PlanUndo(c, end, now);
    EXPECT_TRUE(p.steps.empty());
    ASSERT_EQ(p.conflicts.size(), 1u);
    EXPECT_EQ(p.conflicts[0].path, "f");
    EXPECT_THAT(p.conflicts[0].why, ::testing::HasSubstr("mode 0644 not set back"));
  }
  // Untouched since the run: set back.
  EXPECT_EQ(PlanUndo(c, end, end).steps.size(), 1u);
}

}  // namespace
}  // namespace cordon::policy
