#include "policy/fs_plan.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>

namespace cordon::policy {
namespace {

using ::testing::UnorderedElementsAre;

// A fake directory tree: dir -> entries.
DirLister Tree(std::map<std::string, std::vector<std::string>> t) {
  return [t](const std::string& d) {
    auto it = t.find(d);
    return it == t.end() ? std::vector<std::string>{} : it->second;
  };
}

std::vector<std::string> Paths(const std::vector<Grant>& g, bool list_only) {
  std::vector<std::string> out;
  for (const auto& x : g) {
    if (x.list_only == list_only) out.push_back(x.path);
  }
  return out;
}

TEST(PlanGrants, WithoutDenialsEachRuleIsOneGrant) {
  auto g = PlanGrants({PathRule::ReadOnly("/usr"), PathRule::ReadWrite("/w")}, Tree({}));
  ASSERT_EQ(g.size(), 2u);
  EXPECT_EQ(g[1].access, Access::kReadWrite);
  EXPECT_FALSE(g[1].list_only);
}

TEST(PlanGrants, DenialInsideAllowedDirectoryGrantsOnlyTheSiblings) {
  auto list = Tree({{"/w", {"a", "b", "secret"}}, {"/w/b", {"x", "y"}}});
  auto g = PlanGrants({PathRule::ReadWrite("/w"), PathRule::Denied("/w/secret")}, list);
  EXPECT_THAT(Paths(g, false), UnorderedElementsAre("/w/a", "/w/b"));
  EXPECT_THAT(Paths(g, true), UnorderedElementsAre("/w"));
  for (const auto& x : g) EXPECT_NE(x.path, "/w/secret");
}

TEST(PlanGrants, DeepDenialExpandsEveryLevelOnTheWay) {
  auto list = Tree({{"/etc", {"passwd", "ssh"}}, {"/etc/ssh", {"ssh_config", "ssh_host_rsa_key"}}});
  auto g = PlanGrants(
      {PathRule::ReadOnly("/etc"), PathRule::Denied("/etc/ssh/ssh_host_rsa_key")}, list);
  EXPECT_THAT(Paths(g, false), UnorderedElementsAre("/etc/passwd", "/etc/ssh/ssh_config"));
  EXPECT_THAT(Paths(g, true), UnorderedElementsAre("/etc", "/etc/ssh"));
}

TEST(PlanGrants, DenialOfTheRuleItselfRemovesIt) {
  auto g = PlanGrants({PathRule::ReadOnly("/opt"), PathRule::Denied("/opt")}, Tree({}));
  EXPECT_TRUE(g.empty());
}

TEST(PlanGrants, MoreSpecificAllowInsideDenialWins) {
  auto list = Tree({{"/w", {"secret", "a"}}, {"/w/secret", {"pub", "priv"}}});
  auto g = PlanGrants({PathRule::ReadWrite("/w"), PathRule::Denied("/w/secret"),
                       PathRule::ReadOnly("/w/secret/pub")},
                      list);
  EXPECT_THAT(Paths(g, false), UnorderedElementsAre("/w/a", "/w/secret/pub"));
}

TEST(PlanGrants, DenialOutsideEveryRuleChangesNothing) {
  auto g = PlanGrants({PathRule::ReadOnly("/usr"), PathRule::Denied("/home/x")}, Tree({}));
  EXPECT_THAT(Paths(g, false), UnorderedElementsAre("/usr"));
}

}  // namespace
}  // namespace cordon::policy
