// The preload's interposers called directly, in process, no sandbox: the
// library is dlopen'ed with its configuration in the environment and its
// exported hooks are looked up and called like libc's. The report channel
// is a real SOCK_SEQPACKET pair read back here.
#include <dlfcn.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "policy/path_admission.h"
#include "preload/wire.h"
#include "tests/support/test_env.h"

namespace cordon::testing {
namespace {

using OpenFn = int (*)(const char*, int, ...);
using OpenatFn = int (*)(int, const char*, int, ...);
using UnlinkFn = int (*)(const char*);
using RenameFn = int (*)(const char*, const char*);
using FopenFn = FILE* (*)(const char*, const char*);

class PreloadHooks : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    tree_ = new ScratchTree;
    int sv[2];
    ASSERT_EQ(::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
    reports_ = sv[0];
    ::setenv(wire::kEnvWorkspace, tree_->ws().c_str(), 1);
    ::setenv(wire::kEnvWorkspaceMode, "rw", 1);
    ::setenv(wire::kEnvReadOnly, "/usr:/etc", 1);
    ::setenv(wire::kEnvReportFd, std::to_string(sv[1]).c_str(), 1);
    ::unsetenv(wire::kEnvLog);
    lib_ = ::dlopen(CORDON_PRELOAD_SO, RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(lib_, nullptr) << ::dlerror();
  }
  static void TearDownTestSuite() {
    delete tree_;
    tree_ = nullptr;
  }
  void SetUp() override { Drain(); }

  template <class F>
  static F Hook(const char* name) {
    void* f = ::dlsym(lib_, name);
    EXPECT_NE(f, nullptr) << name;
    return reinterpret_cast<F>(f);
  }
  // The records queued on the channel, without flushing anything: each
  // datagram holds one or more records back to back.
  static std::vector<wire::Report> Receive(size_t* datagrams = nullptr) {
    std::vector<wire::Report> out;
    std::vector<char> buf(wire::kReportDatagramMax);
    ssize_t n;
    while ((n = ::recv(reports_, buf.data(), buf.size(), MSG_DONTWAIT)) > 0) {
      EXPECT_EQ(n % sizeof(wire::Report), 0u);
      if (datagrams) ++*datagrams;
      for (ssize_t off = 0; off + sizeof(wire::Report) <= static_cast<size_t>(n);
           off += sizeof(wire::Report)) {
        wire::Report r;
        memcpy(&r, buf.data() + off, sizeof r);
        out.push_back(r);
      }
    }
    return out;
  }
  // Admitted calls are batched; a refusal sends the batch at once. Makes one
  // (a write through a raw ".." is refused) and returns the records before it.
  static std::vector<wire::Report> Drain() {
    int saved = errno;
    Hook<OpenFn>("open")(kFlushPath, O_WRONLY);
    errno = saved;
    std::vector<wire::Report> out = Receive();
    EXPECT_FALSE(out.empty());
    if (!out.empty()) {
      EXPECT_STREQ(out.back().path, kFlushPath);
      out.pop_back();
    }
    return out;
  }
  static constexpr const char* kFlushPath = "/flush/../reports";
  static int Umask() {
    mode_t m = ::umask(022);
    ::umask(m);
    return static_cast<int>(m);
  }

  static ScratchTree* tree_;
  static void* lib_;
  static int reports_;
};
ScratchTree* PreloadHooks::tree_ = nullptr;
void* PreloadHooks::lib_ = nullptr;
int PreloadHooks::reports_ = -1;

// A mutation through "a/.." is refused as written, although it resolves
// inside ("a" could be a symlink); a read is left to the kernel, whose
// Landlock grants are on the physical inodes.
TEST_F(PreloadHooks, DotDotMutationRefusedAlthoughItResolvesInside) {
  ::mkdir(tree_->Ws("a").c_str(), 0755);
  WriteFile(tree_->Ws("b"), "b\n");
  std::string path = tree_->ws() + "/a/../b";
  auto open_hook = Hook<OpenFn>("open");
  int read = open_hook(path.c_str(), O_RDONLY | O_CLOEXEC);
  EXPECT_GE(read, 0) << "a read is the kernel's to judge";
  ::close(read);
  errno = 0;
  EXPECT_EQ(open_hook(path.c_str(), O_WRONLY | O_CLOEXEC), -1);
  EXPECT_EQ(errno, EACCES);
  // Relative to the cwd as well.
  ASSERT_EQ(::chdir(tree_->root().c_str()), 0);
  errno = 0;
  EXPECT_EQ(open_hook("ws/a/../b", O_WRONLY | O_CLOEXEC), -1);
  EXPECT_EQ(errno, EACCES);
  EXPECT_EQ(ReadFile(tree_->Ws("b")), "b\n");
  auto all = Drain();
  std::vector<wire::Report> reports;
  for (const auto& r : all) {
    if (r.verdict == static_cast<uint8_t>(wire::ReportVerdict::kRefused)) reports.push_back(r);
  }
  ASSERT_EQ(reports.size(), 2u) << "the two writes, not the read";
  EXPECT_EQ(reports[1].call, static_cast<uint16_t>(wire::Call::kOpen));
  EXPECT_EQ(reports[1].err, EACCES);
  EXPECT_EQ(reports[1].pid, ::getpid());
  EXPECT_STREQ(reports[1].path, "ws/a/../b");
  EXPECT_GT(reports[1].seq, reports[0].seq);
}

// The leading ".." of a relative path climb the cwd (the kernel's physical
// name for it): "cmake .." and "gcc -I../include" work; climbing out of the
// workspace is judged as the outside path it names.
TEST_F(PreloadHooks, LeadingDotDotClimbsTheCwd) {
  ::mkdir(tree_->Ws("c").c_str(), 0755);
  ::mkdir(tree_->Ws("c/d").c_str(), 0755);
  WriteFile(tree_->Ws("up.txt"), "up\n");
  WriteFile(tree_->Out("victim2"), "original\n");
  ASSERT_EQ(::chdir(tree_->Ws("c/d").c_str()), 0);
  auto open_hook = Hook<OpenFn>("open");
  int fd = open_hook("../../up.txt", O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0) << std::strerror(errno);
  char buf[8] = {};
  EXPECT_EQ(::read(fd, buf, sizeof buf), 3);
  EXPECT_STREQ(buf, "up\n");
  ::close(fd);
  fd = open_hook(".././../made.txt", O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  ASSERT_GE(fd, 0) << std::strerror(errno);
  ::close(fd);
  EXPECT_TRUE(Exists(tree_->Ws("made.txt")));
  errno = 0;
  EXPECT_EQ(open_hook("../../../outside/victim2", O_WRONLY | O_TRUNC | O_CLOEXEC), -1);
  EXPECT_EQ(errno, EACCES);
  EXPECT_EQ(ReadFile(tree_->Out("victim2")), "original\n");
  errno = 0;
  EXPECT_EQ(open_hook("../d/../../up.txt", O_WRONLY | O_CLOEXEC), -1) << "a '..' after a name";
  EXPECT_EQ(errno, EACCES);
  EXPECT_EQ(ReadFile(tree_->Ws("up.txt")), "up\n");
  auto reports = Drain();
  ASSERT_EQ(reports.size(), 4u);
  EXPECT_EQ(reports[0].verdict, static_cast<uint8_t>(wire::ReportVerdict::kAdmitted));
  EXPECT_EQ(reports[2].verdict, static_cast<uint8_t>(wire::ReportVerdict::kRefused));
  EXPECT_EQ(reports[3].verdict, static_cast<uint8_t>(wire::ReportVerdict::kRefused));
}

TEST_F(PreloadHooks, OutsideWriteRefusedAndFileUnchanged) {
  WriteFile(tree_->Out("victim"), "original\n");
  auto open_hook = Hook<OpenFn>("open");
  auto openat_hook = Hook<OpenatFn>("openat");
  auto fopen_hook = Hook<FopenFn>("fopen");
  errno = 0;
  EXPECT_EQ(open_hook(tree_->Out("victim").c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC), -1);
  EXPECT_EQ(errno, EACCES);
  EXPECT_EQ(openat_hook(AT_FDCWD, tree_->Out("new").c_str(), O_WRONLY | O_CREAT, 0644), -1);
  EXPECT_EQ(errno, EACCES);
  EXPECT_EQ(fopen_hook(tree_->Out("victim").c_str(), "w"), nullptr);
  EXPECT_EQ(errno, EACCES);
  EXPECT_EQ(Hook<UnlinkFn>("unlink")(tree_->Out("victim").c_str()), -1);
  EXPECT_EQ(errno, EACCES);
  EXPECT_EQ(Hook<RenameFn>("rename")(tree_->Out("victim").c_str(), tree_->Ws("stolen").c_str()), -1);
  EXPECT_EQ(errno, EACCES);
  EXPECT_EQ(ReadFile(tree_->Out("victim")), "original\n");
  EXPECT_FALSE(Exists(tree_->Out("new")));
  EXPECT_FALSE(Exists(tree_->Ws("stolen")));
  // Reads outside the workspace and the read-only set are refused too;
  // reads in the read-only set are admitted.
  EXPECT_EQ(open_hook(tree_->Out("victim").c_str(), O_RDONLY), -1);
  EXPECT_EQ(errno, EACCES);
  int fd = open_hook("/etc/passwd", O_RDONLY | O_CLOEXEC);
  EXPECT_GE(fd, 0);
  ::close(fd);
  EXPECT_EQ(open_hook("/etc/hostname", O_WRONLY), -1) << "read-only set is not writable";
  EXPECT_EQ(errno, EACCES);
}

TEST_F(PreloadHooks, InsideAdmittedAndTheRealFileOpened) {
  WriteFile(tree_->Ws("inside.txt"), "inside\n");
  int fd = Hook<OpenFn>("open")(tree_->Ws("inside.txt").c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  char buf[16] = {};
  EXPECT_EQ(::read(fd, buf, sizeof buf), 7);
  EXPECT_STREQ(buf, "inside\n");
  ::close(fd);
  FILE* f = Hook<FopenFn>("fopen")(tree_->Ws("out.txt").c_str(), "w");
  ASSERT_NE(f, nullptr);
  fputs("written\n", f);
  fclose(f);
  EXPECT_EQ(ReadFile(tree_->Ws("out.txt")), "written\n");
  EXPECT_EQ(Hook<RenameFn>("rename")(tree_->Ws("out.txt").c_str(), tree_->Ws("moved.txt").c_str()),
            0);
  EXPECT_EQ(Hook<UnlinkFn>("remove")(tree_->Ws("moved.txt").c_str()), 0);
  EXPECT_FALSE(Exists(tree_->Ws("moved.txt")));
  auto reports = Drain();
  ASSERT_EQ(reports.size(), 5u) << "a rename reports both of its paths";
  for (const auto& r : reports) {
    EXPECT_EQ(r.verdict, static_cast<uint8_t>(wire::ReportVerdict::kAdmitted)) << r.path;
    EXPECT_EQ(r.path_class, static_cast<uint8_t>(policy::PathClass::kWorkspace));
  }
  EXPECT_EQ(reports[0].op, static_cast<uint8_t>(wire::ReportOp::kRead));
  EXPECT_EQ(reports[1].op, static_cast<uint8_t>(wire::ReportOp::kMutate));
  EXPECT_EQ(reports[2].call, static_cast<uint16_t>(wire::Call::kRename));
  EXPECT_EQ(std::string(reports[3].path), tree_->Ws("moved.txt"));
  EXPECT_EQ(reports[4].call, static_cast<uint16_t>(wire::Call::kRemove));
}

TEST_F(PreloadHooks, ModePassedThroughForCreatAndTmpfile) {
  int mask = Umask();
  auto open_hook = Hook<OpenFn>("open");
  int fd = open_hook(tree_->Ws("created").c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0640);
  ASSERT_GE(fd, 0);
  struct stat st;
  ASSERT_EQ(::fstat(fd, &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0640u & ~static_cast<unsigned>(mask));
  ::close(fd);
  fd = Hook<OpenatFn>("openat")(AT_FDCWD, tree_->Ws("odd").c_str(), O_RDWR | O_CREAT | O_CLOEXEC,
                                0604);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::fstat(fd, &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0604u & ~static_cast<unsigned>(mask));
  ::close(fd);
  fd = open_hook(tree_->ws().c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  if (fd < 0 && errno == EOPNOTSUPP) GTEST_SKIP() << "filesystem lacks O_TMPFILE";
  ASSERT_GE(fd, 0) << strerror(errno);
  ASSERT_EQ(::fstat(fd, &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u & ~static_cast<unsigned>(mask));
  EXPECT_TRUE(S_ISREG(st.st_mode));
  ::close(fd);
  // O_TMPFILE is a mutation: refused outside the workspace.
  EXPECT_EQ(open_hook(tree_->outside().c_str(), O_TMPFILE | O_RDWR, 0600), -1);
  EXPECT_EQ(errno, EACCES);
}

TEST_F(PreloadHooks, ErrnoPreservedForAdmittedCalls) {
  auto open_hook = Hook<OpenFn>("open");
  errno = 0;
  EXPECT_EQ(open_hook(tree_->Ws("missing").c_str(), O_RDONLY), -1);
  EXPECT_EQ(errno, ENOENT) << "the kernel's errno, untouched";
  EXPECT_EQ(Hook<UnlinkFn>("unlink")(tree_->Ws("missing").c_str()), -1);
  EXPECT_EQ(errno, ENOENT);
  WriteFile(tree_->Ws("present"), "x");
  errno = EXDEV;
  int fd = open_hook(tree_->Ws("present").c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  EXPECT_EQ(errno, EXDEV) << "a successful admitted call leaves errno alone";
  ::close(fd);
  auto reports = Drain();
  ASSERT_EQ(reports.size(), 3u);
  EXPECT_EQ(reports[0].verdict, static_cast<uint8_t>(wire::ReportVerdict::kAdmitted));
}

TEST_F(PreloadHooks, OverLongPathIsRefusedBeforeTheKernel) {
  std::string longp = tree_->ws() + "/" + std::string(5000, 'x');
  errno = 0;
  EXPECT_EQ(Hook<OpenFn>("open")(longp.c_str(), O_RDONLY), -1);
  EXPECT_EQ(errno, ENAMETOOLONG);
  auto reports = Drain();
  ASSERT_EQ(reports.size(), 1u);
  EXPECT_EQ(reports[0].truncated, 1);
  EXPECT_EQ(reports[0].verdict, static_cast<uint8_t>(wire::ReportVerdict::kRefused));
}

TEST_F(PreloadHooks, DirfdRelativePathsUseTheDirectory) {
  ::mkdir(tree_->Ws("d").c_str(), 0755);
  int ws = ::open(tree_->Ws("d").c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  int out = ::open(tree_->outside().c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  ASSERT_GE(ws, 0);
  ASSERT_GE(out, 0);
  auto openat_hook = Hook<OpenatFn>("openat");
  int fd = openat_hook(ws, "f", O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  EXPECT_GE(fd, 0);
  ::close(fd);
  EXPECT_TRUE(Exists(tree_->Ws("d/f")));
  EXPECT_EQ(openat_hook(out, "f", O_WRONLY | O_CREAT | O_CLOEXEC, 0644), -1);
  EXPECT_EQ(errno, EACCES);
  EXPECT_FALSE(Exists(tree_->Out("f")));
  using UnlinkatFn = int (*)(int, const char*, int);
  EXPECT_EQ(Hook<UnlinkatFn>("unlinkat")(ws, "f", 0), 0);
  ::close(ws);
  ::close(out);
}

// Relative paths are judged against a cached cwd (a getcwd per call cost
// ~2 µs). The library's chdir invalidates it: a relative create is admitted
// in the workspace and refused once the tool has moved out.
TEST_F(PreloadHooks, RelativePathsFollowAChdirThroughTheLibrary) {
  char here[4096];
  ASSERT_NE(::getcwd(here, sizeof here), nullptr);
  using ChdirFn = int (*)(const char*);
  auto chdir_hook = Hook<ChdirFn>("chdir");
  auto open_hook = Hook<OpenFn>("open");
  ASSERT_EQ(chdir_hook(tree_->ws().c_str()), 0);
  int fd = open_hook("rel-in", O_WRONLY | O_CREAT | O_CLOEXEC, 0644);  // fills the cache
  EXPECT_GE(fd, 0);
  ::close(fd);
  ASSERT_EQ(chdir_hook(tree_->outside().c_str()), 0);
  EXPECT_EQ(open_hook("rel-out", O_WRONLY | O_CREAT | O_CLOEXEC, 0644), -1);
  EXPECT_EQ(errno, EACCES);
  EXPECT_FALSE(Exists(tree_->Out("rel-out"))) << "a stale cwd admitted a write outside";
  using FchdirFn = int (*)(int);
  int ws = ::open(tree_->ws().c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  ASSERT_EQ(Hook<FchdirFn>("fchdir")(ws), 0);
  ::close(ws);
  fd = open_hook("rel-in2", O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  EXPECT_GE(fd, 0) << "fchdir back into the workspace is seen too";
  ::close(fd);
  ASSERT_EQ(::chdir(here), 0);
}

// A chdir the library does not see (here libc's own, as a raw syscall
// would be) leaves the cache stale; a stale cwd must not refuse an honest
// relative open: the refusal is judged again on a fresh getcwd.
TEST_F(PreloadHooks, AStaleCachedCwdNeverRefusesAnHonestOpen) {
  char here[4096];
  ASSERT_NE(::getcwd(here, sizeof here), nullptr);
  using ChdirFn = int (*)(const char*);
  auto open_hook = Hook<OpenFn>("open");
  ASSERT_EQ(Hook<ChdirFn>("chdir")(tree_->outside().c_str()), 0);
  EXPECT_EQ(open_hook("stale-out", O_WRONLY | O_CREAT | O_CLOEXEC, 0644), -1);  // cached: outside
  ASSERT_EQ(::chdir(tree_->ws().c_str()), 0);  // unseen by the library
  int fd = open_hook("stale-in", O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  EXPECT_GE(fd, 0) << "refused on a stale cwd: " << std::strerror(errno);
  ::close(fd);
  EXPECT_TRUE(Exists(tree_->Ws("stale-in")));
  ASSERT_EQ(::chdir(here), 0);
}

TEST_F(PreloadHooks, AdmittedCallsAreBatchedAndARefusalSendsThem) {
  WriteFile(tree_->Ws("batched.txt"), "x");
  auto open_hook = Hook<OpenFn>("open");
  for (int i = 0; i < 3; ++i) {
    int fd = open_hook(tree_->Ws("batched.txt").c_str(), O_RDONLY | O_CLOEXEC);
    ASSERT_GE(fd, 0);
    ::close(fd);
  }
  EXPECT_TRUE(Receive().empty()) << "admitted calls wait in the thread's batch";
  // A file that exists: what is not there is the kernel's ENOENT, no refusal.
  WriteFile(tree_->Out("secret"), "secret\n");
  EXPECT_EQ(open_hook(tree_->Out("secret").c_str(), O_RDONLY), -1);
  size_t datagrams = 0;
  auto reports = Receive(&datagrams);
  EXPECT_EQ(datagrams, 1u) << "one send for the batch and the refusal";
  ASSERT_EQ(reports.size(), 4u);
  for (size_t i = 1; i < reports.size(); ++i) EXPECT_EQ(reports[i].seq, reports[i - 1].seq + 1);
  EXPECT_EQ(reports[3].verdict, static_cast<uint8_t>(wire::ReportVerdict::kRefused));
}

TEST_F(PreloadHooks, AFullBatchIsSentWithoutWaiting) {
  WriteFile(tree_->Ws("full.txt"), "x");
  auto open_hook = Hook<OpenFn>("open");
  for (unsigned i = 0; i < wire::kReportBatchMax + 1; ++i) {
    int fd = open_hook(tree_->Ws("full.txt").c_str(), O_RDONLY | O_CLOEXEC);
    ASSERT_GE(fd, 0);
    ::close(fd);
  }
  size_t datagrams = 0;
  EXPECT_EQ(Receive(&datagrams).size(), wire::kReportBatchMax);
  EXPECT_EQ(datagrams, 1u);
  EXPECT_EQ(Drain().size(), 1u) << "the one after the full batch was still batched";
}

// A channel with no room: the batch is dropped and counted, the tool does
// not wait, and errno stays the tool's (the failed send happens inside an
// admitted call that succeeds).
TEST_F(PreloadHooks, AFullChannelDropsAndCountsWithoutTouchingErrno) {
  WriteFile(tree_->Ws("dropped.txt"), "x");
  auto open_hook = Hook<OpenFn>("open");
  int tool_end = std::atoi(std::getenv(wire::kEnvReportFd));
  wire::Report filler{};
  while (::send(tool_end, &filler, sizeof filler, MSG_DONTWAIT) == sizeof filler) {
  }
  ASSERT_EQ(errno, EAGAIN) << "the channel is full";
  for (unsigned i = 0; i < wire::kReportBatchMax; ++i) {
    errno = EXDEV;
    int fd = open_hook(tree_->Ws("dropped.txt").c_str(), O_RDONLY | O_CLOEXEC);
    ASSERT_GE(fd, 0);
    EXPECT_EQ(errno, EXDEV) << "call " << i << ": the failed batch send left errno alone";
    ::close(fd);
  }
  for (const wire::Report& r : Receive()) {
    EXPECT_EQ(r.magic, 0u) << "only the filler was queued: the full batch was dropped";
  }
  EXPECT_EQ(open_hook(kFlushPath, O_WRONLY), -1);
  auto after = Receive();
  ASSERT_EQ(after.size(), 1u);
  EXPECT_EQ(after[0].dropped, wire::kReportBatchMax) << "the drop is counted";
}

// A forked child starts with its own counters and discards the batch it
// inherited (the parent sends it); _exit sends the child's batch and totals.
TEST_F(PreloadHooks, ForkChildSendsOnlyItsOwnRecordsAndItsTotals) {
  WriteFile(tree_->Ws("forked.txt"), "x");
  auto open_hook = Hook<OpenFn>("open");
  auto exit_hook = Hook<void (*)(int)>("_exit");
  for (int i = 0; i < 2; ++i) ::close(open_hook(tree_->Ws("forked.txt").c_str(), O_RDONLY));
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    int fd = open_hook(tree_->Ws("forked.txt").c_str(), O_RDONLY);
    exit_hook(fd >= 0 ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  auto child = Receive();
  ASSERT_EQ(child.size(), 2u) << "the child's open and its final record, nothing of the parent's";
  EXPECT_EQ(child[0].pid, pid);
  EXPECT_EQ(child[0].seq, 1u);
  EXPECT_EQ(child[1].call, static_cast<uint16_t>(wire::Call::kExit));
  EXPECT_EQ(child[1].pid, pid);
  EXPECT_EQ(child[1].seq, 1u) << "the child's total";
  auto parent = Drain();
  ASSERT_EQ(parent.size(), 2u) << "the parent's batch is sent once, by the parent";
  EXPECT_EQ(parent[0].pid, ::getpid());
}

// exec ends the image without the destructor: the batch goes out first,
// with the image's totals (execl builds its argv as glibc does).
TEST_F(PreloadHooks, ExecSendsTheBatchAndTheImageTotals) {
  WriteFile(tree_->Ws("exec.txt"), "x");
  auto open_hook = Hook<OpenFn>("open");
  using ExeclFn = int (*)(const char*, const char*, ...);
  auto execl_hook = Hook<ExeclFn>("execl");
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::close(open_hook(tree_->Ws("exec.txt").c_str(), O_RDONLY));
    execl_hook("/bin/sh", "sh", "-c", "exit 7", static_cast<char*>(nullptr));
    ::_exit(100);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status)) << status;
  EXPECT_EQ(WEXITSTATUS(status), 7) << "execl passed its arguments";
  auto child = Receive();
  ASSERT_EQ(child.size(), 2u);
  EXPECT_EQ(child[0].pid, pid);
  EXPECT_EQ(child[1].call, static_cast<uint16_t>(wire::Call::kExit));
  EXPECT_EQ(child[1].seq, 1u);
}

// "/dev/stderr", "/dev/fd/N": judged by the descriptor the tool holds.
TEST_F(PreloadHooks, HeldDescriptorsReopenWithTheAccessTheyHave) {
  auto open_hook = Hook<OpenFn>("open");
  int p[2];
  ASSERT_EQ(::pipe2(p, O_CLOEXEC), 0);
  std::string pipe_w = "/dev/fd/" + std::to_string(p[1]);
  int fd = open_hook(pipe_w.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  ASSERT_GE(fd, 0) << "a shell's '> /dev/fd/N' on a pipe: " << strerror(errno);
  EXPECT_EQ(::write(fd, "x", 1), 1);
  ::close(fd);
  char c = 0;
  EXPECT_EQ(::read(p[0], &c, 1), 1);
  int null_w = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
  fd = open_hook(("/proc/self/fd/" + std::to_string(null_w)).c_str(), O_WRONLY | O_CLOEXEC);
  EXPECT_GE(fd, 0) << strerror(errno);
  ::close(fd);

  // An outside file held read-only: reading it again is what it already
  // may do; writing through the alias is refused, in every spelling.
  WriteFile(tree_->Out("held.txt"), "held\n");
  int held = ::open(tree_->Out("held.txt").c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(held, 0);
  std::string n = std::to_string(held);
  fd = open_hook(("/dev/fd/" + n).c_str(), O_RDONLY | O_CLOEXEC);
  EXPECT_GE(fd, 0) << strerror(errno);
  ::close(fd);
  for (const std::string& alias : {"/dev/fd/" + n, "/proc/self/fd/" + n, "/proc/thread-self/fd/" + n}) {
    for (int flags : {O_WRONLY, O_RDWR, O_WRONLY | O_TRUNC}) {
      errno = 0;
      EXPECT_EQ(open_hook(alias.c_str(), flags | O_CLOEXEC), -1) << alias << " " << flags;
      EXPECT_EQ(errno, EACCES);
    }
  }
  EXPECT_EQ(Hook<FopenFn>("fopen")(("/dev/fd/" + n).c_str(), "r+"), nullptr);
  EXPECT_EQ(errno, EACCES);
  EXPECT_EQ(ReadFile(tree_->Out("held.txt")), "held\n");
  auto reports = Drain();
  ASSERT_FALSE(reports.empty());
  EXPECT_EQ(reports[0].path_class, static_cast<uint8_t>(policy::PathClass::kHeldFd));
  EXPECT_EQ(reports[0].verdict, static_cast<uint8_t>(wire::ReportVerdict::kAdmitted));
  EXPECT_EQ(reports.back().verdict, static_cast<uint8_t>(wire::ReportVerdict::kRefused));
  // Not an alias: the ordinary rules ("/dev/fd/3/x", "/dev/stdio").
  EXPECT_EQ(open_hook(("/dev/fd/" + n + "/x").c_str(), O_RDONLY), -1);
  EXPECT_EQ(open_hook("/dev/stdio", O_RDONLY), -1);
  ::close(held);
  ::close(null_w);
  ::close(p[0]);
  ::close(p[1]);
}

}  // namespace
}  // namespace cordon::testing
