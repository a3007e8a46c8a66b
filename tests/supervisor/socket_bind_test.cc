// BindAsWritten (supervisor/socket_bind.h): a Unix socket's name made in
// the directory held, whatever the written path's directories lead to from
// outside, with the written string for the socket's address.
#include "supervisor/socket_bind.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <string>

#include "base/fd.h"
#include "policy/socket_name.h"
#include "tests/support/test_env.h"

namespace cordon::supervisor {
namespace {

using ::cordon::testing::Exists;
using ::cordon::testing::ScratchTree;

class BindAsWrittenTest : public ::testing::Test {
 protected:
  void SetUp() override {
    held_dir_ = t_.Ws("held");
    ASSERT_EQ(::mkdir(held_dir_.c_str(), 0755), 0);
    held_ = Fd(::open(held_dir_.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    ASSERT_TRUE(held_.valid());
    sock_ = Fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    ASSERT_TRUE(sock_.valid());
  }
  // BindAsWritten as the emulator calls it; skips where no namespace can
  // be made (the emulator then binds through /proc/self/fd).
  int Bind(const std::string& written, const std::string& name) {
    auto layout = policy::MirrorSocketName(written, name);
    EXPECT_TRUE(layout.has_value()) << written;
    if (!layout) return -1;
    Result<int> r = BindAsWritten(sock_.get(), held_.get(), written, *layout);
    if (!r) {
      skipped_ = std::string(r.error().op) + ": " + std::strerror(r.error().err);
      return -1;
    }
    return r.value();
  }
  std::string SockName() {
    sockaddr_un sun{};
    socklen_t len = sizeof sun;
    if (::getsockname(sock_.get(), reinterpret_cast<sockaddr*>(&sun), &len) != 0) return "<error>";
    return std::string(sun.sun_path,
                       ::strnlen(sun.sun_path, len - offsetof(sockaddr_un, sun_path)));
  }
  bool IsSocket(const std::string& path) {
    struct stat st;
    return ::lstat(path.c_str(), &st) == 0 && S_ISSOCK(st.st_mode);
  }
  ScratchTree t_;
  std::string held_dir_;
  Fd held_, sock_;
  std::string skipped_;
};

#define SKIP_WITHOUT_NAMESPACE() \
  if (!skipped_.empty()) GTEST_SKIP() << "no namespace: " << skipped_

TEST_F(BindAsWrittenTest, TheAddressIsTheWrittenPath) {
  const std::string written = held_dir_ + "/s.sock";
  int err = Bind(written, "s.sock");
  SKIP_WITHOUT_NAMESPACE();
  ASSERT_EQ(err, 0) << std::strerror(err);
  EXPECT_EQ(SockName(), written) << "not /proc/self/fd/N/s.sock";
  EXPECT_TRUE(IsSocket(written));
  // The name connects, from outside any namespace.
  ASSERT_EQ(::listen(sock_.get(), 1), 0);
  Fd c(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_un sun{};
  sun.sun_family = AF_UNIX;
  std::memcpy(sun.sun_path, written.data(), written.size());
  EXPECT_EQ(::connect(c.get(), reinterpret_cast<sockaddr*>(&sun), sizeof sun), 0);
}

TEST_F(BindAsWrittenTest, ARelativeNameStaysRelative) {
  int err = Bind("s.sock", "s.sock");
  SKIP_WITHOUT_NAMESPACE();
  ASSERT_EQ(err, 0) << std::strerror(err);
  EXPECT_EQ(SockName(), "s.sock");
  EXPECT_TRUE(IsSocket(held_dir_ + "/s.sock"));
}

// The written path's directories are never looked up outside: here they
// lead, by a symlink, somewhere else, and the name is made in the held
// directory all the same (a tool that swaps a directory for a link after
// the supervisor's check gets the same).
TEST_F(BindAsWrittenTest, TheWrittenDirectoriesAreNotFollowed) {
  ASSERT_EQ(::symlink(t_.outside().c_str(), t_.Ws("link").c_str()), 0);
  const std::string written = t_.Ws("link/s.sock");
  int err = Bind(written, "s.sock");
  SKIP_WITHOUT_NAMESPACE();
  ASSERT_EQ(err, 0) << std::strerror(err);
  EXPECT_FALSE(Exists(t_.Out("s.sock"))) << "made where the link leads";
  EXPECT_TRUE(IsSocket(held_dir_ + "/s.sock"));
  EXPECT_EQ(SockName(), written);
}

// The kernel's answers come back as they are: a name that exists, and a
// directory its owner may not write (the child binds with no capability,
// root or not).
TEST_F(BindAsWrittenTest, TheKernelsRefusalsStand) {
  ASSERT_EQ(::mkdir((held_dir_ + "/taken").c_str(), 0755), 0);
  int err = Bind(held_dir_ + "/taken", "taken");
  SKIP_WITHOUT_NAMESPACE();
  EXPECT_EQ(err, EADDRINUSE);
  ASSERT_EQ(::chmod(held_dir_.c_str(), 0555), 0);
  err = Bind(held_dir_ + "/s.sock", "s.sock");
  ::chmod(held_dir_.c_str(), 0755);
  EXPECT_EQ(err, EACCES) << "bound with a capability the tool does not hold";
  EXPECT_FALSE(Exists(held_dir_ + "/s.sock"));
}

}  // namespace
}  // namespace cordon::supervisor
