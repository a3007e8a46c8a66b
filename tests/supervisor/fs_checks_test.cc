#include "supervisor/fs_checks.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/fd.h"
#include "tests/support/test_env.h"

namespace cordon::supervisor {
namespace {

using ::cordon::policy::LinkMode;

using ::cordon::testing::ScratchTree;
using ::cordon::testing::WriteFile;

class FsChecksTest : public ::testing::Test {
 protected:
  void SetUp() override {
    WriteFile(t_.Ws("plain"), "x");
    WriteFile(t_.Ws("linked"), "x");
    ASSERT_EQ(::link(t_.Ws("linked").c_str(), t_.Out("other-name").c_str()), 0);
    ASSERT_EQ(::symlink(t_.Out("other-name").c_str(), t_.Ws("sym").c_str()), 0);
    ASSERT_EQ(::mkfifo(t_.Ws("fifo").c_str(), 0644), 0);
    ASSERT_EQ(::mkdir(t_.Ws("dir").c_str(), 0755), 0);
    dir_.reset(::open(t_.ws().c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    ASSERT_TRUE(dir_.valid());
  }
  ScratchTree t_;
  Fd dir_;
};

TEST_F(FsChecksTest, EntryTable) {
  struct Case {
    const char* name;
    FsOp op;
    LinkMode mode;
    int err;
  } cases[] = {
      {"plain", FsOp::kWrite, LinkMode::kStrict, 0},      // the honest neighbour
      {"plain", FsOp::kDelete, LinkMode::kStrict, 0},
      {"new-file", FsOp::kWrite, LinkMode::kStrict, 0},    // creation
      {"new-file", FsOp::kDelete, LinkMode::kStrict, ENOENT},
      {"dir", FsOp::kDelete, LinkMode::kStrict, 0},
      {"sym", FsOp::kWrite, LinkMode::kStrict, EACCES},
      {"sym", FsOp::kDelete, LinkMode::kStrict, EACCES},
      {"linked", FsOp::kWrite, LinkMode::kStrict, EACCES},
      {"linked", FsOp::kDelete, LinkMode::kStrict, EACCES},
      {"fifo", FsOp::kWrite, LinkMode::kStrict, EACCES},
      {"sym", FsOp::kWrite, LinkMode::kKernel, 0},
      {"linked", FsOp::kWrite, LinkMode::kKernel, 0},
      {"fifo", FsOp::kWrite, LinkMode::kKernel, EACCES},  // special files always
      {"..", FsOp::kWrite, LinkMode::kStrict, EINVAL},
      {"dir/plain", FsOp::kWrite, LinkMode::kStrict, EINVAL},
      {"", FsOp::kWrite, LinkMode::kStrict, EINVAL},
  };
  for (const auto& c : cases) {
    FsAdmission a = CheckEntry(dir_.get(), c.name, c.op, c.mode);
    EXPECT_EQ(a.err, c.err) << c.name << " " << static_cast<int>(c.op) << " " << a.reason;
  }
}

TEST_F(FsChecksTest, SocketAndDeviceAreSpecial) {
  int s = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(s, 0);
  Fd sock(s);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::string path = t_.Ws("sock");
  ASSERT_LT(path.size(), sizeof(addr.sun_path));
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  ASSERT_EQ(::bind(s, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  EXPECT_EQ(CheckEntry(dir_.get(), "sock", FsOp::kDelete, LinkMode::kStrict).err, EACCES);
  Fd dev(::open("/dev", O_PATH | O_DIRECTORY | O_CLOEXEC));
  EXPECT_EQ(CheckEntry(dev.get(), "null", FsOp::kWrite, LinkMode::kStrict).err, EACCES);
}

TEST_F(FsChecksTest, OpenFdIsJudgedByWhatItIs) {
  Fd plain(::openat(dir_.get(), "plain", O_RDONLY | O_CLOEXEC));
  EXPECT_EQ(CheckOpenFd(plain.get(), FsOp::kWrite, LinkMode::kStrict).err, 0);
  Fd linked(::openat(dir_.get(), "linked", O_RDONLY | O_CLOEXEC));
  EXPECT_EQ(CheckOpenFd(linked.get(), FsOp::kWrite, LinkMode::kStrict).err, EACCES);
  Fd sym(::openat(dir_.get(), "sym", O_PATH | O_NOFOLLOW | O_CLOEXEC));
  EXPECT_EQ(CheckOpenFd(sym.get(), FsOp::kDelete, LinkMode::kStrict).err, EACCES);
  // A link count that changes after the open is seen: the check reads the
  // inode, not a name.
  ASSERT_EQ(::link(t_.Ws("plain").c_str(), t_.Out("late").c_str()), 0);
  EXPECT_EQ(CheckOpenFd(plain.get(), FsOp::kWrite, LinkMode::kStrict).err, EACCES);
}

}  // namespace
}  // namespace cordon::supervisor
