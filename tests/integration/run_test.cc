// cordon run end to end: the real binary, the real kernel, a probe tool
// (dynamic and static) whose exit status is the errno it got. Ground truth
// is checked on disk from outside the sandbox.
#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/fs.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/shm.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <thread>

#include "base/fd.h"
#include "tests/support/child_process.h"
#include "tests/support/probe_test.h"
#include "tests/support/test_env.h"

namespace cordon::testing {
namespace {

class RunTest : public ProbeTest {
 protected:
  void SetUp() override {
    WriteFile(t_.Ws("inside.txt"), "inside\n");
    WriteFile(t_.Out("secret.txt"), "secret\n");
  }
};

TEST_P(RunTest, ReadsInsideAndRefusesReadsOutside) {
  EXPECT_EQ(Probe("", {"read", t_.Ws("inside.txt")}), 0) << last_.err;
  EXPECT_EQ(Probe("", {"read", "inside.txt"}), 0) << "the tool starts in the workspace";
  EXPECT_EQ(Probe("", {"read", t_.Out("secret.txt")}), EACCES);
  // The caller's home stays out of reach (its shell startup files and
  // git's config excepted: user_profile_test.cc), a file of it made here.
  const char* home = std::getenv("HOME");
  ASSERT_NE(home, nullptr);
  const std::string canary = std::string(home) + "/.cordon-run-test-" + std::to_string(::getpid());
  WriteFile(canary, "HOME-CANARY\n");
  EXPECT_EQ(Probe("", {"read", canary}), EACCES) << last_.err;
  ::unlink(canary.c_str());
  EXPECT_EQ(Probe("", {"read", "/etc/shadow"}), EACCES);
  EXPECT_EQ(Probe("", {"read", "/etc/passwd"}), 0) << "the system set stays readable";
}

TEST_P(RunTest, MutationsOutsideFailAndLeaveFilesUnchanged) {
  for (const char* profile : {"read-only", "workspace-write"}) {
    SCOPED_TRACE(profile);
    EXPECT_EQ(Probe(profile, {"write", t_.Out("secret.txt")}), EACCES);
    EXPECT_EQ(Probe(profile, {"trunc", t_.Out("secret.txt")}), EACCES);
    EXPECT_EQ(Probe(profile, {"create", t_.Out("new.txt")}), EACCES);
    EXPECT_EQ(Probe(profile, {"unlink", t_.Out("secret.txt")}), EACCES);
    EXPECT_EQ(Probe(profile, {"rename", t_.Out("secret.txt"), t_.Out("moved.txt")}), EACCES);
    EXPECT_EQ(Probe(profile, {"rename", t_.Out("secret.txt"), t_.Ws("stolen.txt")}), EACCES);
    EXPECT_EQ(Probe(profile, {"mkdir", t_.Out("d")}), EACCES);
    EXPECT_EQ(Probe(profile, {"write", "/tmp/cordon-shared-tmp-write"}), EACCES);
  }
  EXPECT_EQ(ReadFile(t_.Out("secret.txt")), "secret\n");
  EXPECT_FALSE(Exists(t_.Out("new.txt")));
  EXPECT_FALSE(Exists(t_.Out("moved.txt")));
  EXPECT_FALSE(Exists(t_.Out("d")));
  EXPECT_FALSE(Exists(t_.Ws("stolen.txt")));
  EXPECT_FALSE(Exists("/tmp/cordon-shared-tmp-write"));
}

// The inode generation (the filesystems store an int behind the long).
int Generation(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  long g = 0;
  if (fd < 0 || ::ioctl(fd, FS_IOC_GETVERSION, &g) != 0) g = -1;
  if (fd >= 0) ::close(fd);
  return static_cast<int>(g);
}

// A file granted read-only is opened read-only, and some ioctls change a
// file through such an fd (FS_IOC_SETVERSION: its inode generation).
TEST_P(RunTest, ReadOnlyGrantsTakeNoChangeThroughIoctls) {
  std::string f = t_.Out("granted.txt");
  WriteFile(f, "granted\n");
  int fd = ::open(f.c_str(), O_RDONLY | O_CLOEXEC);
  long g = 7;
  int rc = ::ioctl(fd, FS_IOC_SETVERSION, &g);
  ::close(fd);
  if (rc != 0) GTEST_SKIP() << "the test's filesystem sets no inode generation: " << errno;
  ASSERT_EQ(Generation(f), 7) << "the same ioctl works without cordon";
  EXPECT_EQ(Probe("workspace-write", {"setversion", f}, {"--ro", f}), EPERM) << last_.err;
  EXPECT_EQ(Generation(f), 7);
  EXPECT_EQ(Probe("workspace-write", {"read", f}, {"--ro", f}), 0) << last_.err;
}

// The host's System V shared memory: a root tool has the uid that owns it.
TEST_P(RunTest, SystemVIpcOfTheHostIsOutOfReach) {
  int id = ::shmget(IPC_PRIVATE, 4096, IPC_CREAT | 0600);
  ASSERT_GE(id, 0);
  char* host = static_cast<char*>(::shmat(id, nullptr, 0));
  ASSERT_NE(host, reinterpret_cast<char*>(-1));
  std::strcpy(host, "host");
  EXPECT_EQ(Probe("", {"shmat-write", std::to_string(id)}), EPERM) << last_.err;
  EXPECT_STREQ(host, "host");
  ::shmdt(host);
  ::shmctl(id, IPC_RMID, nullptr);
  EXPECT_EQ(Probe("", {"shared-anon"}), 0) << "memory the tool shares with its own children";
}

TEST_P(RunTest, WorkspaceWriteAllowsMutationsInside) {
  EXPECT_EQ(Probe("workspace-write", {"write", "inside.txt"}), 0) << last_.err;
  EXPECT_EQ(Probe("workspace-write", {"create", "new.txt"}), 0);
  EXPECT_EQ(Probe("workspace-write", {"mkdir", "dir"}), 0);
  EXPECT_EQ(Probe("workspace-write", {"rename", "new.txt", "dir/moved.txt"}), 0);
  EXPECT_EQ(ReadFile(t_.Ws("inside.txt")), "probe\n\n") << "6 bytes over the first 7";
  EXPECT_EQ(ReadFile(t_.Ws("dir/moved.txt")), "probe\n");
  // Files born in a run are deleted freely within that run.
  RunResult r = RunCordon({"run", "--workspace", t_.ws(), "--profile", "workspace-write", "--",
                           "sh", "-c", "echo x > f && mkdir d && mv f d/g && rm d/g && rmdir d"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_FALSE(Exists(t_.Ws("d")));
  // A later run finds them pre-existing: deleting them is sensitive.
  const std::vector<std::string> ask = {"--sensitive-delete", "ask"};
  EXPECT_EQ(Probe("workspace-write", {"unlink", "dir/moved.txt"}, ask), EACCES);
  // A full directory: the kernel's ENOTEMPTY comes first; an empty one the
  // rule refuses.
  EXPECT_EQ(Probe("workspace-write", {"rmdir", "dir"}, ask), ENOTEMPTY);
  EXPECT_TRUE(Exists(t_.Ws("dir/moved.txt")));
  ASSERT_EQ(::mkdir(t_.Ws("empty").c_str(), 0755), 0);
  EXPECT_EQ(Probe("workspace-write", {"rmdir", "empty"}, ask), EACCES);
  EXPECT_TRUE(Exists(t_.Ws("empty")));
}

TEST_P(RunTest, ReadOnlyProfileRefusesWritesInside) {
  EXPECT_EQ(Probe("read-only", {"write", "inside.txt"}), EACCES);
  EXPECT_EQ(Probe("", {"create", "new.txt"}), EACCES) << "read-only is the default";
  EXPECT_EQ(Probe("read-only", {"unlink", "inside.txt"}), EACCES);
  EXPECT_EQ(Probe("read-only", {"mkdir", "dir"}), EACCES);
  EXPECT_EQ(ReadFile(t_.Ws("inside.txt")), "inside\n");
  EXPECT_FALSE(Exists(t_.Ws("new.txt")));
}

TEST_P(RunTest, DenyInsideTheWorkspaceHidesThePathButNotItsSiblings) {
  ::mkdir(t_.Ws("private").c_str(), 0755);
  WriteFile(t_.Ws("private/key"), "key\n");
  WriteFile(t_.Ws("public.txt"), "public\n");
  std::vector<std::string> deny = {"--deny", t_.Ws("private")};
  EXPECT_EQ(Probe("workspace-write", {"read", "private/key"}, deny), EACCES);
  EXPECT_EQ(Probe("workspace-write", {"write", "private/key"}, deny), EACCES);
  EXPECT_EQ(Probe("workspace-write", {"read", "public.txt"}, deny), 0) << last_.err;
  EXPECT_EQ(Probe("workspace-write", {"write", "public.txt"}, deny), 0) << last_.err;
  EXPECT_EQ(ReadFile(t_.Ws("private/key")), "key\n");
  EXPECT_EQ(Probe("workspace-write", {"read", "private/key"}), 0) << "without --deny it is readable";
}

TEST_P(RunTest, DenyUnderEtcHidesThePathButNotItsSiblings) {
  std::vector<std::string> deny = {"--deny", "/etc/hostname"};
  EXPECT_EQ(Probe("", {"read", "/etc/hostname"}, deny), EACCES);
  EXPECT_EQ(Probe("", {"read", "/etc/passwd"}, deny), 0);
  EXPECT_EQ(Probe("", {"read", "/etc/hostname"}), 0);
}

TEST_P(RunTest, PrivateTmpdirIsWritableAndSharedTmpIsNot) {
  RunResult r = RunCordon({"run", "--workspace", t_.ws(), "--", "sh", "-c",
                           "echo hi > \"$TMPDIR/f\" && cat \"$TMPDIR/f\" && echo \"$TMPDIR\""});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out.substr(0, 3), "hi\n");
  std::string tmpdir = r.out.substr(3, r.out.size() - 4);
  EXPECT_EQ(tmpdir.rfind(PrivateTmpPrefix(), 0), 0u) << tmpdir;
  EXPECT_FALSE(Exists(tmpdir)) << "the private TMPDIR is removed when the run ends";
}

// git stops on a global config it may not read ("fatal: unknown error
// occurred while reading the configuration files"): an unreadable HOME is
// replaced by a private one, writable and removed with TMPDIR. Granting
// the home keeps it, and git reads it; granting a file in it links it.
TEST(RunContract, AnUnreadableHomeIsReplacedByAPrivateOne) {
  if (::access("/usr/bin/git", X_OK) != 0) GTEST_SKIP() << "git not installed";
  ScratchTree t;
  const std::string home = t.Out("home");
  ASSERT_EQ(::mkdir(home.c_str(), 0755), 0);
  WriteFile(home + "/.gitconfig", "[user]\n\tname = From The Home\n");
  WriteFile(home + "/notes.txt", "Home Secret\n");
  const std::string script =
      "git init -q . && git config user.email a@b && mkdir -p \"$HOME/.cache/x\" && "
      "printf '%s\\n' \"$HOME\" && cat \"$HOME/notes.txt\" " + home + "/notes.txt 2>/dev/null; "
      "git config --global user.name || true";
  RunResult moved = RunCordon(
      {"run", "--profile", "workspace-write", "--workspace", t.ws(), "--", "sh", "-c", script}, "",
      {"HOME=" + home});
  ASSERT_EQ(moved.status, 0) << moved.err;
  const std::string private_home = moved.out.substr(0, moved.out.find('\n'));
  EXPECT_EQ(private_home.rfind(PrivateTmpPrefix(), 0), 0u) << moved.out;
  EXPECT_EQ(moved.out.find("Home Secret"), std::string::npos) << "the home was not read";
  // Git's identity is in the base policy (seed 004): read-only, by default.
  EXPECT_NE(moved.out.find("From The Home"), std::string::npos) << moved.out;
  EXPECT_FALSE(Exists(private_home)) << "removed with TMPDIR";

  // Granting one file of the home links it into the private one: git keeps
  // the caller's identity without the rest of the home.
  RunResult linked = RunCordon(
      {"run", "--profile", "workspace-write", "--workspace", t.ws(), "--ro", home + "/.gitconfig",
       "--", "sh", "-c", "printf '%s\\n' \"$HOME\"; git config --global user.name"},
      "", {"HOME=" + home});
  ASSERT_EQ(linked.status, 0) << linked.err;
  EXPECT_EQ(linked.out.rfind(PrivateTmpPrefix(), 0), 0u) << linked.out;
  EXPECT_NE(linked.out.find("\nFrom The Home\n"), std::string::npos) << linked.out;

  RunResult kept =
      RunCordon({"run", "--profile", "workspace-write", "--workspace", t.ws(), "--ro", home, "--",
                 "sh", "-c", "printf '%s\\n' \"$HOME\"; git config --global user.name"},
                "", {"HOME=" + home});
  ASSERT_EQ(kept.status, 0) << kept.err;
  EXPECT_EQ(kept.out, home + "\nFrom The Home\n");
}

// A command found on a PATH entry runs: the entry is granted read-only
// (supervisor/load/tool_roots.h). Under a user's --deny of it the command
// cannot run: exit 126, and cordon names the rule rather than a --ro that
// would not help (the denial wins the tie).
TEST(RunContract, ACommandOnPathRunsAndADeniedOneIsNamedWithItsRule) {
  ScratchTree t;
  const std::string bin = t.Out("bin");
  ASSERT_EQ(::mkdir(bin.c_str(), 0755), 0);
  ASSERT_EQ(std::system(("cp /bin/true '" + bin + "/mytool'").c_str()), 0);
  const std::vector<std::string> env = {"PATH=" + bin + ":/usr/bin:/bin"};
  RunResult granted = RunCordon({"run", "--workspace", t.ws(), "--", "mytool"}, "", env);
  EXPECT_EQ(granted.status, 0) << granted.err;
  RunResult denied =
      RunCordon({"run", "--workspace", t.ws(), "--deny", bin, "--", "mytool"}, "", env);
  EXPECT_EQ(denied.status, 126) << denied.err;
  EXPECT_NE(denied.err.find(bin + "/mytool is denied by the rule of " + bin + " (--deny)"),
            std::string::npos)
      << denied.err;
  EXPECT_EQ(denied.err.find("would grant it"), std::string::npos) << denied.err;
  // A file the grants cover that is no program gets no such hint.
  RunResult noexec = RunCordon({"run", "--workspace", t.ws(), "--", "/etc/passwd"});
  EXPECT_EQ(noexec.status, 126) << noexec.err;
  EXPECT_EQ(noexec.err.find("would grant it"), std::string::npos) << noexec.err;
}

int ListenLoopback(int& port) {
  int s = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in sin{};
  sin.sin_family = AF_INET;
  sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(s, reinterpret_cast<sockaddr*>(&sin), sizeof sin);
  socklen_t len = sizeof sin;
  ::getsockname(s, reinterpret_cast<sockaddr*>(&sin), &len);
  ::listen(s, 8);
  port = ntohs(sin.sin_port);
  return s;
}

TEST_P(RunTest, NetworkNoneRefusesLoopbackConnectAndAllowPermitsIt) {
  int port = 0;
  int s = ListenLoopback(port);
  ASSERT_GT(port, 0);
  // The test's listener is the host's, not the run's: refused as a private
  // loopback would answer (tests/integration/loopback_test.cc).
  EXPECT_EQ(Probe("", {"connect", std::to_string(port)}), ECONNREFUSED);
  EXPECT_EQ(Probe("", {"connect", std::to_string(port)}, {"--network", "none"}), ECONNREFUSED);
  ASSERT_EQ(::fcntl(s, F_SETFL, O_NONBLOCK), 0);
  int none_conn = ::accept4(s, nullptr, nullptr, SOCK_CLOEXEC);
  EXPECT_LT(none_conn, 0) << "the host's listener must see no connection under none";
  EXPECT_EQ(Probe("", {"connect", std::to_string(port)}, {"--network", "allow"}), 0) << last_.err;
  ::close(s);
}

// Under network allow the supervisor makes connect and bind for the tool
// (supervisor/emulator_socket.cc), without its own capabilities: cordon may
// hold CAP_NET_BIND_SERVICE, the tool must not get it.
TEST_P(RunTest, NetworkAllowLendsTheToolNoPrivilege) {
  int start = std::stoi(ReadFile("/proc/sys/net/ipv4/ip_unprivileged_port_start"));
  if (start <= 80)
    GTEST_SKIP() << "ip_unprivileged_port_start is " << start << ": port 80 is open to all";
  EXPECT_EQ(Probe("", {"bind-tcp", "80"}, {"--network", "allow"}), EACCES) << last_.err;
  EXPECT_EQ(Probe("", {"bind-tcp", "0"}, {"--network", "allow"}), 0) << last_.err;
  EXPECT_EQ(Probe("", {"bind-tcp", "0"}), 0) << "network none: the tool's own loopback";
  // glibc's getaddrinfo binds a route netlink socket: it must work. In a
  // container without pidfd_getfd no stand-in can be made for it (an unbound
  // netlink socket's protocol is nowhere in /proc): EBADF, said once, and
  // getaddrinfo goes on without it (README).
  EXPECT_EQ(Probe("", {"netlink-bind"}, {"--network", "allow"}), InContainerPass() ? EBADF : 0)
      << last_.err;
  EXPECT_EQ(Probe("", {"netlink-bind"}), EPERM);
}

// A read lease on a file the tool may only read (it owns it: root) would
// stall every host process opening it for writing; a lock, the honest
// neighbour, stays.
TEST_P(RunTest, LeasesAreRefusedAndLocksKept) {
  std::string file = t_.Out("passwd");
  WriteFile(file, "root:x:0:0::/root:/bin/sh\n");
  const std::vector<std::string> ro = {"--ro", file};
  EXPECT_EQ(Probe("", {"lease", file}, ro), EPERM) << last_.err;
  EXPECT_EQ(Probe("", {"lease-high", file}, ro), EPERM) << last_.err;
  EXPECT_EQ(Probe("", {"lock", file}, ro), 0) << last_.err;
}

// lckpwdf(3)'s lock file cannot even be opened, so not locked: a read
// lock would stall the host's user management for the run. lckpwdf makes
// it the same way when it is missing.
TEST_P(RunTest, ThePasswordLockFileIsOutOfReach) {
  cordon::Fd made(::open("/etc/.pwd.lock", O_WRONLY | O_CREAT | O_CLOEXEC, 0600));
  ASSERT_TRUE(made) << std::strerror(errno);
  EXPECT_EQ(Probe("", {"lock", "/etc/.pwd.lock"}), EACCES) << last_.err;
  EXPECT_EQ(Probe("", {"lock", "/etc/passwd"}), 0) << last_.err;
}

// The CPU and memory limits a runtime sizes itself by are readable (a
// tool in a container with a CPU quota would otherwise start a thread per
// host CPU), and the huge page sizes it maps its heap with, read-only; the
// rest of /sys stays out of reach.
TEST_P(RunTest, CpuAndCgroupLimitsAreReadableAndNothingElseInSys) {
  std::string quota;
  for (const char* f : {"/sys/fs/cgroup/cpu.max", "/sys/fs/cgroup/cpu/cpu.cfs_quota_us",
                        "/sys/fs/cgroup/cgroup.controllers"}) {
    if (::access(f, R_OK) == 0) {
      quota = f;
      break;
    }
  }
  if (quota.empty()) GTEST_SKIP() << "no cgroup CPU file on this machine";
  // On the notify-all rung the supervisor resolves reads beneath each
  // granted directory without crossing a mount: cgroup v1 mounts each
  // controller beneath /sys/fs/cgroup (README, "Honest limits").
  struct stat top, file;
  ASSERT_EQ(::stat("/sys/fs/cgroup", &top), 0);
  ASSERT_EQ(::stat(quota.c_str(), &file), 0);
  const bool across_a_mount = top.st_dev != file.st_dev;
  EXPECT_EQ(Probe("", {"read", quota}), notify_all() && across_a_mount ? EACCES : 0) << last_.err;
  EXPECT_EQ(Probe("", {"read", "/sys/devices/system/cpu/online"}), 0) << last_.err;
  const std::string before = ReadFile(quota);
  EXPECT_EQ(Probe("workspace-write", {"write", quota}), EACCES) << last_.err;
  EXPECT_EQ(ReadFile(quota), before);
  const char* thp = "/sys/kernel/mm/transparent_hugepage/enabled";
  if (::access(thp, R_OK) == 0) {
    EXPECT_EQ(Probe("", {"read", thp}), 0) << last_.err;
    EXPECT_EQ(Probe("workspace-write", {"write", thp}), EACCES) << last_.err;
  }
  EXPECT_EQ(Probe("", {"read", "/sys/kernel/mm/ksm/run"}), EACCES) << last_.err;
}

// No grant opens up the kernel's interfaces (policy/kernel_interfaces.h):
// asking for one is an error, and a grant of / leaves /dev out but for the
// system set's devices.
TEST_P(RunTest, KernelInterfacesAreNeverGranted) {
  if (::access("/dev/kmsg", F_OK) != 0) GTEST_SKIP() << "SKIPPED LOUDLY: no /dev/kmsg here";
  EXPECT_EQ(Probe("", {"open-nohang", "/dev/kmsg", "r"}, {"--ro", "/"}), EACCES) << last_.err;
  EXPECT_EQ(Probe("", {"open-nohang", "/dev/urandom", "r"}, {"--ro", "/"}), 0) << last_.err;
  EXPECT_EQ(Probe("", {"open-nohang", "/etc/hostname", "r"}, {"--ro", "/"}), 0) << last_.err;
  EXPECT_EQ(Probe("", {"open-nohang", "/dev/kmsg", "r"}, {"--ro", "/dev/kmsg"}), 125);
  EXPECT_NE(last_.err.find("--ro /dev/kmsg: a device node"), std::string::npos) << last_.err;
  EXPECT_EQ(Probe("", {"read", "/proc/sys/vm/swappiness"}, {"--rw", "/proc/sys/vm"}), 125);
  EXPECT_NE(last_.err.find("a kernel control filesystem, never writable"), std::string::npos)
      << last_.err;
}

TEST_P(RunTest, KernelAttackSurfaceIsRefused) {
  EXPECT_EQ(Probe("", {"io_uring"}), ENOSYS);
  EXPECT_EQ(Probe("", {"ptrace-parent"}), EPERM);
  EXPECT_EQ(Probe("", {"mount"}), EPERM);
  EXPECT_EQ(Probe("", {"unshare-user"}), EPERM);
  EXPECT_EQ(Probe("", {"openat2", "inside.txt"}), ENOSYS);
  EXPECT_EQ(Probe("", {"personality"}), EPERM);
  EXPECT_EQ(Probe("", {"future"}), ENOSYS) << "syscalls newer than cordon answer ENOSYS";
  EXPECT_EQ(Probe("", {"x32"}), 128 + SIGSYS) << "x32 entry kills the tool";
}

TEST_P(RunTest, ExitStatusesFollowTheContract) {
  EXPECT_EQ(Probe("", {"exit", "0"}), 0);
  EXPECT_EQ(Probe("", {"exit", "3"}), 3);
  EXPECT_EQ(Probe("", {"kill-self", "9"}), 128 + 9);
  EXPECT_EQ(Probe("", {"kill-self", "15"}), 128 + 15);
}

INSTANTIATE_TEST_SUITE_P(Probes, RunTest, ProbeParams(), ProbeParamName);

TEST(RunContract, CordonErrorsAre125) {
  ScratchTree t;
  EXPECT_EQ(RunCordon({"run", "--workspace", t.Ws("missing"), "--", "true"}).status, 125);
  EXPECT_EQ(RunCordon({"run", "--profile", "bogus", "--", "true"}).status, 125);
  EXPECT_EQ(RunCordon({"run", "--no-such-flag", "--", "true"}).status, 125);
  RunResult r = RunCordon({"run", "--workspace", t.Ws("missing"), "--", "true"});
  EXPECT_NE(r.err.find("workspace"), std::string::npos) << r.err;
}

TEST(RunContract, NotFoundIs127AndNotExecutableIs126) {
  ScratchTree t;
  EXPECT_EQ(RunCordon({"run", "--workspace", t.ws(), "--", "no-such-command-xyz"}).status, 127);
  EXPECT_EQ(RunCordon({"run", "--workspace", t.ws(), "--", "./missing"}).status, 127);
  WriteFile(t.Ws("data.txt"), "not a program\n");
  ::chmod(t.Ws("data.txt").c_str(), 0644);
  EXPECT_EQ(RunCordon({"run", "--workspace", t.ws(), "--", "./data.txt"}).status, 126);
  // The command named is granted (read + execute, tool_roots.h); denied,
  // Landlock refuses its exec.
  WriteFile(t.Out("tool.sh"), "#!/bin/sh\nexit 0\n");
  ::chmod(t.Out("tool.sh").c_str(), 0755);
  EXPECT_EQ(RunCordon({"run", "--workspace", t.ws(), "--", t.Out("tool.sh")}).status, 0);
  EXPECT_EQ(RunCordon({"run", "--workspace", t.ws(), "--deny", t.outside(), "--", t.Out("tool.sh")})
                .status,
            126);
}

bool Gone(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  if (!stat) return true;
  std::string line;
  std::getline(stat, line);
  auto close = line.rfind(')');
  return close != std::string::npos && close + 2 < line.size() &&
         (line[close + 2] == 'Z' || line[close + 2] == 'X');
}

TEST(RunContract, KillingCordonKillsTheTool) {
  ScratchTree t;
  BackgroundCordon cordon({"run", "--profile", "workspace-write", "--workspace", t.ws(), "--", "sh",
                           "-c", "echo $$ > pid; exec sleep 60"});
  std::string pid_file = t.Ws("pid");
  pid_t tool = 0;
  for (int i = 0; i < 500 && tool == 0; ++i) {
    std::ifstream f(pid_file);
    if (!(f >> tool)) tool = 0;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_GT(tool, 0) << "the tool never started";
  EXPECT_FALSE(Gone(tool));
  std::string run_tmp = RunTmpdir(cordon.pid());
  ASSERT_EQ(run_tmp.rfind(PrivateTmpPrefix(), 0), 0u) << run_tmp;
  // Another run that ends sweeps the TMPDIRs of dead runs only.
  EXPECT_EQ(RunCordon({"run", "--workspace", t.ws(), "--", "true"}).status, 0);
  EXPECT_TRUE(Exists(run_tmp)) << "a live run's TMPDIR was swept";
  cordon.Stop(SIGKILL);
  bool gone = false;
  for (int i = 0; i < 500 && !gone; ++i) {
    gone = Gone(tool);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_TRUE(gone) << "tool " << tool << " outlived cordon";
  if (!gone) ::kill(tool, SIGKILL);
  // Nobody was left to remove it: the next run to end does (or one running
  // alongside, under ctest -j, already has).
  EXPECT_EQ(RunCordon({"run", "--workspace", t.ws(), "--", "true"}).status, 0);
  EXPECT_FALSE(Exists(run_tmp)) << "the next run to end removes a dead run's TMPDIR";
}

// A run ends with its tool, and what the tool left running is stopped:
// said at the default level, counting the tool's processes only (the
// loopback namespace's helper, cordon's own, is not one).
TEST(RunContract, WhatTheToolLeftRunningIsStoppedAndSaidSo) {
  ScratchTree t;
  RunResult r = RunCordon({"run", "--workspace", t.ws(), "--", "sh", "-c",
                           "sleep 30 & setsid sleep 31 & echo started"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("2 processes it left running were stopped"), std::string::npos) << r.err;
  r = RunCordon({"run", "--workspace", t.ws(), "--", "true"});
  EXPECT_EQ(r.err.find("left running"), std::string::npos) << r.err;
  r = RunCordon({"run", "--workspace", t.ws(), "--", "python3", "-c",
                 "import socket; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); "
                 "s.bind(('127.0.0.1', 0))"});
  // (Behind Docker's seccomp profile the namespace, and so the socket, is
  // refused: UdpTest says which; here only what is counted matters.)
  EXPECT_EQ(r.err.find("left running"), std::string::npos) << r.err;
}

// A SIGTERM, SIGINT or SIGHUP sent to cordon (a terminal's Ctrl-C, a CI
// runner's cancel) reaches the tool, which may clean up, and cordon ends
// with the tool's status; what the tool started is gone. Every thread of
// cordon blocks them: one that did not took the default action and killed
// cordon, leaving the tool and its children running.
TEST(RunContract, ASignalToCordonReachesTheTool) {
  for (int sig : {SIGTERM, SIGINT, SIGHUP}) {
    ScratchTree t;
    const std::string script = "trap 'echo got > trapped; kill $child; exit 9' " +
                               std::string(sig == SIGTERM  ? "TERM"
                                           : sig == SIGINT ? "INT"
                                                           : "HUP") +
                               "; sleep 60 & child=$!; echo $child > child; wait";
    BackgroundCordon cordon(
        {"run", "--profile", "workspace-write", "--workspace", t.ws(), "--", "sh", "-c", script});
    pid_t child = 0;
    for (int i = 0; i < 500 && child == 0; ++i) {
      std::ifstream f(t.Ws("child"));
      if (!(f >> child)) child = 0;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    ASSERT_GT(child, 0) << "the tool never started";
    const int status = cordon.Stop(sig);
    EXPECT_TRUE(WIFEXITED(status))
        << "cordon died of signal " << WTERMSIG(status) << " (" << sig << ")";
    if (WIFEXITED(status)) EXPECT_EQ(WEXITSTATUS(status), 9) << sig;
    EXPECT_EQ(ReadFile(t.Ws("trapped")), "got\n") << "the tool never saw signal " << sig;
    bool gone = false;
    for (int i = 0; i < 500 && !gone; ++i) {
      gone = Gone(child);
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    EXPECT_TRUE(gone) << "the tool's child " << child << " outlived the run";
    if (!gone) ::kill(child, SIGKILL);
  }
}

}  // namespace
}  // namespace cordon::testing
