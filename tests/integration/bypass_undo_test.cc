// A bypass in a recoverable run (sensitive.delete: recoverable, the
// default) keeps what it removes or replaces in the run's journal, as an
// allowed change does: `cordon undo` takes it back. The real cordon and
// probe (dynamic and static), the disk read after the run and after undo.
#include <gtest/gtest.h>

#include <cerrno>
#include <string>
#include <vector>

#include "tests/integration/bypass_fixture.h"
#include "tests/support/test_env.h"

namespace cordon::testing {
namespace {

class BypassUndoTest : public UndoFixture {};

TEST_P(BypassUndoTest, AnUnlinkIsKeptAndUndone) {
  const std::string allow = Rules(R"([{"glob": "key.pem", "op": "bypass-unlink"}])");
  ASSERT_EQ(RunKept(allow, {"unlink", "key.pem"}), 0) << last_.err;
  EXPECT_FALSE(Exists(t_.Ws("key.pem")));
  EXPECT_EQ(Decisions("bypassed"), 1);
  RunResult undo = Undo();
  EXPECT_EQ(undo.status, 0) << undo.out << undo.err;
  EXPECT_EQ(ReadFile(t_.Ws("key.pem")), "key\n");
  // The neighbour the rule does not cover: refused, and there.
  EXPECT_EQ(RunKept(allow, {"unlink", "other.pem"}), EACCES) << last_.err;
  EXPECT_EQ(ReadFile(t_.Ws("other.pem")), "other\n");
}

TEST_P(BypassUndoTest, AFileARenameReplacesIsKeptAndUndone) {
  WriteFile(t_.Ws(".gitmodules.new"), "[submodule \"x\"]\n");
  const std::string allow = Rules(R"([{"glob": ".gitmodules*", "op": "bypass-rename"}])");
  ASSERT_EQ(RunKept(allow, {"rename", ".gitmodules.new", ".gitmodules"}), 0) << last_.err;
  EXPECT_EQ(ReadFile(t_.Ws(".gitmodules")), "[submodule \"x\"]\n");
  RunResult undo = Undo();
  EXPECT_EQ(undo.status, 0) << undo.out << undo.err;
  EXPECT_EQ(ReadFile(t_.Ws(".gitmodules")), kModules);
  EXPECT_EQ(ReadFile(t_.Ws(".gitmodules.new")), "[submodule \"x\"]\n");
}

TEST_P(BypassUndoTest, AFileWrittenInPlaceIsCopiedAndUndone) {
  const std::string allow = Rules(R"([{"glob": ".gitmodules", "op": "bypass-open"}])");
  ASSERT_EQ(RunKept(allow, {"overwrite", ".gitmodules"}), 0) << last_.err;
  EXPECT_EQ(ReadFile(t_.Ws(".gitmodules")), "probe\n");
  RunResult undo = Undo();
  EXPECT_EQ(undo.status, 0) << undo.out << undo.err;
  EXPECT_EQ(ReadFile(t_.Ws(".gitmodules")), kModules);
}

INSTANTIATE_TEST_SUITE_P(Probes, BypassUndoTest, ::testing::Values(PROBE_DYNAMIC, PROBE_STATIC),
                         ProbeKindName);

}  // namespace
}  // namespace cordon::testing
