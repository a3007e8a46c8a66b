#include "supervisor/remove_tree.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/support/test_env.h"

namespace cordon::supervisor {
namespace {

using namespace cordon::testing;

TEST(RemoveTree, RemovesEverythingAndFollowsNoLink) {
  ScratchTree t;
  WriteFile(t.Out("keep.txt"), "keep");
  ::mkdir(t.Out("keepdir").c_str(), 0755);
  WriteFile(t.Out("keepdir/f"), "f");
  std::string root = t.Ws("tree");
  ::mkdir(root.c_str(), 0755);
  ::mkdir((root + "/sub").c_str(), 0000);  // no permissions at all
  ::chmod((root + "/sub").c_str(), 0700);
  WriteFile(root + "/sub/odd name\n", "x");
  ::chmod((root + "/sub").c_str(), 0000);
  ASSERT_EQ(::symlink(t.Out("keep.txt").c_str(), (root + "/link").c_str()), 0);
  ASSERT_EQ(::symlink(t.Out("keepdir").c_str(), (root + "/dirlink").c_str()), 0);
  auto r = RemoveTree(root);
  ASSERT_TRUE(r.ok()) << Describe(r.error());
  EXPECT_FALSE(Exists(root));
  EXPECT_EQ(ReadFile(t.Out("keep.txt")), "keep");
  EXPECT_EQ(ReadFile(t.Out("keepdir/f")), "f");
}

TEST(RemoveTree, RefusesASymlinkAsTheRoot) {
  ScratchTree t;
  ::mkdir(t.Out("d").c_str(), 0755);
  WriteFile(t.Out("d/f"), "f");
  ::symlink(t.Out("d").c_str(), t.Ws("l").c_str());
  EXPECT_FALSE(RemoveTree(t.Ws("l")).ok());
  EXPECT_EQ(ReadFile(t.Out("d/f")), "f");
}

}  // namespace
}  // namespace cordon::supervisor
