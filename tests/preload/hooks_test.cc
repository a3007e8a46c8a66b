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
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
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
  static std::vector<wire::Report> Drain() {
    std::vector<wire::Report> out;
    wire::Report r;
    while (::recv(reports_, &r, sizeof(r), MSG_DONTWAIT) == static_cast<ssize_t>(sizeof(r))) {
      out.push_back(r);
    }
    return out;
  }
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

TEST_F(PreloadHooks, DotDotRefusedAlthoughItResolvesInside) {
  ::mkdir(tree_->Ws("a").c_str(), 0755);
  WriteFile(tree_->Ws("b"), "b\n");
  std::string path = tree_->ws() + "/a/../b";
  int honest = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(honest, 0) << "the kernel would open it";
  ::close(honest);
  auto open_hook = Hook<OpenFn>("open");
  errno = 0;
  EXPECT_EQ(open_hook(path.c_str(), O_RDONLY | O_CLOEXEC), -1);
  EXPECT_EQ(errno, EACCES);
  // Relative to the cwd as well.
  ASSERT_EQ(::chdir(tree_->root().c_str()), 0);
  errno = 0;
  EXPECT_EQ(open_hook("ws/a/../b", O_RDONLY | O_CLOEXEC), -1);
  EXPECT_EQ(errno, EACCES);
  auto reports = Drain();
  ASSERT_EQ(reports.size(), 2u);
  EXPECT_EQ(reports[1].call, static_cast<uint16_t>(wire::Call::kOpen));
  EXPECT_EQ(reports[1].verdict, static_cast<uint8_t>(wire::ReportVerdict::kRefused));
  EXPECT_EQ(reports[1].err, EACCES);
  EXPECT_EQ(reports[1].pid, ::getpid());
  EXPECT_STREQ(reports[1].path, "ws/a/../b");
  EXPECT_GT(reports[1].seq, reports[0].seq);
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

}  // namespace
}  // namespace cordon::testing
