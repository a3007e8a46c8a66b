#include "policy/fs_plan.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <map>

#include "tests/support/test_env.h"

namespace cordon::policy {
namespace {

using ::testing::UnorderedElementsAre;

// A fake directory tree: dir -> entries (their type unknown, as for a
// filesystem without d_type).
DirLister Tree(std::map<std::string, std::vector<std::string>> t) {
  return [t](const std::string& d) {
    std::vector<DirEntry> out;
    if (auto it = t.find(d); it != t.end()) {
      for (const std::string& name : it->second) out.push_back({name});
    }
    return out;
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

Access AccessOf(const std::vector<Grant>& g, const std::string& path) {
  for (const auto& x : g) {
    if (x.path == path && !x.list_only) return x.access;
  }
  return Access::kDenied;  // not granted
}

TEST(PlanGrants, ReadOnlyRuleInsideReadWriteIsCarvedOut) {
  auto list = Tree({{"/w", {".git", "src"}}, {"/w/.git", {"config", "hooks", "objects"}}});
  auto g = PlanGrants({PathRule::ReadWrite("/w"), PathRule::ReadOnly("/w/.git/hooks"),
                       PathRule::ReadOnly("/w/.git/config")},
                      list);
  // Without the carve, /w's read-write grant would cover the hooks.
  for (const auto& x : g) {
    if (x.path == "/w") {
      EXPECT_EQ(x.access, Access::kReadOnly) << "parent must not be rw";
    }
  }
  EXPECT_EQ(AccessOf(g, "/w/.git/hooks"), Access::kReadOnly);
  EXPECT_EQ(AccessOf(g, "/w/.git/config"), Access::kReadOnly);
  EXPECT_EQ(AccessOf(g, "/w/.git"), Access::kReadOnly);
  EXPECT_EQ(AccessOf(g, "/w/.git/objects"), Access::kReadWrite) << "the honest sibling";
  EXPECT_EQ(AccessOf(g, "/w/src"), Access::kReadWrite);
  for (const auto& x : g) {
    if (x.path == "/w/.git/hooks") {
      EXPECT_NE(x.access, Access::kReadWrite);
    }
  }
}

TEST(PlanGrants, ReadOnlyInsideReadOnlyChangesNothing) {
  auto g = PlanGrants({PathRule::ReadOnly("/u"), PathRule::ReadOnly("/u/x")}, Tree({}));
  EXPECT_THAT(Paths(g, false), UnorderedElementsAre("/u", "/u/x"));
}

TEST(PlanGrants, DenialBelowAReadOnlyHoleStaysDenied) {
  auto list = Tree({{"/w", {"ro", "b"}}, {"/w/ro", {"secret", "pub"}}});
  auto g = PlanGrants({PathRule::ReadWrite("/w"), PathRule::ReadOnly("/w/ro"),
                       PathRule::Denied("/w/ro/secret")},
                      list);
  for (const auto& x : g) EXPECT_NE(x.path, "/w/ro/secret");
  EXPECT_EQ(AccessOf(g, "/w/ro/pub"), Access::kReadOnly);
  EXPECT_EQ(AccessOf(g, "/w/b"), Access::kReadWrite);
}

TEST(PlanGrants, EntriesCarryTheListingsType) {
  DirLister list = [](const std::string& d) {
    std::vector<DirEntry> out;
    if (d == "/w") out = {{"d", EntryType::kDirectory}, {"f", EntryType::kOther}, {"s"}};
    return out;
  };
  auto g = PlanGrants({PathRule::ReadWrite("/w"), PathRule::Denied("/w/s")}, list);
  ASSERT_EQ(g.size(), 3u);
  EXPECT_EQ(g[0].path, "/w");
  EXPECT_EQ(g[0].type, EntryType::kDirectory);
  EXPECT_EQ(g[1].type, EntryType::kDirectory);
  EXPECT_EQ(g[2].type, EntryType::kOther);
}

}  // namespace
}  // namespace cordon::policy
