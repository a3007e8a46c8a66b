// The undo planner and the journal's record format (issue 26), table-tested:
// pure, no filesystem. Each rule has a case that breaks without it.
#include "policy/undo_plan.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "policy/journal_change.h"
#include "policy/journal_run.h"

namespace cordon::policy {
namespace {

Change Save(std::string path, uint64_t ino, uint64_t slot) {
  Change c;
  c.op = ChangeOp::kSave;
  c.path = std::move(path);
  c.ino = ino;
  c.slot = slot;
  c.why = "delete";
  return c;
}
Change Op(ChangeOp op, std::string path, uint64_t ino, std::string to = {}) {
  Change c;
  c.op = op;
  c.path = std::move(path);
  c.to = std::move(to);
  c.ino = ino;
  return c;
}
Observed At(uint64_t ino, uint64_t size = 1, int64_t mtime = 1) {
  return {true, ino, size, mtime, KeptType::kFile};
}

// git writes its index: index.lock made, the old index kept, the lock
// renamed over it; again with the run's own index dropped.
std::vector<Change> TwoIndexWrites() {
  return {Op(ChangeOp::kCreate, ".git/index.lock", 2), Save(".git/index", 1, 1),
          Op(ChangeOp::kMove, ".git/index.lock", 2, ".git/index"),
          Op(ChangeOp::kCreate, ".git/index.lock", 3), Op(ChangeOp::kDrop, ".git/index", 2),
          Op(ChangeOp::kMove, ".git/index.lock", 3, ".git/index")};
}

TEST(UndoPlanTest, TwoIndexWritesComeBackToTheFirstIndex) {
  NameStates now = {{".git/index", At(3)}, {".git/index.lock", {}}};
  UndoPlan p = PlanUndo(TwoIndexWrites(), now, now);
  EXPECT_TRUE(p.conflicts.empty());
  ASSERT_EQ(p.steps.size(), 3u);
  EXPECT_EQ(p.steps[0].act, UndoAct::kMove);    // index (3) back to index.lock
  EXPECT_EQ(p.steps[1].act, UndoAct::kRemove);  // index.lock (3) removed
  EXPECT_EQ(p.steps[2].act, UndoAct::kRestore); // slot 1 back to index
  EXPECT_EQ(p.steps[2].path, ".git/index");
  EXPECT_EQ(p.steps[2].slot, 1u);
}

TEST(UndoPlanTest, ADirectoryEmptiedPiecewiseComesBackBeforeItsFiles) {
  std::vector<Change> c = {Save("build/a.o", 5, 1), Save("build", 4, 2)};
  UndoPlan p = PlanUndo(c, NameStates{}, NameStates{{"build", {}}, {"build/a.o", {}}});
  ASSERT_EQ(p.steps.size(), 2u);
  EXPECT_EQ(p.steps[0].path, "build");
  EXPECT_EQ(p.steps[1].path, "build/a.o");
}

TEST(UndoPlanTest, ANameChangedAfterTheRunIsNeverClobbered) {
  std::vector<Change> c = {Save("f", 1, 1), Op(ChangeOp::kCreate, "f", 2)};
  NameStates end = {{"f", At(2, 10, 100)}};
  // The user edited the run's f after the run: size and mtime differ.
  UndoPlan p = PlanUndo(c, end, {{"f", At(2, 12, 200)}});
  EXPECT_TRUE(p.steps.empty());
  ASSERT_EQ(p.conflicts.size(), 1u);
  EXPECT_EQ(p.conflicts[0].path, "f");
  EXPECT_EQ(p.conflicts[0].slot, std::optional<uint64_t>(1));
  // Untouched since: removed, then the old one restored.
  p = PlanUndo(c, end, end);
  EXPECT_TRUE(p.conflicts.empty());
  EXPECT_EQ(p.steps.size(), 2u);
}

TEST(UndoPlanTest, SomethingNewWhereTheRunLeftNothingIsKept) {
  std::vector<Change> c = {Save("f", 1, 1)};
  UndoPlan p = PlanUndo(c, NameStates{{"f", {}}}, {{"f", At(9)}});
  EXPECT_TRUE(p.steps.empty());
  ASSERT_EQ(p.conflicts.size(), 1u);
  // Without a seal (a run that did not end) what is there now is the end.
  p = PlanUndo(c, std::nullopt, {{"f", At(9)}});
  EXPECT_TRUE(p.steps.empty());
  EXPECT_EQ(p.conflicts.size(), 1u);
}

TEST(UndoPlanTest, ARunEntryTheUserRemovedIsAGhost) {
  std::vector<Change> c = {Save("f", 1, 1), Op(ChangeOp::kCreate, "f", 2)};
  UndoPlan p = PlanUndo(c, NameStates{{"f", At(2)}}, {{"f", {}}});
  EXPECT_TRUE(p.conflicts.empty());
  ASSERT_EQ(p.steps.size(), 1u);
  EXPECT_EQ(p.steps[0].act, UndoAct::kRestore);
}

TEST(UndoPlanTest, AnInPlaceCopyIsPutBackOverTheSameInode) {
  std::vector<Change> c = {Op(ChangeOp::kCopy, "log", 7)};
  c[0].slot = 3;
  UndoPlan p = PlanUndo(c, NameStates{{"log", At(7)}}, {{"log", At(7)}});
  ASSERT_EQ(p.steps.size(), 1u);
  EXPECT_EQ(p.steps[0].act, UndoAct::kPutCopy);
  // Another inode there now: kept, with the copy's slot named.
  p = PlanUndo(c, NameStates{{"log", At(7)}}, {{"log", At(8)}});
  EXPECT_TRUE(p.steps.empty());
  EXPECT_EQ(p.conflicts.at(0).slot, std::optional<uint64_t>(3));
}

TEST(UndoPlanTest, AnExchangeIsExchangedBack) {
  Change s = Op(ChangeOp::kSwap, "a", 1, "b");
  s.other_ino = 2;
  NameStates now = {{"a", At(2)}, {"b", At(1)}};
  UndoPlan p = PlanUndo({s}, now, now);
  ASSERT_EQ(p.steps.size(), 1u);
  EXPECT_EQ(p.steps[0].act, UndoAct::kSwap);
}

// A directory made, filled, then renamed: its entries are found, and taken
// back, where the rename put them.
TEST(UndoPlanTest, ADirectoryRenamedCarriesItsEntries) {
  Change mk = Op(ChangeOp::kCreate, "a", 1);
  mk.type = KeptType::kDir;
  Change mv = Op(ChangeOp::kMove, "a", 1, "b");
  mv.type = KeptType::kDir;
  std::vector<Change> c = {mk, Op(ChangeOp::kCreate, "a/x", 2), Save("keep.txt", 9, 1), mv,
                           Op(ChangeOp::kCreate, "b/y", 3)};
  EXPECT_EQ(NamesOf(c), (std::vector<std::string>{"b", "b/x", "b/y", "keep.txt"}));
  Observed dir = At(1);
  dir.type = KeptType::kDir;
  NameStates now = {{"b", dir}, {"b/x", At(2)}, {"b/y", At(3)}, {"keep.txt", {}}};
  UndoPlan p = PlanUndo(c, now, now);
  EXPECT_TRUE(p.conflicts.empty()) << p.conflicts[0].path << ": " << p.conflicts[0].why;
  ASSERT_EQ(p.steps.size(), 5u);
  EXPECT_EQ(p.steps[0].path, "b/y");   // removed
  EXPECT_EQ(p.steps[1].path, "b");     // moved back to a
  EXPECT_EQ(p.steps[1].to, "a");
  EXPECT_EQ(p.steps[2].path, "keep.txt");
  EXPECT_EQ(p.steps[3].path, "a/x");   // removed where it is now
  EXPECT_EQ(p.steps[4].path, "a");
  // The user edited b/x after the run: kept, and so is the directory holding it.
  NameStates edited = now;
  edited["b/x"] = At(2, 99, 99);
  p = PlanUndo(c, now, edited);
  ASSERT_FALSE(p.conflicts.empty());
  EXPECT_EQ(p.conflicts[0].path, "a/x");
}

TEST(JournalChangeTest, LinesRoundTrip) {
  for (const Change& c : TwoIndexWrites()) {
    std::string why;
    auto back = ParseChangeLine(ChangeLine(c), &why);
    ASSERT_TRUE(back) << why;
    EXPECT_EQ(back->path, c.path);
    EXPECT_EQ(back->to, c.to);
    EXPECT_EQ(back->ino, c.ino);
    EXPECT_EQ(back->op, c.op);
  }
}

TEST(JournalChangeTest, ARecordNamingAnythingOutsideTheWorkspaceIsRefused) {
  for (const char* path : {"/etc/passwd", "../x", "a/../../x", "a/./b", "a//b", "", ".", "a/"}) {
    Change c = Save(path, 1, 1);
    std::string why;
    EXPECT_FALSE(ParseChangeLine(ChangeLine(c), &why)) << path;
  }
  Change m = Op(ChangeOp::kMove, "a", 1, "../../etc/x");
  EXPECT_FALSE(ParseChangeLine(ChangeLine(m), nullptr));
  for (const char* bad : {"", "{}", "[1]", R"({"op":"save","path":"a","type":"file","ino":1})",
                          R"({"op":"nuke","path":"a","type":"file","ino":1})",
                          R"({"op":"create","path":"a","type":"file","ino":-1})"}) {
    EXPECT_FALSE(ParseChangeLine(bad, nullptr)) << bad;
  }
}

TEST(JournalRunTest, MetaAndEndRoundTripAndRunIdsAreNames) {
  RunMeta m{"20261206T071500Z-12", "/w", 1, 2, 3, {"git", "checkout"}};
  auto back = ParseMeta(MetaJson(m), nullptr);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->argv, m.argv);
  RunEnd e;
  e.names = {{"a", At(5)}, {"b", {}}};
  auto end = ParseEnd(EndJson(e), nullptr);
  ASSERT_TRUE(end);
  EXPECT_EQ(end->names, e.names);
  EXPECT_FALSE(ValidRunId("../x"));
  EXPECT_FALSE(ValidRunId("a/b"));
  EXPECT_FALSE(ValidRunId(""));
  EXPECT_TRUE(ValidRunId("20261206T071500Z-12"));
}

// A run's name says when it began (UTC seconds), checked against `date -u
// -d 2026-12-06T07:15:00 +%s` and the epoch; other shapes say nothing.
TEST(RunIdStartedS, ReadsTheUtcStartFromTheName) {
  EXPECT_EQ(RunIdStartedS("20261206T071500Z-12"), 1796541300);
  EXPECT_EQ(RunIdStartedS("19700101T000000Z-1"), 0);
  EXPECT_EQ(RunIdStartedS("20000229T235959Z-7"), 951868799);
  EXPECT_EQ(RunIdStartedS("run-12"), std::nullopt);
  EXPECT_EQ(RunIdStartedS("20261306T071500Z-12"), std::nullopt) << "month 13";
  EXPECT_EQ(RunIdStartedS("2026120xT071500Z-12"), std::nullopt);
}

}  // namespace
}  // namespace cordon::policy

namespace cordon::policy {
namespace {

TEST(JournalChangeTest, AnyBytesInANameRoundTrip) {
  Change c = Save(std::string("d\xff/n%a\nme"), 1, 1);
  auto back = ParseChangeLine(ChangeLine(c), nullptr);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->path, c.path);
  EXPECT_FALSE(UnescapeBytes("%G0"));
  EXPECT_FALSE(UnescapeBytes("%4"));
}

}  // namespace
}  // namespace cordon::policy
