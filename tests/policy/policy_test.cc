#include "policy/policy.h"

#include <gtest/gtest.h>

namespace cordon::policy {
namespace {

TEST(IsAbsoluteNormal, Table) {
  struct Case {
    const char* path;
    bool ok;
  } cases[] = {{"/", true},         {"/usr", true},    {"/usr/lib", true}, {"", false},
               {"usr", false},      {"/usr/", false},  {"/a//b", false},   {"/a/./b", false},
               {"/a/../b", false},  {"/..", false},    {"/a/b.c", true},   {"/a/..b", true}};
  for (const auto& c : cases) EXPECT_EQ(IsAbsoluteNormal(c.path), c.ok) << c.path;
}

TEST(IsWithin, Table) {
  EXPECT_TRUE(IsWithin("/w", "/w"));
  EXPECT_TRUE(IsWithin("/w/a", "/w"));
  EXPECT_FALSE(IsWithin("/wx", "/w")) << "a prefix is not a parent";
  EXPECT_FALSE(IsWithin("/", "/w"));
  EXPECT_TRUE(IsWithin("/w", "/"));
}

TEST(Validate, AcceptsACleanPolicy) {
  Policy p;
  p.workspace = "/tmp/ws";
  p.paths.push_back(PathRule::ReadOnly("/opt"));
  EXPECT_TRUE(Validate(p, {}).empty());
}

TEST(Validate, RejectsBadPaths) {
  Policy p;
  p.workspace = "relative";
  p.paths.push_back(PathRule::ReadOnly("/a/../b"));
  auto errors = Validate(p, {});
  ASSERT_EQ(errors.size(), 2u);
  EXPECT_NE(errors[0].find("workspace"), std::string::npos);
  EXPECT_NE(errors[1].find("/a/../b"), std::string::npos);
}

// Two rules of one path are no error: the rule lookup settles them
// (rule_lookup_test.cc), so the command line cannot be refused for what a
// policy file settles.
TEST(Validate, LeavesTiesToTheRuleLookup) {
  Policy p;
  p.workspace = "/w";
  p.paths.push_back(PathRule::ReadWrite("/data"));
  p.paths.push_back(PathRule::Denied("/data"));
  EXPECT_TRUE(Validate(p, {}).empty());
  const PathRule* r = CoveringRule(EffectiveRules(p, ""), "/data/x");
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->access, Access::kDenied);
}

TEST(Validate, RejectsRootWorkspace) {
  Policy p;
  p.workspace = "/";
  EXPECT_EQ(Validate(p, {}).size(), 1u);
}

TEST(SystemPaths, DeniesSecretsUnderEtc) {
  bool shadow = false, etc = false;
  for (const auto& r : SystemPaths()) {
    if (r.path == "/etc/shadow") shadow = r.access == Access::kDenied;
    if (r.path == "/etc") etc = r.access == Access::kReadOnly;
  }
  EXPECT_TRUE(shadow);
  EXPECT_TRUE(etc);
}

}  // namespace
}  // namespace cordon::policy
