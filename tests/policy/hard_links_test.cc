// policy/hard_links.h: which hard-linked and special files the read grant
// leaves out, from the facts the launch scan gathered (no filesystem here).
#include "policy/hard_links.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "policy/policy.h"
#include "policy/policy_digest.h"
#include "policy/policy_parser.h"

namespace cordon::policy {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

ScannedEntry Linked(std::string path, std::uint64_t ino, std::uint64_t nlink) {
  return {std::move(path), ScannedKind::kLinkedFile, 1, ino, nlink};
}

std::vector<std::string> Paths(const std::vector<RefusedEntry>& v) {
  std::vector<std::string> out;
  for (const RefusedEntry& e : v) out.push_back(e.path);
  return out;
}

TEST(RefusedEntries, RefuseLeavesOutEveryLinkedFileEveryDeviceAndEveryFifo) {
  const std::vector<ScannedEntry> entries = {
      Linked("/ws/out", 7, 2),  // its other name is outside
      Linked("/ws/a", 8, 2), Linked("/ws/b", 8, 2),  // both names inside
      {"/ws/dev/null", ScannedKind::kCharDevice, 0, 9, 1},
      {"/ws/dev/sda", ScannedKind::kBlockDevice, 0, 10, 1},
      {"/ws/fifo", ScannedKind::kFifo, 0, 11, 1},
      {"/ws/sock", ScannedKind::kSocket, 0, 12, 1}};
  std::vector<RefusedEntry> r = RefusedEntries(HardLinks::kRefuse, entries);
  // The socket stays: connecting to it is the supervisor's decision.
  EXPECT_THAT(Paths(r), ElementsAre("/ws/a", "/ws/b", "/ws/dev/null", "/ws/dev/sda", "/ws/fifo",
                                    "/ws/out"));
  EXPECT_THAT(r[5].why, HasSubstr("hard link: 2 names, 1 found in the workspace"));
  EXPECT_THAT(r[2].why, HasSubstr("character device"));
  EXPECT_THAT(r[4].why, HasSubstr("FIFO"));
  // Which of them inside-workspace would keep, and the source its rule says.
  EXPECT_TRUE(r[0].names_inside);
  EXPECT_STREQ(r[0].Source(), kInsideLinkSource);
  EXPECT_FALSE(r[5].names_inside);
  EXPECT_STREQ(r[5].Source(), kRefusedEntrySource);
  EXPECT_FALSE(r[4].names_inside) << "a FIFO is refused under both values";
  Policy p;
  p.workspace = "/ws";
  p.refused_entries = r;
  const std::vector<PathRule> rules = EffectiveRules(p, "");
  EXPECT_EQ(CoverPath(rules, "/ws/a", true).why, std::string(kInsideLinkSource));
  EXPECT_EQ(CoverPath(rules, "/ws/out", true).why, std::string(kRefusedEntrySource));
}

TEST(RefusedEntries, InsideWorkspaceKeepsOnlyLinksWhoseEveryNameWasFound) {
  const std::vector<ScannedEntry> entries = {
      Linked("/ws/out", 7, 2),
      Linked("/ws/a", 8, 2), Linked("/ws/b", 8, 2),
      // Three names, two found: the third is outside (or unseen).
      Linked("/ws/c", 9, 3), Linked("/ws/d", 9, 3),
      // The same inode number on another device is another file.
      {"/ws/mnt/e", ScannedKind::kLinkedFile, 2, 8, 2},
      {"/ws/fifo", ScannedKind::kFifo, 0, 11, 1}};
  EXPECT_THAT(Paths(RefusedEntries(HardLinks::kInsideWorkspace, entries)),
              ElementsAre("/ws/c", "/ws/d", "/ws/fifo", "/ws/mnt/e", "/ws/out"));
}

TEST(RefusedEntries, NothingFoundRefusesNothing) {
  EXPECT_THAT(RefusedEntries(HardLinks::kRefuse, {}), IsEmpty());
}

TEST(OtherNamesOfMatches, TheOtherNamesOfALinkedMatchAreDeniedWithIt) {
  const std::vector<ScannedEntry> entries = {Linked("/ws/.env", 8, 2), Linked("/ws/notes.txt", 8, 2),
                                             Linked("/ws/x", 9, 2), Linked("/ws/y", 9, 2)};
  EXPECT_THAT(OtherNamesOfMatches({"/ws/.env"}, entries), ElementsAre("/ws/notes.txt"));
  EXPECT_THAT(OtherNamesOfMatches({}, entries), IsEmpty());
}

TEST(HardLinksSetting, ParsesBothValuesAndRefusesAnythingElse) {
  Policy def;
  EXPECT_THAT(ParsePolicy(R"({})", def), IsEmpty());
  EXPECT_EQ(def.hard_links, HardLinks::kRefuse);
  Policy in;
  EXPECT_THAT(ParsePolicy(R"({"hardLinks":"inside-workspace"})", in), IsEmpty());
  EXPECT_EQ(in.hard_links, HardLinks::kInsideWorkspace);
  Policy bad;
  std::vector<PolicyError> errors = ParsePolicy(R"({"hardLinks":"allow"})", bad);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].pointer, "/hardLinks");
  EXPECT_THAT(errors[0].message, HasSubstr("\"refuse\" or \"inside-workspace\""));
}

TEST(HardLinksSetting, RefusedEntriesAreDeniedRules) {
  Policy p;
  p.workspace = "/ws";
  p.profile = Profile::kWorkspaceWrite;
  p.refused_entries = {{"/ws/out", "hard link"}};
  const std::vector<PathRule> rules = EffectiveRules(p, "");
  const PathRule* r = CoveringRule(rules, "/ws/out");
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->access, Access::kDenied);
  EXPECT_EQ(r->source, kRefusedEntrySource);
  EXPECT_EQ(CoveringRule(rules, "/ws/plain")->access, Access::kReadWrite);
}

TEST(HardLinksSetting, TheSettingChangesTheDigestAndWhatWasFoundDoesNot) {
  Policy p;
  p.workspace = "/ws";
  const std::string before = PolicyDigest(p);
  p.refused_entries = {{"/ws/out", "hard link"}};  // the workspace's contents, not the policy
  EXPECT_EQ(PolicyDigest(p), before);
  p.hard_links = HardLinks::kInsideWorkspace;
  EXPECT_NE(PolicyDigest(p), before);
}

}  // namespace
}  // namespace cordon::policy
