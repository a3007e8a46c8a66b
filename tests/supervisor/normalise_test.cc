// Normalisation at load: realpath of every rule, missing paths dropped and
// listed, the protected-path scan when the kernel layer needs it.
#include "supervisor/load/normalise.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/support/test_env.h"

namespace cordon::supervisor {
namespace {

using ::cordon::policy::Access;
using ::cordon::policy::LinkMode;
using ::cordon::policy::PathRule;
using ::cordon::policy::Policy;
using ::testing::HasSubstr;

TEST(NormalisePolicy, MissingPathsAreDroppedAndListed) {
  testing::ScratchTree t;
  ASSERT_EQ(::mkdir(t.Out("real").c_str(), 0755), 0);
  Policy p;
  p.paths = {PathRule::ReadOnly(t.Out("real")), PathRule::ReadOnly(t.Out("missing"))};
  NormalisePolicy(p);
  ASSERT_EQ(p.paths.size(), 1u);
  ASSERT_EQ(p.dropped.size(), 1u);
  EXPECT_EQ(p.dropped[0].path, t.Out("missing"));
  EXPECT_THAT(p.dropped[0].reason, HasSubstr("No such file"));
}

// A denial of a path that does not exist yet fails closed: it is kept, by
// the name it would have, so the run cannot create it; a read-write file
// whose directory exists is kept (the run may create it); a read-write path
// deeper than that and a read-only one are dropped: nothing to grant.
TEST(NormalisePolicy, MissingDenialsAndFilesToCreateAreKept) {
  testing::ScratchTree t;
  ASSERT_EQ(::mkdir(t.Out("real").c_str(), 0755), 0);
  ASSERT_EQ(::symlink(t.Out("real").c_str(), t.Out("link").c_str()), 0);
  Policy p;
  p.paths = {PathRule::Denied(t.Out("link/new/.env")), PathRule::ReadWrite(t.Out("link/out.txt")),
             PathRule::ReadWrite(t.Out("link/no/out.txt")), PathRule::ReadOnly(t.Out("nothere"))};
  NormalisePolicy(p);
  ASSERT_EQ(p.paths.size(), 2u);
  EXPECT_EQ(p.paths[0].path, t.Out("real/new/.env"));
  EXPECT_EQ(p.paths[0].access, Access::kDenied);
  EXPECT_EQ(p.paths[1].path, t.Out("real/out.txt"));
  EXPECT_EQ(p.paths[1].access, Access::kReadWrite);
  ASSERT_EQ(p.dropped.size(), 2u);
  EXPECT_EQ(p.dropped[0].path, t.Out("link/no/out.txt"));
  EXPECT_EQ(p.dropped[1].path, t.Out("nothere"));
  ASSERT_EQ(p.notes.size(), 2u);
  EXPECT_THAT(p.notes[0], HasSubstr("stays denied"));
  EXPECT_THAT(p.notes[1], HasSubstr("may create it"));
}

TEST(NormalisePolicy, ResolvesSymlinksAndFindsProtectedPaths) {
  testing::ScratchTree t;
  ASSERT_EQ(::mkdir(t.Out("real").c_str(), 0755), 0);
  ASSERT_EQ(::symlink(t.Out("real").c_str(), t.Out("link").c_str()), 0);
  ASSERT_EQ(::mkdir(t.Ws(".git").c_str(), 0755), 0);
  testing::WriteFile(t.Ws(".git/config"), "");
  Policy p;
  p.workspace = t.ws();
  p.paths = {PathRule::ReadOnly(t.Out("link"))};
  NormalisePolicy(p);
  ASSERT_EQ(p.paths.size(), 1u);
  EXPECT_EQ(p.paths[0].path, t.Out("real"));
  // Strict links and asked deletes: the supervisor matches the patterns on
  // every mutation, so no walk of the workspace is made.
  EXPECT_TRUE(p.protected_paths.empty());
  // links: kernel leaves writes to Landlock, which needs the carve-outs.
  Policy k;
  k.workspace = t.ws();
  k.links = LinkMode::kKernel;
  NormalisePolicy(k);
  EXPECT_EQ(k.protected_paths, std::vector<std::string>{t.Ws(".git/config")});
}

}  // namespace
}  // namespace cordon::supervisor
