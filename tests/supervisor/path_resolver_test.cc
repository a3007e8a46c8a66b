// PathResolver (supervisor/load/path_resolver.h): a prefix resolved once,
// and every answer realpath's own, errors included, for each kind of path
// a launch canonicalises (links, chains, loops, missing parts, a file
// where a directory is wanted, paths that are not normal).
#include "supervisor/load/path_resolver.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <string>
#include <vector>

#include "supervisor/load/normalise.h"
#include "tests/support/test_env.h"

namespace cordon::supervisor {
namespace {

// A tree with a directory, a file, links to each, a chain, a loop, a
// dangling link and a link out of the tree.
void MakeTree(const testing::ScratchTree& t) {
  ASSERT_EQ(::mkdir(t.Out("dir").c_str(), 0755), 0);
  ASSERT_EQ(::mkdir(t.Out("dir/sub").c_str(), 0755), 0);
  std::ofstream(t.Out("dir/file")) << "x";
  ASSERT_EQ(::symlink("dir", t.Out("rel-link").c_str()), 0);
  ASSERT_EQ(::symlink(t.Out("dir").c_str(), t.Out("abs-link").c_str()), 0);
  ASSERT_EQ(::symlink("rel-link/sub", t.Out("chain").c_str()), 0);
  ASSERT_EQ(::symlink("../outside/dir/file", t.Out("dir/sub/up").c_str()), 0);
  ASSERT_EQ(::symlink("loop-b", t.Out("loop-a").c_str()), 0);
  ASSERT_EQ(::symlink("loop-a", t.Out("loop-b").c_str()), 0);
  ASSERT_EQ(::symlink("missing", t.Out("dangling").c_str()), 0);
  ASSERT_EQ(::symlink(t.ws().c_str(), t.Out("to-ws").c_str()), 0);
}

std::vector<std::string> Cases(const testing::ScratchTree& t) {
  std::vector<std::string> out = {"/", "/tmp", "relative/path", ""};
  for (const char* rel : {"",
                          "dir",
                          "dir/sub",
                          "dir/file",
                          "dir/file/below",
                          "rel-link",
                          "rel-link/sub",
                          "rel-link/sub/missing",
                          "abs-link/file",
                          "chain",
                          "chain/missing/deeper",
                          "dir/sub/up",
                          "loop-a",
                          "loop-a/x",
                          "dangling",
                          "dangling/x",
                          "to-ws",
                          "missing",
                          "missing/deeper",
                          "dir/./sub",
                          "dir/../dir",
                          "dir//sub",
                          "dir/sub/",
                          "rel-link/..",
                          "dir/sub/up/.."}) {
    out.push_back(t.Out(rel));
  }
  return out;
}

TEST(PathResolver, AnswersAsRealpathDoes) {
  testing::ScratchTree t;
  MakeTree(t);
  PathResolver resolve;
  // Twice over: the second pass is answered from what the first learnt.
  for (int pass = 0; pass < 2; ++pass) {
    for (const std::string& path : Cases(t)) {
      auto want = RealPath(path);
      auto got = resolve.Real(path);
      ASSERT_EQ(got.ok(), want.ok()) << path << " pass " << pass;
      if (want) {
        EXPECT_EQ(got.value(), want.value()) << path;
      } else {
        EXPECT_EQ(got.error().err, want.error().err) << path;
      }
      int want_err = 0, got_err = 0;
      EXPECT_EQ(resolve.RealOrEmpty(path, &got_err), RealPathOrEmpty(path, &want_err)) << path;
      EXPECT_EQ(got_err, want_err) << path;
    }
  }
}

TEST(PathResolver, ResolvesMissingPathsAsRealPathOfMissingDoes) {
  testing::ScratchTree t;
  MakeTree(t);
  PathResolver resolve;
  for (int pass = 0; pass < 2; ++pass) {
    for (const std::string& path : Cases(t)) {
      auto want = RealPathOfMissing(path);
      auto got = resolve.RealOfMissing(path);
      ASSERT_EQ(got.ok(), want.ok()) << path;
      if (want) {
        EXPECT_EQ(got.value(), want.value()) << path;
      } else {
        EXPECT_EQ(got.error().err, want.error().err) << path;
      }
    }
  }
  // Through a link to the workspace, by the name the rules know it by.
  EXPECT_EQ(resolve.RealOfMissing(t.Out("to-ws/new/file")).value(),
            RealPath(t.ws()).value() + "/new/file");
}

}  // namespace
}  // namespace cordon::supervisor
