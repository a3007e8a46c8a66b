// Run ids (supervisor/journal/journal.h, NewRunId): valid ids whose start
// second parses, and that sort as their runs began even within one second,
// where the pid (which wraps, and differs in width: "9999" sorts after
// "10000") used to decide which run `cordon undo` took as the newest.
#include <gtest/gtest.h>
#include <unistd.h>

#include <ctime>
#include <string>

#include "policy/journal_run.h"
#include "supervisor/journal/journal.h"

namespace cordon::supervisor {
namespace {

TEST(RunIdTest, IdsSortAsTheirRunsBeganWithinOneSecond) {
  std::string last = NewRunId();
  ASSERT_TRUE(policy::ValidRunId(last)) << last;
  const std::optional<int64_t> started = policy::RunIdStartedS(last);
  ASSERT_TRUE(started.has_value()) << last;
  EXPECT_LE(std::abs(*started - static_cast<int64_t>(std::time(nullptr))), 2) << last;
  for (int i = 0; i < 200; ++i) {
    ::usleep(5);  // one run after another, as a script starts them
    const std::string next = NewRunId();
    EXPECT_LT(last, next) << "a later run's id sorts before an earlier one's";
    last = next;
  }
}

}  // namespace
}  // namespace cordon::supervisor
