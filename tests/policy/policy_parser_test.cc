#include "policy/policy_parser.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include "tests/support/test_env.h"

namespace cordon::policy {
namespace {

using ::testing::HasSubstr;

struct Parsed {
  Policy p;
  std::vector<PolicyError> errors;
  std::string All() const {
    std::string s;
    for (const auto& e : errors) s += FormatPolicyError("f", e) + "\n";
    return s;
  }
};

Parsed Parse(const std::string& text) {
  Parsed r;
  r.errors = ParsePolicy(text, r.p);
  return r;
}

TEST(ParsePolicy, ProfileVersionsTable) {
  struct Case {
    const char* json;
    Profile want;
    const char* reason;
  } cases[] = {
      {R"({})", Profile::kReadOnly, "no profile named"},
      {R"({"security":{"assistantPermissions":{}}})", Profile::kReadOnly, "no profile named"},
      {R"({"security":{"assistantPermissions":{"profile":"workspace-managed/v1"}}})",
       Profile::kWorkspaceWrite, "workspace-managed/v1"},
      {R"({"security":{"assistantPermissions":{"profile":"workspace-managed/v2"}}})",
       Profile::kReadOnly, "unknown profile version \"workspace-managed/v2\""},
      {R"({"security":{"assistantPermissions":{"profile":"workspace-write"}}})",
       Profile::kReadOnly, "unknown profile version"},
      // Seed 004's shape: addCurrentWorkingDirectory (default true) adds the
      // workspace read-write.
      {R"({"sandbox":{}})", Profile::kWorkspaceWrite, "addCurrentWorkingDirectory"},
      {R"({"sandbox":{"addCurrentWorkingDirectory":false}})", Profile::kReadOnly,
       "addCurrentWorkingDirectory false"},
      // A named profile beats the seed-004 default.
      {R"({"sandbox":{},"security":{"assistantPermissions":{"profile":"x/v9"}}})",
       Profile::kReadOnly, "unknown profile"},
  };
  for (const auto& c : cases) {
    Parsed r = Parse(c.json);
    EXPECT_TRUE(r.errors.empty()) << c.json << "\n" << r.All();
    EXPECT_EQ(r.p.profile, c.want) << c.json;
    EXPECT_THAT(r.p.profile_reason, HasSubstr(c.reason)) << c.json;
  }
}

TEST(ParsePolicy, ErrorsTableEachWithItsPointer) {
  struct Case {
    const char* json;
    const char* pointer;
    const char* message;
  } cases[] = {
      {R"({"sandbox":{"enabeld":true}})", "/sandbox/enabeld", "unknown key"},
      {R"({"bogus":1})", "/bogus", "unknown key"},
      {R"({"sandbox":{"enabled":"yes"}})", "/sandbox/enabled", "true or false"},
      {R"({"sandbox":{"filesystem":{"readonlyPaths":"/usr"}}})",
       "/sandbox/filesystem/readonlyPaths", "array"},
      {R"({"sandbox":{"filesystem":{"readonlyPaths":["usr/lib"]}}})",
       "/sandbox/filesystem/readonlyPaths/0", "absolute"},
      {R"({"sandbox":{"filesystem":{"readonlyPaths":[7]}}})",
       "/sandbox/filesystem/readonlyPaths/0", "string"},
      // The shared admission rule: ".." refused although /w/a/../b is /w/b.
      {R"({"sandbox":{"filesystem":{"readwritePaths":["/w/a/../b"]}}})",
       "/sandbox/filesystem/readwritePaths/0", "'..' segment"},
      {R"({"sandbox":{"filesystem":{"deniedPaths":["/data","/data/"]}}})",
       "/sandbox/filesystem/deniedPaths/1", "listed twice"},
      {R"({"sandbox":{"enabled":false}})", "/sandbox/enabled", "allowBypass"},
      {R"({"sensitive":{"delete":"maybe"}})", "/sensitive/delete", "\"ask\" or \"deny\""},
      {R"({"links":"loose"})", "/links", "\"strict\" or \"kernel\""},
      {R"({"limits":{"treeDepth":0}})", "/limits/treeDepth", "whole number"},
      {R"({"limits":{"treeEntries":-5}})", "/limits/treeEntries", "whole number"},
      {R"({"protectedPaths":[".envrc"]})", "/protectedPaths/0", "'+' (add)"},
      {R"({"protectedPaths":["-nothere"]})", "/protectedPaths/0", "not in the list"},
      {R"({"security":{"assistantPermissions":{"profile":1}}})",
       "/security/assistantPermissions/profile", "string"},
      {R"({"sandbox":{"addCurrentWorkingDirectory":false},
           "security":{"assistantPermissions":{"profile":"workspace-managed/v1"}}})",
       "/sandbox/addCurrentWorkingDirectory", "contradicts"},
      {R"({"links":"strict","links":"kernel"})", "/links", "duplicate key"},
      {R"({"sandbox":{"filesystem":{"deniedPaths":["/a"],"deniedPaths":["/b"]}}})",
       "/sandbox/filesystem/deniedPaths", "duplicate key"},
      {R"([1,2])", "", "must be an object"},
  };
  for (const auto& c : cases) {
    Parsed r = Parse(c.json);
    bool found = false;
    for (const auto& e : r.errors) {
      if (e.pointer == c.pointer && e.message.find(c.message) != std::string::npos) found = true;
    }
    EXPECT_TRUE(found) << c.json << "\nwant " << c.pointer << ": " << c.message << "\ngot:\n"
                       << r.All();
  }
}

// The tie-break of the one rule lookup, in either order of the keys and of
// the entries: a denial and a grant of one path deny; read-only beats
// read-write. Explain says why in a note.
TEST(ParsePolicy, ATieOfOnePathIsNoErrorAndTheStricterRuleWins) {
  struct Case {
    const char* json;
    Access want;
  } cases[] = {
      {R"({"sandbox":{"filesystem":{"readwritePaths":["/d"],"deniedPaths":["/d"]}}})",
       Access::kDenied},
      {R"({"sandbox":{"filesystem":{"deniedPaths":["/d"],"readwritePaths":["/d/"]}}})",
       Access::kDenied},
      {R"({"sandbox":{"filesystem":{"readonlyPaths":["/d"],"deniedPaths":["/d"]}}})",
       Access::kDenied},
      {R"({"sandbox":{"filesystem":{"deniedPaths":["/d"],"readonlyPaths":["/d"]}}})",
       Access::kDenied},
      {R"({"sandbox":{"filesystem":{"readwritePaths":["/d"],"readonlyPaths":["/d"]}}})",
       Access::kReadOnly},
      {R"({"sandbox":{"filesystem":{"readonlyPaths":["/d"],"readwritePaths":["/d"]}}})",
       Access::kReadOnly},
  };
  for (const auto& c : cases) {
    Parsed r = Parse(c.json);
    EXPECT_TRUE(r.errors.empty()) << c.json << "\n" << r.All();
    const PathRule* rule = CoveringRule(r.p.paths, "/d/file");
    ASSERT_NE(rule, nullptr) << c.json;
    EXPECT_EQ(rule->access, c.want) << c.json;
    ASSERT_EQ(r.p.notes.size(), 1u) << c.json;
    EXPECT_NE(r.p.notes[0].find(std::string("so it is ") + AccessName(c.want)), std::string::npos)
        << r.p.notes[0];
  }
}

TEST(ParsePolicy, ReportsEveryErrorNotJustTheFirst) {
  Parsed r = Parse(R"({"a":1,"sandbox":{"enabled":3,"filesystem":{"readonlyPaths":["x","/y/../z"]}}})");
  EXPECT_EQ(r.errors.size(), 4u) << r.All();
}

TEST(ParsePolicy, SyntaxErrorHasLineAndColumn) {
  Parsed r = Parse("{\n  \"sandbox\": {\n    \"enabled\": tru\n  }\n}\n");
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0].line, 3);
  EXPECT_GE(r.errors[0].column, 16);
  EXPECT_THAT(FormatPolicyError("p.json", r.errors[0]), HasSubstr("p.json:3:"));
}

TEST(ParsePolicy, NumberBeyondADoubleIsAnErrorNotACrash) {
  // Found by the fuzzer: nlohmann throws out_of_range, not parse_error.
  Parsed r = Parse(R"({"limits":{"treeDepth":)" + std::string(400, '3') + "}}");
  ASSERT_EQ(r.errors.size(), 1u) << r.All();
  EXPECT_THAT(r.errors[0].message, HasSubstr("number overflow"));
}

// Seed 004's clearPolicyOnExit false asks to keep the generated policy
// after exit; cordon writes none and removes the run's TMPDIR always, so
// false is refused rather than taken and ignored.
TEST(ParsePolicy, ClearPolicyOnExitFalseIsRefused) {
  Parsed r = Parse(R"({"sandbox":{"filesystem":{"clearPolicyOnExit":false}}})");
  ASSERT_EQ(r.errors.size(), 1u) << r.All();
  EXPECT_EQ(r.errors[0].pointer, "/sandbox/filesystem/clearPolicyOnExit");
  EXPECT_THAT(r.errors[0].message, HasSubstr("false is not supported"));
  EXPECT_TRUE(Parse(R"({"sandbox":{"filesystem":{"clearPolicyOnExit":true}}})").errors.empty());
}

TEST(ParsePolicy, AcceptsTheSeed004ShapeAndKeepsSources) {
  Parsed r = Parse(R"({
    "sandbox": {"enabled": true, "allowBypass": true, "addCurrentWorkingDirectory": true,
      "filesystem": {"readwritePaths": ["/srv/out"], "readonlyPaths": ["/opt//tools/"],
                     "deniedPaths": ["/srv/out/keys"], "clearPolicyOnExit": true},
      "network": {"allowOutbound": true}},
    "protectedPaths": ["+.vscode", "-.envrc"],
    "sensitive": {"delete": "deny"}, "links": "kernel",
    "limits": {"treeEntries": 500, "treeDepth": 8}})");
  ASSERT_TRUE(r.errors.empty()) << r.All();
  const Policy& p = r.p;
  EXPECT_TRUE(p.allow_bypass);
  EXPECT_TRUE(p.clear_policy_on_exit);
  EXPECT_EQ(p.network, Network::kAllow);
  EXPECT_EQ(p.sensitive_delete, SensitiveDelete::kDeny);
  EXPECT_EQ(p.links, LinkMode::kKernel);
  EXPECT_EQ(p.limits.max_tree_entries, 500u);
  EXPECT_EQ(p.limits.max_tree_depth, 8u);
  ASSERT_EQ(p.paths.size(), 3u);
  EXPECT_EQ(p.paths[0].path, "/srv/out");
  EXPECT_EQ(p.paths[1].path, "/opt/tools") << "lexically normalised";
  EXPECT_EQ(p.paths[2].access, Access::kDenied);
  EXPECT_EQ(p.paths[2].source, "policy /sandbox/filesystem/deniedPaths/0");
  EXPECT_NE(std::find(p.protected_patterns.begin(), p.protected_patterns.end(), ".vscode"),
            p.protected_patterns.end());
  EXPECT_EQ(std::find(p.protected_patterns.begin(), p.protected_patterns.end(), ".envrc"),
            p.protected_patterns.end());
}

TEST(ParsePolicy, DefaultsWhenAbsent) {
  Parsed r = Parse("{}");
  ASSERT_TRUE(r.errors.empty());
  EXPECT_TRUE(r.p.sandbox_enabled);
  EXPECT_FALSE(r.p.allow_bypass);
  EXPECT_EQ(r.p.sensitive_delete, SensitiveDelete::kRecoverable);
  EXPECT_EQ(r.p.links, LinkMode::kStrict);
  EXPECT_EQ(r.p.network, Network::kNone);
  EXPECT_EQ(r.p.limits.max_tree_entries, 10000u);
  EXPECT_EQ(r.p.limits.max_tree_depth, 64u);
}

TEST(ParsePolicy, TheDocsExampleIsValid) {
  std::string text = testing::ReadFile(std::string(CORDON_SOURCE_DIR) + "/docs/policy.example.json");
  ASSERT_NE(text, "<missing>");
  Parsed r = Parse(text);
  EXPECT_TRUE(r.errors.empty()) << r.All();
  EXPECT_EQ(r.p.profile, Profile::kWorkspaceWrite);
}

// runs: how many of the workspace's runs a run's end keeps (run retention).
TEST(ParsePolicy, RunsBoundsTheirDefaultsZeroAndBadValues) {
  EXPECT_EQ(Parse("{}").p.runs, (RunRetention{30, 1000}));
  Parsed r = Parse(R"({"runs": {"keepDays": 7, "keepRuns": 50}})");
  ASSERT_TRUE(r.errors.empty()) << r.All();
  EXPECT_EQ(r.p.runs, (RunRetention{7, 50}));
  r = Parse(R"({"runs": {"keepDays": 0, "keepRuns": 0}})");
  ASSERT_TRUE(r.errors.empty()) << r.All();
  EXPECT_TRUE(r.p.runs.off());
  r = Parse(R"({"runs": {"keepRuns": 0}})");
  EXPECT_EQ(r.p.runs, (RunRetention{30, 0}));
  struct Case {
    const char* json;
    const char* pointer;
    const char* message;
  };
  const Case cases[] = {
      {R"({"runs":{"keepDays":-1}})", "/runs/keepDays",
       "whole number from 0 (no age bound) to 36500"},
      {R"({"runs":{"keepDays":"30d"}})", "/runs/keepDays", "whole number"},
      {R"({"runs":{"keepDays":1.5}})", "/runs/keepDays", "whole number"},
      {R"({"runs":{"keepDays":null}})", "/runs/keepDays", "whole number"},
      {R"({"runs":{"keepDays":36501}})", "/runs/keepDays", "to 36500"},
      {R"({"runs":{"keepRuns":1000001}})", "/runs/keepRuns", "0 (no count bound) to 1000000"},
      {R"({"runs":{"keepDay":3}})", "/runs/keepDay",
       "unknown key (known here: keepDays, keepRuns)"},
      {R"({"runs":30})", "/runs", "must be an object"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.json);
    r = Parse(c.json);
    ASSERT_EQ(r.errors.size(), 1u) << r.All();
    EXPECT_EQ(r.errors[0].pointer, c.pointer);
    EXPECT_THAT(r.errors[0].message, HasSubstr(c.message));
  }
}

}  // namespace
}  // namespace cordon::policy
