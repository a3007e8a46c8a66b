// Deny globs (issue 24 item 9): the pure matcher, the pattern check, the
// parser's glob entries in deniedPaths and their place in the rules and
// the digest.
#include "policy/deny_glob.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "policy/policy.h"
#include "policy/policy_digest.h"
#include "policy/policy_parser.h"

namespace cordon::policy {
namespace {

using ::testing::HasSubstr;

struct MatchRow {
  const char* glob;
  const char* rel;
  bool match;
};

TEST(DenyGlob, MatchTable) {
  const MatchRow rows[] = {
      {"**/.env", ".env", true},              // "**" takes zero segments
      {"**/.env", "a/b/c/.env", true},
      {"**/.env", ".envrc", false},
      {"**/.env", "env.txt", false},
      {"**/.env", "a/.env/inner", true},       // beneath a match
      {"**/.env.*", "app/.env.local", true},
      {"**/.env.*", "app/.env", false},
      {".env", "deep/er/.env", true},           // one segment: any depth
      {"*.pem", "certs/.key.pem", true},        // '*' takes a leading dot
      {"*.pem", "certs/key.pem.txt", false},
      {"**/id_*", "home/.ssh/id_ed25519", true},
      {"**/id_*", "home/.ssh/known_id", false},
      {"secrets/*.pem", "secrets/a.pem", true},  // a '/' anchors at the root
      {"secrets/*.pem", "x/secrets/a.pem", false},
      {"a/**/b", "a/b", true},
      {"a/**/b", "a/x/y/b", true},
      {"a/**/b", "a/x/y/c", false},
      {"k?y", "k1y", true},
      {"[ab].txt", "dir/b.txt", true},
      {"[ab].txt", "dir/c.txt", false},
      {"**/.env", "", false},                   // the root itself never
  };
  for (const MatchRow& r : rows) {
    EXPECT_EQ(MatchesDenyGlob({r.glob}, r.rel), r.match) << r.glob << " on '" << r.rel << "'";
  }
}

TEST(DenyGlob, ManyStarsDoNotBacktrackForever) {
  std::string rel;
  for (int i = 0; i < 200; ++i) rel += "d/";
  rel += "x";
  EXPECT_FALSE(MatchesDenyGlob({"**/**/**/**/**/**/**/**/y"}, rel));
  EXPECT_TRUE(MatchesDenyGlob({"**/**/**/**/**/**/**/**/x"}, rel));
}

TEST(DenyGlob, CheckRefusesWhatCouldNotMeanAPattern) {
  EXPECT_EQ(CheckDenyGlob("**/.env"), "");
  EXPECT_EQ(CheckDenyGlob("secrets/*.pem"), "");
  EXPECT_THAT(CheckDenyGlob(""), HasSubstr("empty"));
  EXPECT_THAT(CheckDenyGlob("/ws/**/.env"), HasSubstr("relative to the workspace"));
  EXPECT_THAT(CheckDenyGlob("**"), HasSubstr("whole workspace"));
  EXPECT_THAT(CheckDenyGlob("**/**"), HasSubstr("whole workspace"));
  EXPECT_THAT(CheckDenyGlob("a//b"), HasSubstr("empty segment"));
  EXPECT_THAT(CheckDenyGlob("../*.pem"), HasSubstr("'..'"));
  EXPECT_THAT(CheckDenyGlob("keys/"), HasSubstr("trailing"));
  EXPECT_THAT(CheckDenyGlob(std::string_view("a\0b", 3)), HasSubstr("NUL"));
}

TEST(DenyGlob, DirectoryNamesMatterOnlyForGlobsThatNameADirectory) {
  EXPECT_FALSE(DenyGlobsFollowParents({"**/.env", "*.pem", "**/id_*", "keys/**"}));
  EXPECT_TRUE(DenyGlobsFollowParents({"**/.env", "secrets/*.pem"}));
  EXPECT_TRUE(DenyGlobsFollowParents({"**/keys/*"}));
}

TEST(DenyGlob, PolicyFileGlobsAreDenyGlobsAndPathsStayPaths) {
  Policy p;
  auto errors = ParsePolicy(
      R"({"sandbox":{"filesystem":{"deniedPaths":["**/.env","/srv/secret","*.pem","**/.env"]}}})", p);
  ASSERT_TRUE(errors.empty()) << errors[0].pointer << ": " << errors[0].message;
  EXPECT_EQ(p.deny_globs, (std::vector<std::string>{"**/.env", "*.pem"}));
  ASSERT_EQ(p.paths.size(), 1u);
  EXPECT_EQ(p.paths[0].path, "/srv/secret");
}

TEST(DenyGlob, AnAbsoluteGlobIsAnErrorNotAPathThatDeniesNothing) {
  Policy p;
  auto errors = ParsePolicy(R"({"sandbox":{"filesystem":{"deniedPaths":["/home/u/ws/**/.env"]}}})", p);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].pointer, "/sandbox/filesystem/deniedPaths/0");
  EXPECT_THAT(errors[0].message, HasSubstr("relative to the workspace"));
  EXPECT_TRUE(p.deny_globs.empty());
  EXPECT_TRUE(p.paths.empty());
}

TEST(DenyGlob, ScanEntriesLimitIsParsedAndBounded) {
  Policy p;
  EXPECT_TRUE(ParsePolicy(R"({"limits":{"scanEntries":5}})", p).empty());
  EXPECT_EQ(p.limits.max_scan_entries, 5u);
  Policy q;
  auto errors = ParsePolicy(R"({"limits":{"scanEntries":0}})", q);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].pointer, "/limits/scanEntries");
}

TEST(DenyGlob, MatchesFoundAtLaunchAreDeniedRules) {
  Policy p;
  p.workspace = "/ws";
  p.profile = Profile::kWorkspaceWrite;
  p.deny_globs = {"**/.env"};
  p.deny_glob_matches = {"/ws/a/.env"};
  const auto rules = EffectiveRules(p, "");
  const PathRule* r = CoveringRule(rules, "/ws/a/.env");
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->access, Access::kDenied);
  EXPECT_EQ(r->source, kDenyGlobSource);
  EXPECT_EQ(CoveringRule(rules, "/ws/a/env.txt")->access, Access::kReadWrite);
}

TEST(DenyGlob, AnIncompleteScanRefusesTheRun) {
  Policy p;
  p.workspace = "/ws";
  p.deny_globs = {"**/.env"};
  EXPECT_TRUE(Validate(p, {}).empty());
  p.scan_problems = {"the launch scan stopped"};
  auto errors = Validate(p, {});
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_THAT(errors[0], HasSubstr("scan stopped"));
}

TEST(DenyGlob, GlobsChangeTheDigestAndTheirAbsenceKeepsIt) {
  Policy p;
  p.workspace = "/ws";
  const std::string before = PolicyDigest(p);
  p.deny_glob_matches = {"/ws/.env"};  // the workspace's contents, not the policy
  EXPECT_EQ(PolicyDigest(p), before);
  p.deny_globs = {"**/.env"};
  EXPECT_NE(PolicyDigest(p), before);
}

}  // namespace
}  // namespace cordon::policy
