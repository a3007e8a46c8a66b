#include "policy/protected_paths.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <string>
#include <vector>

#include "tests/support/test_env.h"

namespace cordon::policy {
namespace {

using ::cordon::testing::ScratchTree;
using ::cordon::testing::WriteFile;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

TEST(ProtectedOnlyOnceUsers, OnlyAGitmodulesByItsOwnPattern) {
  const std::vector<std::string> d = DefaultProtectedPatterns();
  EXPECT_TRUE(ProtectedOnlyOnceUsers(d, ".gitmodules"));
  EXPECT_TRUE(ProtectedOnlyOnceUsers(d, "sub/.gitmodules"));          // a nested repository's
  EXPECT_FALSE(ProtectedOnlyOnceUsers(d, ".git/hooks/.gitmodules"));  // the hooks' rule holds
  EXPECT_FALSE(ProtectedOnlyOnceUsers(d, ".envrc/.gitmodules"));
  EXPECT_FALSE(ProtectedOnlyOnceUsers(d, ".gitmodules.lock"));  // not protected at all
  EXPECT_FALSE(ProtectedOnlyOnceUsers(d, ".gitmodules/x"));     // beneath it: protected whole
  EXPECT_FALSE(ProtectedOnlyOnceUsers(d, ".envrc"));
  EXPECT_FALSE(ProtectedOnlyOnceUsers(d, ""));
  // Removed from the list, nothing is left to relax.
  EXPECT_FALSE(ProtectedOnlyOnceUsers({".envrc"}, ".gitmodules"));
}

TEST(IsProtected, DefaultPatternsTable) {
  Policy p;
  struct Case {
    const char* rel;
    bool protected_;
  } cases[] = {
      {".git/config", true},
      {".git/hooks", true},
      {".git/hooks/pre-commit", true},
      {".git/info/exclude", true},  // hides untracked files from git status
      {".git/info/attributes", true},
      {".git/info/grafts", true},
      {".git/info/sparse-checkout", true},
      {".git/modules/sub/info/exclude", true},
      {".git/modules/a/b/info/attributes", true},
      {".git/info/refs", false},         // git's own output for dumb-HTTP servers (git gc)
      {".git/info/refs_Ab12Cd", false},  // ... written through a temporary beside it
      {".git/modules/sub/info/refs", false},
      {".git/commondir", true},  // where git reads config and hooks from
      {".gitmodules", true},
      {".envrc", true},
      {".cordon/state", true},
      {".git", true},                       // renaming the .git away, or a worktree's .git file
      {"sub/.git/hooks/pre-commit", true},  // a nested repository
      {"a/b/.git/config", true},
      {"a/.envrc", true},
      {".git/config.worktree", true},
      {".git/modules/sub/config", true},  // a submodule's git directory
      {".git/modules/sub/hooks/post-checkout", true},
      {".git/modules/third_party/zlib/config", true},       // a name with a slash
      {".git/modules/a/modules/b/hooks/pre-commit", true},  // nested submodules
      {".git/modules/sub/commondir", true},
      {".git/worktrees/w/commondir", true},
      {".git/worktrees/w/config.worktree", true},
      {".git/modules/sub/objects/ab/cdef", false},
      {".git/worktrees/w/HEAD", false},
      {"src/modules/auth/hooks/use.ts", false},  // not under .git
      {".git/objects/ab/cdef", false},           // the honest neighbour: git's own data
      {".git/HEAD", false},
      {".git/refs/heads/main", false},
      {"src/main.cc", false},
      {"config", false},
      {"hooks/pre-commit", false},  // not under .git
      {"x.gitmodules", false},
      {".envrc.example", false},
      {"", false},
  };
  for (const auto& c : cases) EXPECT_EQ(IsProtected(p, c.rel), c.protected_) << c.rel;
}

TEST(CheckProtectedPattern, AnyDepthStandsBetweenTwoNames) {
  EXPECT_EQ(CheckProtectedPattern(".git/modules/**/config"), "");
  EXPECT_NE(CheckProtectedPattern("**/config"), "");
  EXPECT_NE(CheckProtectedPattern(".git/**"), "");
  Policy p;
  p.protected_patterns = {"a/**/b"};
  EXPECT_FALSE(IsProtected(p, "a/b")) << "'**' takes at least one segment";
  EXPECT_TRUE(IsProtected(p, "a/x/b"));
  EXPECT_TRUE(IsProtected(p, "a/x/y/b/c"));
  EXPECT_TRUE(IsProtected(p, "top/a/x/b"));
}

TEST(LeadsToProtected, NamesThatLeadIntoAPattern) {
  std::vector<std::string> pats = DefaultProtectedPatterns();
  pats.push_back("ci/deploy/run.sh");
  struct Case {
    const char* rel;
    bool leads;
  } cases[] = {
      {".git", true},  // .git/config, .git/hooks... lie beneath
      {"sub/.git", true},
      {"ci", true},
      {"a/ci/deploy", true},
      {"ci/deploy/run.sh", false},        // the pattern itself: IsProtected's
      {"deploy", false},                  // not a leading part
      {".git/hooks", false},              // protected itself; nothing longer starts here
      {".git/modules", true},             // .git/modules/NAME/config
      {".git/modules/sub/index", false},  // "**" leads anywhere: git's renames stay
      {".gitx", false},
      {"src", false},
      {"", false},
  };
  for (const auto& c : cases) EXPECT_EQ(LeadsToProtected(pats, c.rel), c.leads) << c.rel;
  // For a directory, any name beneath a "**" lead leads there too.
  EXPECT_TRUE(LeadsToProtected(pats, ".git/modules/sub", true));
  EXPECT_TRUE(LeadsToProtected(pats, ".git/modules/libs/zlib", true));
  EXPECT_FALSE(LeadsToProtected(pats, "src", true));
  EXPECT_FALSE(LeadsToProtected(pats, "modules/sub", true));
}

TEST(IsProtected, EmptyListProtectsNothing) {
  Policy p;
  p.protected_patterns.clear();
  EXPECT_FALSE(IsProtected(p, ".git/hooks/pre-commit"));
}

TEST(EditProtectedPatterns, AddsAndRemoves) {
  std::vector<std::string> pats = DefaultProtectedPatterns();
  EXPECT_THAT(EditProtectedPatterns(pats, {"-.envrc", "+.direnv", "+.vscode/tasks.json"}),
              IsEmpty());
  EXPECT_FALSE(MatchesProtected(pats, ".envrc"));
  EXPECT_TRUE(MatchesProtected(pats, ".direnv/x"));
  EXPECT_TRUE(MatchesProtected(pats, "app/.vscode/tasks.json"));
  EXPECT_TRUE(MatchesProtected(pats, ".git/hooks/x")) << "the rest of the default stays";
}

TEST(EditProtectedPatterns, RejectsBadEdits) {
  std::vector<std::string> pats = DefaultProtectedPatterns();
  auto errors = EditProtectedPatterns(pats, {"noprefix", "+/abs", "+a/../b", "-not-there", "+a//b"});
  EXPECT_EQ(errors.size(), 5u);
  EXPECT_EQ(pats, DefaultProtectedPatterns()) << "bad edits change nothing";
}

}  // namespace
}  // namespace cordon::policy
