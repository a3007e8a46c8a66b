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

TEST(IsProtected, DefaultPatternsTable) {
  Policy p;
  struct Case {
    const char* rel;
    bool protected_;
  } cases[] = {
      {".git/config", true},
      {".git/hooks", true},
      {".git/hooks/pre-commit", true},
      {".git/info/exclude", true},
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

TEST(FindProtectedPaths, FindsNestedRepositoriesAndSkipsLinks) {
  ScratchTree t;
  std::string ws = t.ws();
  for (const char* d : {".git", ".git/hooks", ".git/objects", "sub", "sub/repo", "sub/repo/.git",
                        "sub/repo/.git/hooks", "wt"}) {
    ASSERT_EQ(::mkdir((ws + "/" + d).c_str(), 0755), 0) << d;
  }
  WriteFile(ws + "/.git/config", "[core]\n");
  WriteFile(ws + "/sub/repo/.git/config", "[core]\n");
  WriteFile(ws + "/wt/.git", "gitdir: /elsewhere\n");  // a worktree's .git file
  WriteFile(ws + "/src.c", "");
  WriteFile(t.Out("envrc"), "");
  ASSERT_EQ(::symlink(t.Out("envrc").c_str(), (ws + "/.envrc").c_str()), 0);
  auto scan = FindProtectedPaths(ws, DefaultProtectedPatterns(), 1000, 64);
  EXPECT_FALSE(scan.truncated);
  EXPECT_THAT(scan.paths,
              ElementsAre(ws + "/.git/config", ws + "/.git/hooks", ws + "/sub/repo/.git/config",
                          ws + "/sub/repo/.git/hooks", ws + "/wt/.git"));
}

TEST(FindProtectedPaths, StopsAtTheBoundAndSaysSo) {
  ScratchTree t;
  std::string d = t.ws();
  for (int i = 0; i < 5; ++i) {
    d += "/d";
    ASSERT_EQ(::mkdir(d.c_str(), 0755), 0);
  }
  WriteFile(d + "/.envrc", "");
  EXPECT_TRUE(FindProtectedPaths(t.ws(), DefaultProtectedPatterns(), 1000, 3).truncated);
  auto full = FindProtectedPaths(t.ws(), DefaultProtectedPatterns(), 1000, 64);
  EXPECT_FALSE(full.truncated);
  EXPECT_THAT(full.paths, ElementsAre(d + "/.envrc"));
}


// A workspace wide enough for two walkers: 40 repositories, each with a
// hook directory and an .envrc, beside 40 directories of plain files.
// Every match is found whoever walks it, and the entry bound holds for the
// whole scan.
TEST(FindProtectedPaths, TwoWalkersFindEveryMatchAndShareTheBound) {
  ScratchTree t;
  std::string ws = t.ws();
  std::vector<std::string> want;
  std::size_t entries = 0;
  for (int i = 0; i < 40; ++i) {
    std::string repo = ws + "/r" + std::to_string(i);
    std::string plain = ws + "/p" + std::to_string(i);
    for (const std::string& d : {repo, repo + "/src", repo + "/.git", repo + "/.git/hooks", plain}) {
      ASSERT_EQ(::mkdir(d.c_str(), 0755), 0) << d;
    }
    WriteFile(repo + "/src/.envrc", "");
    for (int f = 0; f < 20; ++f) WriteFile(plain + "/f" + std::to_string(f), "");
    want.push_back(repo + "/.git/hooks");
    want.push_back(repo + "/src/.envrc");
    entries += 2 + 3 + 20;  // r<i>, p<i>; src, .git, src/.envrc; the files (not below .git)
  }
  std::sort(want.begin(), want.end());
  auto scan = FindProtectedPaths(ws, DefaultProtectedPatterns(), entries, 64);
  EXPECT_FALSE(scan.truncated);
  EXPECT_EQ(scan.walkers, 2u);
  EXPECT_EQ(scan.paths, want);
  auto cut = FindProtectedPaths(ws, DefaultProtectedPatterns(), entries - 1, 64);
  EXPECT_TRUE(cut.truncated) << "one entry past the bound, whichever walker counts it";
  for (const std::string& p : cut.paths) {
    EXPECT_TRUE(std::binary_search(want.begin(), want.end(), p)) << p;
  }
}

TEST(FindProtectedPaths, ASmallWorkspaceIsWalkedByOneThread) {
  ScratchTree t;
  ASSERT_EQ(::mkdir((t.ws() + "/a").c_str(), 0755), 0);
  WriteFile(t.ws() + "/a/.envrc", "");
  auto scan = FindProtectedPaths(t.ws(), DefaultProtectedPatterns(), 1000, 64);
  EXPECT_EQ(scan.walkers, 1u);
  EXPECT_THAT(scan.paths, ElementsAre(t.ws() + "/a/.envrc"));
}

}  // namespace
}  // namespace cordon::policy
