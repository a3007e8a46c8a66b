// Run retention's decision (policy/run_retention.h), table-tested: which of
// a workspace's runs go by age, by count, both, neither; the run that is
// ending never; the oldest first and no more than asked. Also the index's
// text. Pure: made-up runs and a made-up clock.
#include "policy/run_retention.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "policy/journal_run.h"

namespace cordon::policy {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

constexpr int64_t kDay = 86400;
constexpr int64_t kNow = 1'800'000'000;

// A run `days_ago` old (the id says which, for the tables; a fact views
// its id, here a literal or a string the test keeps).
RunFact Ago(std::string_view id, int64_t days_ago) { return {id, kNow - days_ago * kDay}; }

std::vector<std::string> Ids(const std::vector<RunToRemove>& v) {
  std::vector<std::string> out;
  for (const RunToRemove& r : v) out.push_back(r.id);
  return out;
}

RetentionBound Bound(std::optional<int64_t> days, std::optional<std::size_t> runs) {
  RetentionBound b;
  if (days) b.max_age_s = *days * kDay;
  b.max_runs = runs;
  return b;
}

TEST(RetentionDecisionTest, TheTable) {
  // Five runs, 40, 31, 30, 10 and 0 days old, listed out of order.
  const std::vector<RunFact> runs = {Ago("d10", 10), Ago("d40", 40), Ago("d0", 0), Ago("d31", 31),
                                     Ago("d30", 30)};
  struct Case {
    const char* name;
    RetentionBound bound;
    std::string current;
    std::vector<std::string> removed;
  };
  const Case cases[] = {
      // Age: 30 days kept, older go; one exactly 30 days old has reached it.
      {"age", Bound(30, std::nullopt), "d0", {"d40", "d31", "d30"}},
      {"age, none old enough", Bound(60, std::nullopt), "d0", {}},
      // Count: the newest 2 stay.
      {"count", Bound(std::nullopt, 2), "d0", {"d40", "d31", "d30"}},
      {"count, fewer runs than the bound", Bound(std::nullopt, 5), "d0", {}},
      // Both: whichever lets more go.
      {"both, age decides", Bound(20, 4), "d0", {"d40", "d31", "d30"}},
      {"both, count decides", Bound(35, 1), "d0", {"d40", "d31", "d30", "d10"}},
      // Off: nothing goes, however old or many.
      {"off", Bound(std::nullopt, std::nullopt), "d0", {}},
      // The current run is never chosen, even when it is the oldest (a
      // clock set back) or the bound is 0 days, and it is always one of the
      // newest N: a run that ran long keeps its place over newer ones.
      {"current, oldest by age", Bound(30, std::nullopt), "d40", {"d31", "d30"}},
      {"current, age 0", Bound(0, std::nullopt), "d0", {"d40", "d31", "d30", "d10"}},
      {"current, older than the newest", Bound(std::nullopt, 2), "d31", {"d40", "d30", "d10"}},
      {"current, alone kept", Bound(std::nullopt, 1), "d31", {"d40", "d30", "d10", "d0"}},
      {"no current run (prune)", Bound(std::nullopt, 2), "", {"d40", "d31", "d30"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(Ids(ChooseRunsToRemove(runs, c.bound, kNow, c.current, 100)), c.removed);
  }
}

TEST(RetentionDecisionTest, SaysWhichBoundEachRunIsPast) {
  const std::vector<RunFact> runs = {Ago("d40", 40), Ago("d31", 31), Ago("d10", 10), Ago("d0", 0)};
  EXPECT_THAT(ChooseRunsToRemove(runs, Bound(30, 3), kNow, "d0", 100),
              ElementsAre(RunToRemove{"d40", true, true}, RunToRemove{"d31", true, false}));
  EXPECT_THAT(ChooseRunsToRemove(runs, Bound(35, 2), kNow, "d0", 100),
              ElementsAre(RunToRemove{"d40", true, true}, RunToRemove{"d31", false, true}));
}

TEST(RetentionDecisionTest, OldestFirstAndNoMoreThanAsked) {
  std::vector<std::string> names;
  for (int i = 0; i < 10; ++i) names.push_back("r" + std::to_string(i));
  std::vector<RunFact> runs;
  for (int i = 0; i < 10; ++i) runs.push_back(Ago(names[i], 100 - i));
  EXPECT_THAT(Ids(ChooseRunsToRemove(runs, Bound(30, std::nullopt), kNow, "", 3)),
              ElementsAre("r0", "r1", "r2"));
  EXPECT_THAT(ChooseRunsToRemove(runs, Bound(30, std::nullopt), kNow, "", 0), IsEmpty());
  // The same second: by id. An id listed twice is one run.
  const std::vector<RunFact> tied = {
      {"b", kNow - 40 * kDay}, {"a", kNow - 40 * kDay}, {"a", kNow - 40 * kDay}, {"c", kNow}};
  EXPECT_THAT(Ids(ChooseRunsToRemove(tied, Bound(std::nullopt, 1), kNow, "c", 10)),
              ElementsAre("a", "b"));
}

TEST(RetentionDecisionTest, SettingsBoundZeroTurnsABoundOff) {
  const RetentionBound d = BoundOf(RunRetention{});
  EXPECT_EQ(d.max_age_s, 30 * kDay);
  EXPECT_EQ(d.max_runs, 1000u);
  EXPECT_FALSE(RunRetention{}.off());
  const RetentionBound age_only = BoundOf(RunRetention{7, 0});
  EXPECT_EQ(age_only.max_age_s, 7 * kDay);
  EXPECT_EQ(age_only.max_runs, std::nullopt);
  const RetentionBound none = BoundOf(RunRetention{0, 0});
  EXPECT_EQ(none.max_age_s, std::nullopt);
  EXPECT_EQ(none.max_runs, std::nullopt);
  EXPECT_TRUE((RunRetention{0, 0}.off()));
}

std::vector<std::string> IdsOf(const std::vector<RunFact>& runs) {
  std::vector<std::string> out;
  for (const RunFact& r : runs) out.emplace_back(r.id);
  return out;
}

TEST(RetentionDecisionTest, TheIndexTextRoundTripsAndDropsWhatIsNotARun) {
  const std::string ws = "/home/u/project";
  const std::vector<std::string> ids = {"20261207T022100Z-8383", "20261207T022101Z-8390"};
  std::vector<RunFact> runs;
  for (const std::string& id : ids) runs.push_back(*FactOfId(id));
  EXPECT_EQ(runs[0].started_s, RunIdStartedS(ids[0]));
  const std::string text = RunIndexText(ws, runs);
  auto parsed = ParseRunIndex(text, ws);
  ASSERT_TRUE(parsed);
  EXPECT_EQ(IdsOf(*parsed), ids);
  EXPECT_EQ((*parsed)[1].started_s, runs[1].started_s);
  EXPECT_EQ(IdsOf(RunIndexRuns(text)), ids);
  EXPECT_EQ(RunIndexKey(ws).size(), 32u);
  EXPECT_NE(RunIndexKey(ws), RunIndexKey(ws + "2"));
  // Another workspace's header, or none: not this workspace's index.
  EXPECT_EQ(ParseRunIndex(text, "/home/u/other"), std::nullopt);
  EXPECT_EQ(ParseRunIndex(ids[0] + "\n", ws), std::nullopt);
  EXPECT_TRUE(RunIndexRuns(ids[0] + "\n").empty());
  // A line that is no run id, one without a time, and a torn last line are
  // dropped; a line twice is one run to the decision.
  const std::string messy = RunIndexText(ws, {}) + "../../etc\n" + "plain-id\n" + ids[0] + "\n" +
                            ids[0] + "\n" + ids[1] + "\n" + "20261207T0221";
  parsed = ParseRunIndex(messy, ws);
  ASSERT_TRUE(parsed);
  EXPECT_EQ(IdsOf(*parsed), (std::vector<std::string>{ids[0], ids[0], ids[1]}));
  EXPECT_EQ(ChooseRunsToRemove(*parsed, Bound(std::nullopt, 1), kNow, "", 10).size(), 1u);
  EXPECT_EQ(FactOfId("plain-id"), std::nullopt);
  EXPECT_EQ(FactOfId("../../etc"), std::nullopt);
}

}  // namespace
}  // namespace cordon::policy
