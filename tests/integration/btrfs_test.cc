// btrfs makes and snapshots subvolumes with ioctls on a directory opened
// read-only, and no LSM path hook sees them: Landlock let a root tool put a
// new directory in any directory it could read (/etc, /usr on a btrfs
// root). The filter refuses those ioctls (supervisor/uapi.h); reflinks
// (FICLONE), which share btrfs's ioctl type, still work in the workspace.
// The workspace and the outside directory are each a fresh btrfs on a loop
// device; ground truth is the disk after the run.
#include <gtest/gtest.h>
#include <sys/mount.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <string>

#include "tests/support/probe_test.h"
#include "tests/support/test_env.h"

namespace cordon::testing {
namespace {

bool Sh(const std::string& cmd) { return std::system((cmd + " >/dev/null 2>&1").c_str()) == 0; }

class BtrfsTest : public ProbeTest {
 protected:
  void SetUp() override {
    if (!Sh("command -v mkfs.btrfs")) GTEST_SKIP() << "no mkfs.btrfs (Debian: btrfs-progs)";
    for (const std::string& dir : {t_.ws(), t_.outside()}) {
      std::string image = dir + ".img";
      if (!Sh("truncate -s 128M " + image + " && mkfs.btrfs -q -f " + image) ||
          !Sh("mount -o loop " + image + " " + dir)) {
        GTEST_SKIP() << "cannot mount a btrfs image on a loop device here";
      }
      mounted_.push_back(dir);
    }
    WriteFile(t_.Ws("src.txt"), "shared extent\n");
  }
  void TearDown() override {
    for (const auto& dir : mounted_) ::umount2(dir.c_str(), MNT_DETACH);
  }
  std::vector<std::string> mounted_;
};

TEST_P(BtrfsTest, NoSubvolumeOrSnapshotAppearsOutside) {
  const std::vector<std::string> ro = {"--ro", t_.outside()};
  // Control: unconfined, the same probe makes one (so the test can fail).
  ASSERT_EQ(std::system((std::string(std::get<0>(GetParam())) + " subvol-create " + t_.outside() +
                         " control")
                            .c_str()),
            0);
  ASSERT_TRUE(Exists(t_.Out("control")));
  EXPECT_EQ(Probe("workspace-write", {"subvol-create", t_.outside(), "evil"}, ro), EPERM)
      << last_.err;
  EXPECT_FALSE(Exists(t_.Out("evil")));
  EXPECT_EQ(Probe("workspace-write", {"snap-create", t_.outside(), t_.outside(), "copy"}, ro),
            EPERM)
      << last_.err;
  EXPECT_FALSE(Exists(t_.Out("copy")));
  // Not in the workspace either: a subvolume is no file the supervisor made.
  EXPECT_EQ(Probe("workspace-write", {"subvol-create", ".", "inside"}), EPERM) << last_.err;
  EXPECT_FALSE(Exists(t_.Ws("inside")));
}

TEST_P(BtrfsTest, ReflinksInTheWorkspaceWork) {
  EXPECT_EQ(Probe("workspace-write", {"reflink", "src.txt", "dst.txt"}), 0) << last_.err;
  EXPECT_EQ(ReadFile(t_.Ws("dst.txt")), "shared extent\n");
}

INSTANTIATE_TEST_SUITE_P(Probes, BtrfsTest, ProbeParams(), ProbeParamName);

}  // namespace
}  // namespace cordon::testing
