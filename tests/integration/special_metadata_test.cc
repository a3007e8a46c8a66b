// The metadata of a FIFO or a socket in a writable place: it holds no
// content, so its mode, owner and times change like a regular file's
// (Python's multiprocessing forkserver binds a socket in TMPDIR and chmods
// it 0600). Set-id bits stay refused as for files, truncate is the
// kernel's EINVAL, and a device stays refused (policy table:
// tests/policy/decide_kinds_test.cc). The real cordon binary, real
// programs, the disk read outside afterwards.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "tests/support/test_env.h"

namespace cordon::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

class SpecialMetadataTest : public ::testing::Test {
 protected:
  RunResult Run(const std::vector<std::string>& cmd) {
    std::vector<std::string> args = {"run",         "--profile", "workspace-write",
                                     "--workspace", t_.ws(),     "--"};
    args.insert(args.end(), cmd.begin(), cmd.end());
    return RunCordon(args, t_.ws(), {"HOME=/nonexistent"});
  }
  mode_t ModeOf(const std::string& path) {
    struct stat st;
    return ::lstat(path.c_str(), &st) == 0 ? st.st_mode : 0;
  }
  ScratchTree t_;
};

// Python 3.14's default start method on Linux; asked for by name here.
TEST_F(SpecialMetadataTest, PythonsForkserverPoolRuns) {
  if (!HavePython()) GTEST_SKIP() << "no /usr/bin/python3";
  RunResult r = Run({"/usr/bin/python3", "-c",
                     "import multiprocessing as m\n"
                     "if __name__ == '__main__':\n"
                     "  with m.get_context('forkserver').Pool(2) as p: print(p.map(abs, [-1]))\n"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("[1]")) << r.err;
  EXPECT_THAT(r.err, Not(HasSubstr("refused"))) << r.err;
}

// A socket the tool binds in the workspace: chmod, chown to itself and
// utimes work; set-id bits and truncate do not.
TEST_F(SpecialMetadataTest, ASocketBoundInTheWorkspaceTakesAModeAndTimes) {
  if (!HavePython()) GTEST_SKIP() << "no /usr/bin/python3";
  RunResult r = Run({"/usr/bin/python3", "-c",
                     "import os, socket\n"
                     "s = socket.socket(socket.AF_UNIX); s.bind('sock')\n"
                     "os.chmod('sock', 0o600); os.chown('sock', os.getuid(), os.getgid())\n"
                     "os.utime('sock', (1000000000, 1000000000)); print('changed')\n"
                     "try: os.chmod('sock', 0o4600)\n"
                     "except PermissionError: print('setuid refused')\n"
                     "try: os.truncate('sock', 0)\n"
                     "except OSError as e: print('truncate', e.errno)\n"
                     "import fcntl; fd = os.open('sock', os.O_PATH)\n"
                     "try: os.truncate('/proc/self/fd/%d' % fd, 0)\n"
                     "except OSError as e: print('fd truncate', e.errno)\n"
                     "try: fcntl.ioctl(fd, 0x40086602, b'\\0\\0\\0\\0')\n"
                     "except OSError as e: print('fd ioctl', e.errno)\n"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("changed")) << r.err;
  EXPECT_THAT(r.out, HasSubstr("setuid refused")) << r.err;
  EXPECT_THAT(r.out, HasSubstr("truncate 22")) << r.err;
  // Through an O_PATH descriptor the supervisor opens nothing that is not a
  // regular file (truncate: the kernel's EINVAL, not the open's ENXIO); an
  // ioctl on one is EBADF, as from the kernel.
  EXPECT_THAT(r.out, HasSubstr("fd truncate 22")) << r.err;
  EXPECT_THAT(r.out, HasSubstr("fd ioctl 9")) << r.err;
  const mode_t mode = ModeOf(t_.Ws("sock"));
  EXPECT_TRUE(S_ISSOCK(mode));
  EXPECT_EQ(mode & 07777, 0600u);
  struct stat st;
  ASSERT_EQ(::lstat(t_.Ws("sock").c_str(), &st), 0);
  EXPECT_EQ(st.st_mtime, 1000000000);
}

// A FIFO the workspace held at launch is carved out of it; one that
// appears during the run (made by another process of the user's, so not
// the run's own, FifoTest) takes a mode.
TEST_F(SpecialMetadataTest, AFifoMadeDuringTheRunTakesAMode) {
  const std::string fifo = t_.Ws("fifo");
  std::thread maker([&] {
    for (int i = 0; i < 400 && !Exists(t_.Ws("ready")); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(25));
    }
    ::mkfifo(fifo.c_str(), 0644);
  });
  RunResult r = Run({"sh", "-c",
                     "touch ready; i=0; while [ ! -p fifo ] && [ $i -lt 400 ]; do sleep 0.05; "
                     "i=$((i+1)); done; chmod 600 fifo && echo chmod-ok; chmod u+s fifo || "
                     "echo setuid-refused"});
  maker.join();
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("chmod-ok")) << r.err;
  EXPECT_THAT(r.out, HasSubstr("setuid-refused")) << r.err;
  const mode_t mode = ModeOf(fifo);
  EXPECT_TRUE(S_ISFIFO(mode));
  EXPECT_EQ(mode & 07777, 0600u);
}

// A socket the workspace held at launch stays in the grant (docs/policy.md,
// "Hard links and special files"): its mode may change too.
TEST_F(SpecialMetadataTest, ASocketMadeBeforeTheRunTakesAMode) {
  const std::string path = t_.Ws("before.sock");
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(fd, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  ASSERT_LT(path.size(), sizeof addr.sun_path);
  path.copy(addr.sun_path, path.size());
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ::close(fd);
  ASSERT_EQ(::chmod(path.c_str(), 0755), 0);
  RunResult r =
      Run({"sh", "-c", "chmod 600 before.sock && touch -d 2001-01-01 before.sock && echo ok"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("ok")) << r.err;
  EXPECT_EQ(ModeOf(path) & 07777, 0600u);
}

}  // namespace
}  // namespace cordon::testing
