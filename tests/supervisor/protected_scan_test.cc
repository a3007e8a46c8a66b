// The protected-path scan: a bounded walk of the workspace that finds the
// paths the kernel layer carves out (patterns: policy/protected_paths.h).
#include "supervisor/walk/protected_scan.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <string>
#include <vector>

#include "policy/protected_paths.h"
#include "tests/support/test_env.h"

namespace cordon::supervisor {
namespace {

using ::cordon::policy::DefaultProtectedPatterns;
using ::cordon::testing::ScratchTree;
using ::cordon::testing::WriteFile;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

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
}  // namespace cordon::supervisor
