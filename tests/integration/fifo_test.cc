// FIFOs the tool makes (policy/decide.h, supervisor/emulator_fifo.cc):
// mkfifo works in the workspace and in the run's TMPDIR, both ends open
// as the tool's own would (a blocking open waits for the other end), the
// steps of GNU make 4.4's FIFO jobserver work, and what the run made is
// gone when it ends. Devices stay refused, and so does a FIFO the user had
// (a reader outside may be at its other end). Real sh and python3 under
// the real cordon binary, on both rungs.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <string>
#include <vector>

#include "tests/support/test_env.h"

namespace cordon::testing {
namespace {

using ::testing::HasSubstr;

class FifoTest : public ::testing::TestWithParam<bool> {
 protected:
  RunResult Run(const std::vector<std::string>& cmd) {
    std::vector<std::string> args = {"run", "--profile", "workspace-write", "--workspace", t_.ws()};
    if (GetParam()) args.push_back("--test-force-notify-all");
    // A FIFO whose other end never comes would hold the test: 20 s at most.
    args.insert(args.end(), {"--", "timeout", "20"});
    args.insert(args.end(), cmd.begin(), cmd.end());
    return RunCordon(args, t_.ws());
  }
  ScratchTree t_;
};

TEST_P(FifoTest, MkfifoWorksInTheWorkspaceAndTheRunsTmpdir) {
  // A .git beside it: the workspace root is carved (protected paths), so a
  // new name there is read through the broker.
  ASSERT_EQ(::mkdir(t_.Ws(".git").c_str(), 0755), 0);
  RunResult r =
      Run({"sh", "-c",
           "mkfifo f && (echo to-ws > f &) && cat f && "
           "mkfifo \"$TMPDIR/g\" && (cat \"$TMPDIR/g\" &) && echo to-tmp > \"$TMPDIR/g\" && "
           "sleep 0.2 && test -p f && echo made"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("to-ws\nto-tmp\nmade")) << r.err;
  EXPECT_FALSE(Exists(t_.Ws("f"))) << "a FIFO the run made is removed at its end";
}

TEST_P(FifoTest, AFifoRenamedInTheRunIsRemovedByItsNewName) {
  RunResult r =
      Run({"sh", "-c", "mkfifo f && mv f g && mkdir d && mkfifo h && mv h d/i && echo moved"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("moved")) << r.err;
  EXPECT_FALSE(Exists(t_.Ws("g")));
  EXPECT_FALSE(Exists(t_.Ws("d/i")));
  EXPECT_TRUE(Exists(t_.Ws("d"))) << "only the FIFOs go";
}

TEST_P(FifoTest, PythonsMkfifoWaitsForTheOtherEnd) {
  if (!HavePython()) GTEST_SKIP() << "no /usr/bin/python3";
  RunResult r = Run({"/usr/bin/python3", "-c",
                     "import os, threading, time\n"
                     "os.mkfifo('p')\n"
                     "got = []\n"
                     "t = threading.Thread(target=lambda: got.append(open('p').read()))\n"
                     "t.start(); time.sleep(0.2)\n"
                     "with open('p', 'w') as w: w.write('through')\n"
                     "t.join(); print(got[0])\n"
                     "try: os.open('p', os.O_WRONLY | os.O_NONBLOCK)\n"
                     "except OSError as e: print('nonblock', e.errno)\n"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("through\n")) << r.err;
  EXPECT_THAT(r.out, HasSubstr("nonblock 6")) << "ENXIO with no reader, as from the kernel";
}

// GNU make 4.4's FIFO jobserver, step by step (Debian 12's make is 4.3,
// so make itself cannot show it here): the top make makes a FIFO in
// $TMPDIR, holds it open read-write and writes its tokens; a sub-make
// opens it by name read-write (--jobserver-auth=fifo:PATH), takes a
// token and gives it back.
TEST_P(FifoTest, MakesFifoJobserverStepsWork) {
  RunResult r = Run({"sh", "-c",
                     "mkfifo \"$TMPDIR/js\" && exec 3<>\"$TMPDIR/js\" && printf + >&3 && "
                     "sh -c 'exec 4<>\"$1\" && dd bs=1 count=1 <&4 2>/dev/null && printf + >&4' "
                     "sub \"$TMPDIR/js\" && dd bs=1 count=1 <&3 2>/dev/null && echo ' passed'"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "++ passed\n") << r.err;
  EXPECT_THAT(r.err, ::testing::Not(HasSubstr("refused"))) << r.err;
}

TEST_P(FifoTest, DevicesAndTheUsersFifoStayRefused) {
  ASSERT_EQ(::mkfifo(t_.Ws("users").c_str(), 0644), 0);
  RunResult r = Run({"sh", "-c",
                     "mknod d c 1 3; echo dev=$?; echo x > users; echo users=$?; "
                     "mkfifo mine && ln mine linked && echo y > linked; echo linked=$?"});
  EXPECT_THAT(r.out, HasSubstr("dev=1")) << r.err;
  EXPECT_FALSE(Exists(t_.Ws("d")));
  EXPECT_THAT(r.out, HasSubstr("users=2")) << r.err;
  EXPECT_THAT(r.err, HasSubstr("special file")) << r.err;
  EXPECT_THAT(r.out, HasSubstr("linked=2")) << "a FIFO the run made, given a second name";
  struct stat st;
  ASSERT_EQ(::lstat(t_.Ws("users").c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode)) << "the user's FIFO stays";
}

INSTANTIATE_TEST_SUITE_P(Rungs, FifoTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& i) {
                           return i.param ? "notify_all" : "landlock";
                         });

}  // namespace
}  // namespace cordon::testing
