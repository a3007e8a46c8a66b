// The one rule lookup (policy/rule_lookup.h) and the three places that ask
// it: the policy model (CoveringRule over PathRules), the preload's
// AdmissionTable and the Landlock plan (PlanGrants).
#include "policy/rule_lookup.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "policy/fs_plan.h"
#include "policy/path_admission.h"
#include "policy/policy.h"

namespace cordon::policy {
namespace {

const char* Decide(const std::vector<PathRule>& rules, const char* path) {
  const PathRule* r = CoveringRule(rules, path);
  return r == nullptr ? "outside" : AccessName(r->access);
}

TEST(RuleLookup, TheMostSpecificRuleWins) {
  std::vector<PathRule> rules = {PathRule::ReadOnly("/w"), PathRule::Denied("/w/secret"),
                                 PathRule::ReadWrite("/w/secret/out"), PathRule::ReadWrite("/")};
  struct Case {
    const char* path;
    const char* want;
    const char* why;
  } cases[] = {
      {"/w", "read-only", "the rule of the path itself"},
      {"/w/a/b", "read-only", "the nearest ancestor's rule"},
      {"/w/secret", "denied", "a deeper denial"},
      {"/w/secret/x", "denied", "beneath the denial"},
      {"/w/secret/out", "read-write", "a grant more specific than the denial"},
      {"/w/secret/out/f", "read-write", "beneath that grant"},
      {"/w/secretive", "read-only", "a prefix of a name is not a parent"},
      {"/elsewhere", "read-write", "the root rule covers every absolute path"},
  };
  for (const auto& c : cases) EXPECT_STREQ(Decide(rules, c.path), c.want) << c.path << ": " << c.why;
}

TEST(RuleLookup, NoRuleNoAnswer) {
  std::vector<PathRule> rules = {PathRule::ReadOnly("/w")};
  EXPECT_STREQ(Decide(rules, "/x"), "outside");
  EXPECT_STREQ(Decide(rules, "/"), "outside");
  EXPECT_STREQ(Decide({}, "/w"), "outside");
}

// A deny and an allow of the same path deny, in either order; read-only
// beats read-write. Every order of three rules of one path is tried.
TEST(RuleLookup, OnATieTheStricterRuleWinsInAnyOrder) {
  struct Case {
    std::vector<Access> rules;
    Access want;
  } cases[] = {
      {{Access::kReadWrite, Access::kDenied}, Access::kDenied},
      {{Access::kReadOnly, Access::kDenied}, Access::kDenied},
      {{Access::kReadWrite, Access::kReadOnly}, Access::kReadOnly},
      {{Access::kReadWrite, Access::kReadOnly, Access::kDenied}, Access::kDenied},
  };
  for (auto& c : cases) {
    std::sort(c.rules.begin(), c.rules.end());
    do {
      std::vector<PathRule> rules = {PathRule::ReadOnly("/")};
      for (Access a : c.rules) rules.push_back({"/d", a, false, "test"});
      const PathRule* r = CoveringRule(rules, "/d/f");
      ASSERT_NE(r, nullptr);
      EXPECT_EQ(r->access, c.want);
    } while (std::next_permutation(c.rules.begin(), c.rules.end()));
  }
}

TEST(RuleLookup, PathWithinTable) {
  EXPECT_TRUE(PathWithin("/w", "/w"));
  EXPECT_TRUE(PathWithin("/w/a", "/w"));
  EXPECT_FALSE(PathWithin("/wx", "/w"));
  EXPECT_FALSE(PathWithin("/", "/w"));
  EXPECT_TRUE(PathWithin("/w", "/"));
  EXPECT_FALSE(PathWithin("/w", ""));
  EXPECT_FALSE(PathWithin("/a/bc", "/a/c"));
}

// The preload's fixed-size table must give the same answer as the policy
// model for every path: random rule sets over a small alphabet of paths, so
// that ties, nesting and prefixes are common.
TEST(RuleLookup, ThePreloadTableAgreesWithThePolicyModel) {
  const std::vector<std::string> names = {"/a", "/a/b", "/a/b/c", "/a/bc", "/b", "/a/b/c/d"};
  const std::vector<std::string> probes = {"/a", "/a/x", "/a/b", "/a/b/c", "/a/b/c/d/e", "/a/bc",
                                           "/a/bcd", "/b/z", "/c"};
  std::mt19937 rng(20261204);
  for (int round = 0; round < 2000; ++round) {
    std::vector<PathRule> rules;
    AdmissionTable table;
    const std::string ws = names[rng() % names.size()];
    const Access ws_kind = rng() % 2 ? Access::kReadWrite : Access::kReadOnly;
    ASSERT_TRUE(table.SetWorkspace(ws, ws_kind));
    rules.push_back({ws, ws_kind, true, "workspace"});
    const int n = static_cast<int>(rng() % 6);
    for (int i = 0; i < n; ++i) {
      PathRule r{names[rng() % names.size()], static_cast<Access>(rng() % 3), true, "r"};
      ASSERT_TRUE(table.Add(r.path, r.access));
      rules.push_back(r);
    }
    for (const std::string& p : probes) {
      const PathRule* want = CoveringRule(rules, p);
      PathClass got = table.Classify(p);
      if (want == nullptr) {
        EXPECT_EQ(got, PathClass::kOutside) << p;
      } else if (want->access == Access::kDenied) {
        EXPECT_EQ(got, PathClass::kDenied) << p;
      } else if (want->access == Access::kReadOnly) {
        EXPECT_TRUE(got == PathClass::kReadOnly || got == PathClass::kWorkspace) << p;
        EXPECT_FALSE(got == PathClass::kWorkspace && ws_kind == Access::kReadWrite) << p;
      } else {
        EXPECT_TRUE(got == PathClass::kReadWrite || got == PathClass::kWorkspace) << p;
        EXPECT_FALSE(got == PathClass::kWorkspace && ws_kind == Access::kReadOnly) << p;
      }
    }
  }
}

// The kernel layer is planned to the same tie-break: of a read-only and a
// read-write rule of one path only the read-only one is granted (Landlock
// rights add up, so granting both would make the path writable).
TEST(RuleLookup, TheLandlockPlanGrantsOnlyTheStricterRuleOfOnePath) {
  for (bool ro_first : {true, false}) {
    std::vector<PathRule> rules;
    if (ro_first) rules.push_back(PathRule::ReadOnly("/d"));
    rules.push_back(PathRule::ReadWrite("/d"));
    if (!ro_first) rules.push_back(PathRule::ReadOnly("/d"));
    rules.push_back(PathRule::ReadWrite("/e"));
    rules.push_back(PathRule::Denied("/e"));
    std::vector<Grant> g = PlanGrants(rules, [](const std::string&) {
      return std::vector<DirEntry>{};
    });
    ASSERT_EQ(g.size(), 1u) << "ro_first " << ro_first;
    EXPECT_EQ(g[0].path, "/d");
    EXPECT_EQ(g[0].access, Access::kReadOnly);
  }
}


// A user rule of a base rule's exact path replaces it, whatever either
// grants; a broader user rule loosens nothing (the most specific wins).
TEST(RuleLookup, AUserRuleOfTheExactPathOutranksABaseRule) {
  struct Case {
    std::vector<PathRule> user;
    const char* path;
    const char* want;
    const char* why;
  } cases[] = {
      {{}, "/h/.ssh/id", "denied", "credential: denied by the base rule"},
      {{PathRule::ReadOnly("/h")}, "/h/.ssh/id", "denied", "--ro ~ is less specific"},
      {{PathRule::ReadWrite("/h")}, "/h/.ssh/id", "denied", "--rw ~ is less specific"},
      {{PathRule::ReadOnly("/h")}, "/h/notes", "read-only", "honest neighbour under --ro ~"},
      {{PathRule::ReadOnly("/h/.ssh")}, "/h/.ssh/id", "read-only", "--ro ~/.ssh: exact path"},
      {{PathRule::ReadOnly("/h/.ssh"), PathRule::Denied("/h/.ssh")}, "/h/.ssh/id", "denied",
       "among the user's own rules the stricter wins"},
      {{PathRule::Denied("/h/.gitconfig")}, "/h/.gitconfig", "denied", "--deny of a base grant"},
      {{PathRule::ReadWrite("/h/.gitconfig")}, "/h/.gitconfig", "read-write",
       "--rw of a base read-only path"},
      {{}, "/h/.gitconfig", "read-only", "user profile: read-only"},
  };
  for (const auto& c : cases) {
    Policy p;
    p.workspace = "/w";
    p.base_paths = {{"/h/.ssh", Access::kDenied, false, "credential: denied"},
                    {"/h/.gitconfig", Access::kReadOnly, false, "user profile"}};
    p.paths = c.user;
    EXPECT_STREQ(Decide(EffectiveRules(p, ""), c.path), c.want) << c.path << ": " << c.why;
  }
}

}  // namespace
}  // namespace cordon::policy
