// Emulation fidelity with real tools (issue 28), beside the differential
// probe cases of fidelity_test.cc: pseudo-terminals (the tool's own pairs
// work, the caller's terminal stays refused), writes through a workspace
// symlink, rmdir of a full directory, and tar's directory times.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <pty.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <string>
#include <vector>

#include "tests/support/probe_test.h"
#include "tests/support/test_env.h"

namespace cordon::testing {
namespace {

bool OnPath(const std::string& tool) {
  return std::system(("command -v " + tool + " >/dev/null 2>&1").c_str()) == 0;
}

class TerminalTest : public ProbeTest {};

TEST_P(TerminalTest, TheToolsOwnPairWorks) {
  EXPECT_EQ(Probe("workspace-write", {"sys", "pty", "new"}), 0) << last_.err;
  EXPECT_EQ(Probe("workspace-write", {"sys", "pty", "openpty"}), 0) << last_.err;
  EXPECT_EQ(Probe("read-only", {"sys", "pty", "new"}), 0) << last_.err;
}

// The caller's terminal (here a pair the test made before the run, its
// master held by the test) is not the tool's, though the kernel would open it.
TEST_P(TerminalTest, APreExistingTerminalIsRefused) {
  int m = -1, s = -1;
  ASSERT_EQ(::openpty(&m, &s, nullptr, nullptr, nullptr), 0);
  char name[64];
  ASSERT_EQ(::ptsname_r(m, name, sizeof name), 0);
  ::close(s);
  EXPECT_EQ(Probe("workspace-write", {"sys", "pty", "open", name}), EACCES) << last_.err;
  ::close(m);
}

// /dev/tty is the kernel's: ENXIO while the tool has no controlling
// terminal (it starts in a session of its own), said as a refusal by
// nobody; its own pair once it took one (TIOCSCTTY). Shells and pyenv's shims
// open it and carry on without it, as they do bare without a terminal.
TEST_P(TerminalTest, DevTtyIsTheToolsOwnControllingTerminalOrNone) {
  EXPECT_EQ(Probe("workspace-write", {"sys", "pty", "ctty"}), 0) << last_.err;
  EXPECT_EQ(last_.err.find("/dev/tty"), std::string::npos) << last_.err;
}

// A pair the tool made, its master closed: the number may be anyone's next.
TEST_P(TerminalTest, APairWhoseMasterIsGoneIsRefused) {
  EXPECT_EQ(Probe("workspace-write", {"sys", "pty", "closed"}), EACCES) << last_.err;
}

INSTANTIATE_TEST_SUITE_P(Probes, TerminalTest, ProbeParams(), ProbeParamName);

// A master the tool did not make, inherited as its stdin: the pair is the
// caller's all the same, its subsidiary not the tool's.
TEST(TerminalInherited, AnInheritedMasterGrantsNoSubsidiary) {
  ScratchTree t;
  const int m = ::posix_openpt(O_RDWR | O_NOCTTY);
  ASSERT_GE(m, 0);
  ASSERT_EQ(::grantpt(m), 0);
  ASSERT_EQ(::unlockpt(m), 0);
  char name[64];
  ASSERT_EQ(::ptsname_r(m, name, sizeof name), 0);
  for (const char* probe : {PROBE_DYNAMIC, PROBE_STATIC}) {
    SCOPED_TRACE(probe);
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      ::dup2(m, 0);
      const int log = ::open(t.Out("log").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      ::dup2(log, 1);
      ::dup2(log, 2);
      const std::string ws = t.ws(), dir = ProbeDir();
      ExecCordon({"run", "--workspace", ws, "--profile", "workspace-write", "--approvals", "deny",
                  "--ro", dir, "--", probe, "sys", "pty", "open", name});
    }
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), EACCES) << ReadFile(t.Out("log"));
  }
  ::close(m);
}

class ToolFidelity : public ::testing::Test {
 protected:
  RunResult Run(const std::vector<std::string>& cmd) {
    std::vector<std::string> args = {"run", "--workspace", t_.ws(), "--profile",
                                     "workspace-write", "--approvals", "deny", "--"};
    args.insert(args.end(), cmd.begin(), cmd.end());
    return RunCordon(args);
  }
  ScratchTree t_;
};

TEST_F(ToolFidelity, PythonOpenpty) {
  if (!OnPath("python3")) GTEST_SKIP() << "python3 not installed";
  RunResult r = Run({"python3", "-c",
                     "import os; m,s=os.openpty(); os.write(s,b'x'); print(os.read(m,1))"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "b'x'\n") << r.err;
}

TEST_F(ToolFidelity, ScriptDrivesAPty) {
  if (!OnPath("script")) GTEST_SKIP() << "util-linux script not installed";
  RunResult r = Run({"script", "-qc", "echo inside", "/dev/null"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("inside"), std::string::npos) << r.out << r.err;
}

TEST_F(ToolFidelity, EchoThroughAWorkspaceSymlink) {
  WriteFile(t_.Ws("f"), "old\n");
  WriteFile(t_.Out("secret"), "outside\n");
  RunResult r = Run({"sh", "-c", "ln -s f l && echo new > l"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(ReadFile(t_.Ws("f")), "new\n");
  // A link that leads outside the workspace stays refused.
  r = Run({"sh", "-c", "ln -s " + t_.Out("secret") + " o && echo new > o"});
  EXPECT_NE(r.status, 0);
  EXPECT_EQ(ReadFile(t_.Out("secret")), "outside\n");
}

TEST_F(ToolFidelity, RmdirOfAFullDirectorySaysNotEmpty) {
  ASSERT_EQ(::mkdir(t_.Ws("d").c_str(), 0755), 0);
  WriteFile(t_.Ws("d/x"), "x");
  RunResult r = Run({"rmdir", "d"});
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find("Directory not empty"), std::string::npos) << r.err;
  EXPECT_TRUE(Exists(t_.Ws("d/x")));
}

// tar x keeps an extracted directory's time, as bare.
TEST_F(ToolFidelity, TarKeepsDirectoryTimes) {
  if (!OnPath("tar")) GTEST_SKIP() << "tar not installed";
  const std::string src = t_.Out("src");
  ASSERT_EQ(::mkdir(src.c_str(), 0755), 0);
  ASSERT_EQ(::mkdir((src + "/dd").c_str(), 0755), 0);
  WriteFile(src + "/dd/file", "x");
  const timespec ts[2] = {{1000000000, 0}, {1000000000, 0}};
  ASSERT_EQ(::utimensat(AT_FDCWD, (src + "/dd/file").c_str(), ts, 0), 0);
  ASSERT_EQ(::utimensat(AT_FDCWD, (src + "/dd").c_str(), ts, 0), 0);
  const std::string tarball = t_.Out("a.tar");
  ASSERT_EQ(std::system(("tar cf " + tarball + " -C " + src + " dd").c_str()), 0);
  RunResult r = RunCordon({"run", "--workspace", t_.ws(), "--profile", "workspace-write",
                           "--ro", t_.outside(), "--", "tar", "xf", tarball});
  ASSERT_EQ(r.status, 0) << r.err;
  struct stat st;
  ASSERT_EQ(::stat(t_.Ws("dd").c_str(), &st), 0);
  EXPECT_EQ(st.st_mtim.tv_sec, 1000000000);
  ASSERT_EQ(::stat(t_.Ws("dd/file").c_str(), &st), 0);
  EXPECT_EQ(st.st_mtim.tv_sec, 1000000000);
}

}  // namespace
}  // namespace cordon::testing
