// The bounded tree check on real trees: limits at and just past the edge,
// links and special files refused, honest trees admitted. The trees of more
// than a few directories are walked by two threads (walkers == 2): the
// limits count across them and one refusal is the verdict.
#include "supervisor/walk/tree_check.h"

#include <dirent.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <string>
#include <utility>
#include <vector>

#include "base/fd.h"
#include "tests/support/test_env.h"

namespace cordon::testing {
namespace {

using supervisor::CheckTrees;
using supervisor::TreeLimits;
using supervisor::TreeVerdict;

class TreeCheckTest : public ::testing::Test {
 protected:
  TreeVerdict Check(const std::vector<std::string>& roots = {"."}, TreeLimits limits = {}) {
    Fd ws(::open(t_.ws().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    EXPECT_TRUE(ws.valid());
    return CheckTrees(ws.get(), roots, limits);
  }
  // `dirs` directories d<N> of `files` files f<M> each, under ws/<prefix>.
  void Fill(int dirs, int files, const std::string& prefix = "") {
    for (int d = 0; d < dirs; ++d) {
      std::string dir = t_.Ws(prefix + "d" + std::to_string(d));
      ASSERT_EQ(::mkdir(dir.c_str(), 0755), 0);
      for (int f = 0; f < files; ++f) {
        std::string file = dir + "/f" + std::to_string(f);
        Fd fd(::open(file.c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0644));
        ASSERT_TRUE(fd.valid());
      }
    }
  }
  // A chain of `levels` nested directories; returns the deepest.
  std::string Chain(int levels) {
    std::string p = t_.ws();
    for (int i = 0; i < levels; ++i) {
      p += "/l";
      EXPECT_EQ(::mkdir(p.c_str(), 0755), 0);
    }
    return p;
  }
  // A chain of 64 levels passes; one level more is refused. Returns both
  // verdicts for the caller's own checks.
  std::pair<TreeVerdict, TreeVerdict> DepthEdge() {
    std::string deepest = Chain(64);
    TreeVerdict ok = Check();
    EXPECT_TRUE(ok.ok) << ok.reason;
    EXPECT_EQ(::mkdir((deepest + "/l").c_str(), 0755), 0);  // level 65
    TreeVerdict refused = Check();
    EXPECT_FALSE(refused.ok);
    EXPECT_NE(refused.reason.find("deeper than 64 levels"), std::string::npos) << refused.reason;
    return {ok, refused};
  }
  ScratchTree t_;
};

TEST_F(TreeCheckTest, ExactlyTenThousandEntriesPass) {
  Fill(100, 99);  // 100 dirs + 9,900 files
  TreeVerdict v = Check();
  EXPECT_TRUE(v.ok) << v.reason;
  EXPECT_EQ(v.entries, 10000u);
  EXPECT_EQ(v.walkers, 2u) << "counted across both walkers";
}

TEST_F(TreeCheckTest, TenThousandAndOneEntriesAreRefusedWhole) {
  Fill(100, 99);
  WriteFile(t_.Ws("one-more"), "x");
  TreeVerdict v = Check();
  EXPECT_FALSE(v.ok);
  EXPECT_EQ(v.entries, 10001u) << "the walk stops at the first entry past the limit";
  EXPECT_EQ(v.walkers, 2u);
  EXPECT_NE(v.reason.find("more than 10000 entries"), std::string::npos) << v.reason;
  EXPECT_NE(v.reason.find("max_tree_entries"), std::string::npos) << v.reason;
  EXPECT_NE(v.reason.find(v.path), std::string::npos) << "the reason names the path";
  EXPECT_FALSE(v.path.empty());
}

TEST_F(TreeCheckTest, EntryLimitCountsAllRootsTogether) {
  Fill(2, 4);  // d0, d1: 5 entries each
  EXPECT_TRUE(Check({"d0"}, {5, 64}).ok);
  EXPECT_TRUE(Check({"d1"}, {5, 64}).ok);
  TreeVerdict v = Check({"d0", "d1"}, {5, 64});
  EXPECT_FALSE(v.ok);
  EXPECT_EQ(v.path.rfind("d1/", 0), 0u) << v.path;
}

TEST_F(TreeCheckTest, EntryLimitCountsManyRootsTogetherAcrossWalkers) {
  Fill(100, 99);  // 100 roots of 99 entries each: 9,900 below them
  std::vector<std::string> roots;
  for (int d = 0; d < 100; ++d) roots.push_back("d" + std::to_string(d));
  TreeVerdict ok = Check(roots, {9900, 64});
  EXPECT_TRUE(ok.ok) << ok.reason;
  EXPECT_EQ(ok.entries, 9900u);
  EXPECT_EQ(ok.walkers, 2u);
  TreeVerdict v = Check(roots, {9899, 64});
  EXPECT_FALSE(v.ok);
  EXPECT_EQ(v.entries, 9900u);
  EXPECT_NE(v.reason.find("more than 9899 entries"), std::string::npos) << v.reason;
  EXPECT_EQ(v.walkers, 2u);
}

TEST_F(TreeCheckTest, DeepRefusalInOneSubtreeWhileAnotherIsLarge) {
  Fill(60, 100);  // the large subtrees
  std::string deepest = Chain(30);
  ASSERT_EQ(::mkfifo((deepest + "/pipe").c_str(), 0644), 0);
  std::string want;
  for (int i = 0; i < 30; ++i) want += "l/";
  want += "pipe";
  TreeVerdict v = Check();
  EXPECT_FALSE(v.ok);
  EXPECT_EQ(v.walkers, 2u);
  EXPECT_EQ(v.path, want);
  EXPECT_NE(v.reason.find("'" + want + "'"), std::string::npos) << v.reason;
  EXPECT_NE(v.reason.find("fifo"), std::string::npos) << v.reason;
}

TEST_F(TreeCheckTest, DepthLimitHoldsInEverySubtree) {
  Fill(60, 100);
  auto [ok, refused] = DepthEdge();
  EXPECT_EQ(ok.walkers, 2u);
  EXPECT_EQ(refused.path.size(), 65u * 2 - 1) << refused.path;
}

// A refusal in two subtrees, met by two walkers: one verdict, whose path and
// reason are those of one real offending entry.
TEST_F(TreeCheckTest, RefusalsInTwoSubtreesGiveOneCoherentVerdict) {
  Fill(40, 100, "a");
  Fill(40, 100, "b");
  ASSERT_EQ(::mkfifo(t_.Ws("ad7/pipe").c_str(), 0644), 0);
  ASSERT_EQ(::symlink("f0", t_.Ws("bd7/link").c_str()), 0);
  for (int i = 0; i < 20; ++i) {
    TreeVerdict v = Check();
    ASSERT_FALSE(v.ok);
    EXPECT_EQ(v.walkers, 2u);
    ASSERT_TRUE(v.path == "ad7/pipe" || v.path == "bd7/link") << v.path;
    EXPECT_NE(v.reason.find("'" + v.path + "'"), std::string::npos) << v.reason;
    const char* kind = v.path == "ad7/pipe" ? "fifo" : "symbolic link";
    EXPECT_NE(v.reason.find(kind), std::string::npos) << v.reason;
    EXPECT_EQ(v.reason.find(v.path == "ad7/pipe" ? "symbolic link" : "fifo"), std::string::npos)
        << v.reason;
  }
}

TEST_F(TreeCheckTest, ABaseListedBeforeIsListedWhole) {
  Fill(3, 10);
  Fd ws(::open(t_.ws().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  ASSERT_TRUE(ws.valid());
  EXPECT_EQ(CheckTrees(ws.get(), {"."}, {}).entries, 33u);
  char buf[4096];
  while (::getdents64(ws.get(), buf, sizeof buf) > 0) {
  }
  EXPECT_EQ(CheckTrees(ws.get(), {"."}, {}).entries, 33u) << "the base's offset is not the walk's";
}

TEST_F(TreeCheckTest, SmallTreeIsWalkedByOneThread) {
  Fill(3, 10);
  TreeVerdict v = Check();
  EXPECT_TRUE(v.ok) << v.reason;
  EXPECT_EQ(v.entries, 33u);
  EXPECT_EQ(v.walkers, 1u);
}

TEST_F(TreeCheckTest, SixtyFourLevelsPassAndSixtyFiveAreRefused) {
  auto [ok, refused] = DepthEdge();
  EXPECT_EQ(ok.entries, 64u);
  EXPECT_NE(refused.reason.find("max_tree_depth"), std::string::npos) << refused.reason;
}

TEST_F(TreeCheckTest, LimitsArePolicySettings) {
  Fill(1, 3);  // 4 entries, depth 2
  EXPECT_TRUE(Check({"."}, {4, 2}).ok);
  EXPECT_FALSE(Check({"."}, {3, 2}).ok);
  EXPECT_FALSE(Check({"."}, {4, 1}).ok);
}

TEST_F(TreeCheckTest, SymlinkToOutsideIsRefused) {
  WriteFile(t_.Out("secret.txt"), "secret\n");
  ASSERT_EQ(::mkdir(t_.Ws("sub").c_str(), 0755), 0);
  ASSERT_EQ(::symlink(t_.Out("secret.txt").c_str(), t_.Ws("sub/link").c_str()), 0);
  TreeVerdict v = Check();
  EXPECT_FALSE(v.ok);
  EXPECT_EQ(v.path, "sub/link");
  EXPECT_NE(v.reason.find("symbolic link"), std::string::npos) << v.reason;
}

TEST_F(TreeCheckTest, SymlinkInsideAndDirectoryLinksAreRefusedToo) {
  WriteFile(t_.Ws("a.txt"), "a");
  ASSERT_EQ(::symlink("a.txt", t_.Ws("b.txt").c_str()), 0);
  EXPECT_FALSE(Check().ok);
  ASSERT_EQ(::unlink(t_.Ws("b.txt").c_str()), 0);
  EXPECT_TRUE(Check().ok);
  ASSERT_EQ(::symlink(t_.outside().c_str(), t_.Ws("out").c_str()), 0);
  TreeVerdict v = Check({"out"});
  EXPECT_FALSE(v.ok) << "a root that is a link is refused, not followed";
  EXPECT_FALSE(Check({"out/secret.txt"}).ok) << "a link on the way to a root is refused";
}

TEST_F(TreeCheckTest, FifoIsRefused) {
  WriteFile(t_.Ws("a.txt"), "a");
  EXPECT_TRUE(Check().ok);
  ASSERT_EQ(::mkfifo(t_.Ws("pipe").c_str(), 0644), 0);
  TreeVerdict v = Check();
  EXPECT_FALSE(v.ok);
  EXPECT_EQ(v.path, "pipe");
  EXPECT_NE(v.reason.find("fifo"), std::string::npos) << v.reason;
}

TEST_F(TreeCheckTest, SocketIsRefused) {
  int s = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(s, 0);
  Fd sock(s);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::string path = t_.Ws("sock");
  ASSERT_LT(path.size(), sizeof(addr.sun_path));
  std::copy(path.begin(), path.end(), addr.sun_path);
  ASSERT_EQ(::bind(s, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  TreeVerdict v = Check();
  EXPECT_FALSE(v.ok);
  EXPECT_NE(v.reason.find("socket"), std::string::npos) << v.reason;
}

TEST_F(TreeCheckTest, HardLinkedFileIsRefused) {
  WriteFile(t_.Ws("a.txt"), "a");
  ASSERT_EQ(::link(t_.Ws("a.txt").c_str(), t_.Ws("b.txt").c_str()), 0);
  TreeVerdict v = Check();
  EXPECT_FALSE(v.ok);
  EXPECT_NE(v.reason.find("hard-linked"), std::string::npos) << v.reason;
}

TEST_F(TreeCheckTest, SingleFileRootAndSubdirectoryRootPass) {
  ASSERT_EQ(::mkdir(t_.Ws("src").c_str(), 0755), 0);
  WriteFile(t_.Ws("src/a.c"), "int x;\n");
  TreeVerdict f = Check({"src/a.c"});
  EXPECT_TRUE(f.ok) << f.reason;
  EXPECT_EQ(f.entries, 1u);
  TreeVerdict d = Check({"src"});
  EXPECT_TRUE(d.ok) << d.reason;
  EXPECT_EQ(d.entries, 1u);
}

TEST_F(TreeCheckTest, MissingAbsoluteAndParentRootsAreRefused) {
  WriteFile(t_.Ws("a.txt"), "a");
  EXPECT_TRUE(Check({"a.txt"}).ok);
  TreeVerdict through_file = Check({"a.txt/x"});
  EXPECT_FALSE(through_file.ok);
  EXPECT_NE(through_file.reason.find("not a directory"), std::string::npos) << through_file.reason;
  EXPECT_FALSE(Check({"nope"}).ok);
  EXPECT_FALSE(Check({t_.ws()}).ok);
  EXPECT_FALSE(Check({"../outside"}).ok);
}

}  // namespace
}  // namespace cordon::testing
