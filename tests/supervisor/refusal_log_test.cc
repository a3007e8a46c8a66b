// supervisor/refusal_log: each distinct refusal said once, the first ten at
// the default level, then a count; every one at info level.
#include "supervisor/refusal_log.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <memory>
#include <sstream>
#include <string>

namespace cordon::supervisor {
namespace {

using ::testing::HasSubstr;

// Logs into a string for the test's life, at `level`.
class CapturedLog {
 public:
  explicit CapturedLog(spdlog::level::level_enum level) : old_(spdlog::default_logger()) {
    auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(out_);
    sink->set_pattern("%v");
    auto logger = std::make_shared<spdlog::logger>("capture", sink);
    logger->set_level(level);
    spdlog::set_default_logger(logger);
  }
  ~CapturedLog() { spdlog::set_default_logger(old_); }
  std::string text() const { return out_.str(); }
  size_t lines() const {
    std::string t = out_.str();
    return static_cast<size_t>(std::count(t.begin(), t.end(), '\n'));
  }

 private:
  std::shared_ptr<spdlog::logger> old_;
  std::ostringstream out_;
};

TEST(RefusalLog, SaysEachDistinctRefusalOnceWithItsHint) {
  CapturedLog log(spdlog::level::warn);
  RefusalLog refusals;
  for (int i = 0; i < 5; ++i) refusals.Refused("openat: read /opt/x (outside)", "to allow it: --ro /opt/x");
  refusals.Refused("unlinkat: delete /w/old (needs approval)", "");
  refusals.Finish(false);
  EXPECT_EQ(log.lines(), 2u) << log.text();
  EXPECT_THAT(log.text(), HasSubstr("refused openat: read /opt/x (outside); to allow it: --ro /opt/x\n"));
  EXPECT_THAT(log.text(), HasSubstr("refused unlinkat: delete /w/old (needs approval)\n"));
}

TEST(RefusalLog, StopsAtTenLinesAndCountsTheRestAtTheDefaultLevel) {
  CapturedLog log(spdlog::level::warn);
  RefusalLog refusals;
  for (int i = 0; i < 25; ++i) refusals.Refused("read /x/" + std::to_string(i), "");
  EXPECT_EQ(log.lines(), RefusalLog::kDefaultLines);
  refusals.Finish(false);
  EXPECT_EQ(log.lines(), RefusalLog::kDefaultLines + 1);
  EXPECT_THAT(log.text(), HasSubstr("15 more refusals not shown; --log-level info lists each"));
}

TEST(RefusalLog, ListsEveryDistinctRefusalAtInfoLevel) {
  CapturedLog log(spdlog::level::info);
  RefusalLog refusals;
  for (int i = 0; i < 25; ++i) refusals.Refused("read /x/" + std::to_string(i), "");
  refusals.Refused("read /x/3", "");
  refusals.Finish(false);
  EXPECT_EQ(log.lines(), 25u) << log.text();
}

// A refusal an honest tool meets without harm (a resolver's name server
// under network none) is said at the run's end, and only when the tool
// failed; at info level at once, as any other.
TEST(RefusalLog, AHarmlessRefusalIsSaidOnlyWhenTheToolFailed) {
  const std::string what = "connect: connect to 10.0.0.53:53 under network none";
  {
    CapturedLog log(spdlog::level::warn);
    RefusalLog refusals;
    refusals.RefusedIfFailed(what, "--network allow opens the network");
    EXPECT_EQ(log.lines(), 0u);
    refusals.Finish(false);
    EXPECT_EQ(log.lines(), 0u) << log.text();
  }
  {
    CapturedLog log(spdlog::level::warn);
    RefusalLog refusals;
    refusals.RefusedIfFailed(what, "--network allow opens the network");
    refusals.RefusedIfFailed(what, "--network allow opens the network");
    refusals.Finish(true);
    EXPECT_EQ(log.text(), "refused " + what + "; --network allow opens the network\n");
  }
  {
    CapturedLog log(spdlog::level::info);
    RefusalLog refusals;
    refusals.RefusedIfFailed(what, "");
    EXPECT_EQ(log.lines(), 1u);
    refusals.Finish(false);
    EXPECT_EQ(log.lines(), 1u);
  }
}

}  // namespace
}  // namespace cordon::supervisor
