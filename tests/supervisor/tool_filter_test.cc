// The tool filter on the real kernel: each refusal in a forked child that
// installs the filter, next to a control that shows the honest call works.
#include "supervisor/tool_filter.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <pty.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <termios.h>
#include <unistd.h>

#include <string>

#include "tests/support/test_env.h"

namespace cordon::supervisor {
namespace {

void Install(policy::Network net) {
  ToolFilterOptions o;
  o.network = net;
  auto prog = BuildToolFilter(o);
  if (!prog) _exit(200);
  ::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
  if (InstallFilter(*prog) < 0) _exit(201);
}

template <class Fn>
[[noreturn]] void Filtered(policy::Network net, Fn fn) {
  Install(net);
  long rc = fn();
  _exit(rc < 0 ? errno : 0);
}

template <class Fn>
[[noreturn]] void Unfiltered(Fn fn) {
  long rc = fn();
  _exit(rc < 0 ? errno : 0);
}

// The strict filter with its listener closed: the kernel fails a notified
// call with ENOSYS, so the child tells a notified call from an allowed one
// without a supervisor.
template <class Fn>
[[noreturn]] void Unserved(Fn fn) {
  auto prog = BuildToolFilter({});
  if (!prog) _exit(200);
  ::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
  int listener = InstallFilter(*prog);
  if (listener <= 0) _exit(201);
  ::close(listener);
  long rc = fn();
  _exit(rc < 0 ? errno : 0);
}

constexpr auto kNone = policy::Network::kNone;
using ::testing::ExitedWithCode;
using ::testing::KilledBySignal;

TEST(ToolFilter, BuildsWithinTheBpfLimit) {
  auto prog = BuildToolFilter({});
  ASSERT_TRUE(prog.ok()) << Describe(prog.error());
  EXPECT_GT(prog->insns.size(), 20u);
  EXPECT_LE(prog->insns.size(), 4096u);
}

// The table a launch uses is exactly what libseccomp compiles now, for
// every combination of the options.
TEST(ToolFilter, BuildTimeTableMatchesLibseccomp) {
  for (size_t i = 0; i < kToolFilterCombinations; ++i) {
    ToolFilterOptions o = ToolFilterOptionsAt(i);
    ASSERT_EQ(ToolFilterIndex(o), i);
    auto table = BuildToolFilter(o);
    auto now = CompileToolFilter(o);
    ASSERT_TRUE(table.ok() && now.ok()) << i;
    ASSERT_EQ(table->insns.size(), now->insns.size()) << "combination " << i;
    for (size_t k = 0; k < now->insns.size(); ++k) {
      const sock_filter& a = table->insns[k];
      const sock_filter& b = now->insns[k];
      ASSERT_TRUE(a.code == b.code && a.jt == b.jt && a.jf == b.jf && a.k == b.k)
          << "combination " << i << ", instruction " << k;
    }
    EXPECT_EQ(table->has_notify, now->has_notify) << i;
    EXPECT_EQ(table->prefix_size, now->prefix_size) << i;
  }
  // Options that differ get different programs.
  ToolFilterOptions strict, kernel_links;
  kernel_links.notify_write_opens = false;
  EXPECT_NE(BuildToolFilter(strict)->insns.size(), BuildToolFilter(kernel_links)->insns.size());
}

// Each write bit alone is notified, through open and openat, whatever the
// high word holds; read-only opens are not (the prefix allows them early).
TEST(ToolFilter, EveryWriteBitOfAnOpenIsNotifiedAndReadOnlyOpensAreNot) {
  cordon::testing::ScratchTree t;
  const std::string dir = t.ws(), file = t.Ws("file");
  cordon::testing::WriteFile(file, "x");
  constexpr unsigned long kHigh = 0xffffffff00000000UL;
  constexpr unsigned long kBareTmpfile = 020000000;  // without O_DIRECTORY
  const unsigned long writes[] = {O_WRONLY, O_RDWR,       O_CREAT,          O_TRUNC,
                                  O_APPEND, kBareTmpfile, O_WRONLY | kHigh, O_PATH | O_WRONLY};
  for (unsigned long flags : writes) {
    SCOPED_TRACE(flags);
    const char* path = (flags & kBareTmpfile) ? dir.c_str() : file.c_str();
    auto at = [=] { return ::syscall(SYS_openat, AT_FDCWD, path, flags, 0600); };
    auto plain = [=] { return ::syscall(SYS_open, path, flags, 0600); };
    EXPECT_EXIT(Unserved(at), ExitedWithCode(ENOSYS), "");
    EXPECT_EXIT(Unserved(plain), ExitedWithCode(ENOSYS), "");
  }
  const unsigned long reads[] = {O_RDONLY | O_CLOEXEC, O_PATH, O_RDONLY | O_NOFOLLOW | O_NONBLOCK,
                                 O_RDONLY | kHigh};
  for (unsigned long flags : reads) {
    SCOPED_TRACE(flags);
    auto at = [&] { return ::syscall(SYS_openat, AT_FDCWD, file.c_str(), flags); };
    auto plain = [&] { return ::syscall(SYS_open, file.c_str(), flags); };
    EXPECT_EXIT(Unserved(at), ExitedWithCode(0), "");
    EXPECT_EXIT(Unserved(plain), ExitedWithCode(0), "");
  }
}

// Network none: TCP for the tool's own loopback (its connect, bind and
// listen go to the supervisor), UDP made by the supervisor (notified: with
// the listener closed the kernel answers ENOSYS), no ping or raw socket.
TEST(ToolFilter, NetworkNoneRefusesInetSocketsButTcpAndUnix) {
  auto udp = [] { return static_cast<long>(::socket(AF_INET, SOCK_DGRAM, 0)); };
  auto udp6 = [] { return static_cast<long>(::socket(AF_INET6, SOCK_DGRAM, IPPROTO_UDP)); };
  auto ping = [] { return static_cast<long>(::socket(AF_INET, SOCK_DGRAM, IPPROTO_ICMP)); };
  auto raw = [] { return static_cast<long>(::socket(AF_INET6, SOCK_RAW, IPPROTO_UDP)); };
  auto tcp = [] { return static_cast<long>(::socket(AF_INET, SOCK_STREAM, 0)); };
  auto tcp6 = [] { return static_cast<long>(::socket(AF_INET6, SOCK_STREAM, IPPROTO_TCP)); };
  auto unix_ = [] { return static_cast<long>(::socket(AF_UNIX, SOCK_STREAM, 0)); };
  EXPECT_EXIT(Unserved(udp), ExitedWithCode(ENOSYS), "");
  EXPECT_EXIT(Unserved(udp6), ExitedWithCode(ENOSYS), "");
  EXPECT_EXIT(Filtered(kNone, ping), ExitedWithCode(EPERM), "");
  EXPECT_EXIT(Filtered(kNone, raw), ExitedWithCode(EPERM), "");
  EXPECT_EXIT(Filtered(kNone, tcp), ExitedWithCode(0), "");
  EXPECT_EXIT(Filtered(kNone, tcp6), ExitedWithCode(0), "");
  EXPECT_EXIT(Filtered(kNone, unix_), ExitedWithCode(0), "");
  EXPECT_EXIT(Filtered(policy::Network::kAllow, udp), ExitedWithCode(0), "");
}

TEST(ToolFilter, NamespaceCreationIsRefusedButPlainCloneWorks) {
  auto userns = [] { return static_cast<long>(::unshare(CLONE_NEWUSER)); };
  auto files = [] { return static_cast<long>(::unshare(CLONE_FILES)); };
  EXPECT_EXIT(Unfiltered(userns), ExitedWithCode(0), "");
  EXPECT_EXIT(Filtered(kNone, userns), ExitedWithCode(EPERM), "");
  EXPECT_EXIT(Filtered(kNone, files), ExitedWithCode(0), "");
  auto fork_ok = [] {
    pid_t p = ::fork();
    if (p == 0) _exit(0);
    return static_cast<long>(p);
  };
  EXPECT_EXIT(Filtered(kNone, fork_ok), ExitedWithCode(0), "");
}

TEST(ToolFilter, IoUringAndOpenat2AnswerEnosys) {
  auto ring = [] { return ::syscall(SYS_io_uring_setup, 4, nullptr); };
  EXPECT_EXIT(Filtered(kNone, ring), ExitedWithCode(ENOSYS), "");
  auto o2 = [] { return ::syscall(SYS_openat2, AT_FDCWD, "/", nullptr, 0); };
  EXPECT_EXIT(Filtered(kNone, o2), ExitedWithCode(ENOSYS), "");
}

TEST(ToolFilter, SyscallsNewerThanCordonAnswerEnosys) {
  auto future = [] { return ::syscall(480); };
  EXPECT_EXIT(Filtered(kNone, future), ExitedWithCode(ENOSYS), "");
  auto known = [] { return ::syscall(SYS_getpid); };
  EXPECT_EXIT(Filtered(kNone, known), ExitedWithCode(0), "");
}

TEST(ToolFilter, X32EntryKills) {
  auto x32 = [] { return ::syscall(SYS_getpid | 0x40000000); };
  EXPECT_EXIT(Filtered(kNone, x32), KilledBySignal(SIGSYS), "");
}

TEST(ToolFilter, PersonalityOnlyQueries) {
  auto query = [] { return ::syscall(SYS_personality, 0xffffffffUL); };
  auto change = [] { return ::syscall(SYS_personality, 0x0040000UL); };
  EXPECT_EXIT(Filtered(kNone, query), ExitedWithCode(0), "");
  EXPECT_EXIT(Filtered(kNone, change), ExitedWithCode(EPERM), "");
}

TEST(ToolFilter, TiocstiIsRefused) {
  int master = -1, slave = -1;
  ASSERT_EQ(::openpty(&master, &slave, nullptr, nullptr, nullptr), 0);
  auto inject = [slave] {
    char c = 'x';
    return static_cast<long>(::ioctl(slave, TIOCSTI, &c));
  };
  // The control: without the filter, TIOCSTI on a terminal works for root
  // (unless the kernel disabled it: dev.tty.legacy_tiocsti=0).
  pid_t pid = ::fork();
  if (pid == 0) Unfiltered(inject);
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    GTEST_SKIP() << "TIOCSTI is disabled on this kernel even without cordon (errno "
                 << WEXITSTATUS(status) << ")";
  }
  EXPECT_EXIT(Filtered(kNone, inject), ExitedWithCode(EPERM), "");
  // The upper 32 bits of the command must not smuggle it past the filter.
  auto inject_hi = [slave] {
    char c = 'x';
    return ::syscall(SYS_ioctl, slave, 0xffffffff00000000UL | TIOCSTI, &c);
  };
  EXPECT_EXIT(Filtered(kNone, inject_hi), ExitedWithCode(EPERM), "");
}

TEST(ToolFilter, EscapesAreRefused) {
  auto ptrace_ = [] { return ::syscall(SYS_ptrace, 16 /*ATTACH*/, ::getppid(), 0, 0); };
  auto bpf = [] { return ::syscall(SYS_bpf, 0, nullptr, 0); };
  auto keyctl = [] { return ::syscall(SYS_keyctl, 0, 0); };
  auto uffd = [] { return ::syscall(SYS_userfaultfd, 0); };
  auto handle = [] { return ::syscall(SYS_open_by_handle_at, AT_FDCWD, nullptr, 0); };
  auto mount_ = [] { return ::syscall(SYS_mount, "none", "/mnt", "tmpfs", 0, nullptr); };
  auto clone3 = [] { return ::syscall(SYS_clone3, nullptr, 0); };
  EXPECT_EXIT(Filtered(kNone, ptrace_), ExitedWithCode(EPERM), "");
  EXPECT_EXIT(Filtered(kNone, bpf), ExitedWithCode(EPERM), "");
  EXPECT_EXIT(Filtered(kNone, keyctl), ExitedWithCode(EPERM), "");
  EXPECT_EXIT(Filtered(kNone, uffd), ExitedWithCode(EPERM), "");
  EXPECT_EXIT(Filtered(kNone, handle), ExitedWithCode(EPERM), "");
  EXPECT_EXIT(Filtered(kNone, mount_), ExitedWithCode(EPERM), "");
  EXPECT_EXIT(Filtered(kNone, clone3), ExitedWithCode(ENOSYS), "");
}

}  // namespace
}  // namespace cordon::supervisor
