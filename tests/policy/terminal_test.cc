// policy/terminal: which pseudo-terminal paths are the tool's own.
#include "policy/terminal.h"

#include <gtest/gtest.h>

namespace cordon::policy {
namespace {

TEST(Terminal, ParsesTheDevicePaths) {
  struct Row {
    const char* path;
    TerminalKind kind;
    int number;
  } rows[] = {
      {"/dev/ptmx", TerminalKind::kMaster, -1},
      {"/dev/pts/ptmx", TerminalKind::kMaster, -1},
      {"/dev/pts/0", TerminalKind::kSubsidiary, 0},
      {"/dev/pts/17", TerminalKind::kSubsidiary, 17},
      {"/dev/pts/", TerminalKind::kNone, -1},
      {"/dev/pts/01", TerminalKind::kNone, -1},
      {"/dev/pts/1a", TerminalKind::kNone, -1},
      {"/dev/pts/1/", TerminalKind::kNone, -1},
      {"/dev/pts/../null", TerminalKind::kNone, -1},
      {"/dev/pts/99999999999", TerminalKind::kNone, -1},
      {"/dev/tty", TerminalKind::kControlling, -1},
      {"/dev/tty0", TerminalKind::kNone, -1},
      {"/dev/ttyS0", TerminalKind::kNone, -1},
      {"/dev/ptmx2", TerminalKind::kNone, -1},
      {"dev/ptmx", TerminalKind::kNone, -1},
      {"/dev/null", TerminalKind::kNone, -1},
  };
  for (const Row& r : rows) {
    TerminalPath t = ParseTerminalPath(r.path);
    EXPECT_EQ(t.kind, r.kind) << r.path;
    EXPECT_EQ(t.number, r.number) << r.path;
  }
  EXPECT_EQ(ParseTerminalPath(nullptr).kind, TerminalKind::kNone);
}

TEST(Terminal, OnlyTheToolsOwnHeldPairs) {
  const TerminalPath master{TerminalKind::kMaster, -1};
  const TerminalPath pts{TerminalKind::kSubsidiary, 3};
  EXPECT_EQ(TerminalRefusal(master, false, false), nullptr) << "every ptmx open is a new pair";
  EXPECT_EQ(TerminalRefusal(pts, true, true), nullptr) << "made in the run, master held";
  EXPECT_NE(TerminalRefusal(pts, false, true), nullptr) << "the caller's terminal";
  EXPECT_NE(TerminalRefusal(pts, false, false), nullptr);
  EXPECT_NE(TerminalRefusal(pts, true, false), nullptr) << "master closed: a reused number";
  EXPECT_NE(TerminalRefusal(TerminalPath{}, true, true), nullptr);
}

}  // namespace
}  // namespace cordon::policy
