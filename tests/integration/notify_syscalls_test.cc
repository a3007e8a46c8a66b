// Every syscall the supervisor decides, one at a time and issued raw (the
// exact syscall, whatever libc would pick): refused on a file outside the
// workspace, which is left exactly as it was (content, mode, owner, times,
// links, xattr, file flags), and working on a file inside under
// workspace-write. For the dynamic and the static probe, on both rungs.
// The outside directory is granted read-only, so the fd forms can open
// their file and the refusal is the supervisor's, not a failed open.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "tests/support/probe_test.h"
#include "tests/support/test_env.h"

namespace cordon::testing {
namespace {

constexpr time_t kProbeTime = 1000000000;  // what the probe's utime* ops set

std::string Xattr(const std::string& path) {
  char buf[64];
  ssize_t n = ::lgetxattr(path.c_str(), "user.cordon", buf, sizeof buf);
  return n < 0 ? "<none>" : std::string(buf, static_cast<size_t>(n));
}

// FS_IOC_GETFLAGS, or -errno.
long Flags(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return -errno;
  int flags = 0;
  long rc = ::ioctl(fd, FS_IOC_GETFLAGS, &flags) == 0 ? flags : -errno;
  ::close(fd);
  return rc;
}

// Everything a refused syscall could have changed about a file.
std::string State(const std::string& path) {
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) return "<missing>";
  return "content=" + ReadFile(path) + " mode=" + std::to_string(st.st_mode) +
         " owner=" + std::to_string(st.st_uid) + ":" + std::to_string(st.st_gid) +
         " mtime=" + std::to_string(st.st_mtim.tv_sec) + "." + std::to_string(st.st_mtim.tv_nsec) +
         " nlink=" + std::to_string(st.st_nlink) +
         " size=" + std::to_string(st.st_size) + " xattr=" + Xattr(path) +
         " flags=" + std::to_string(Flags(path));
}

class NotifiedSyscallTest : public ProbeTest {
 protected:
  void SetUp() override {
    secret_ = t_.Out("secret.txt");
    WriteFile(secret_, "secret\n");
    ::chmod(secret_.c_str(), 0644);
    xattrs_ = ::setxattr(secret_.c_str(), "user.cordon", "keep", 4, 0) == 0;
  }
  // A fresh file inside the workspace, with the xattr when supported.
  std::string Mine(const std::string& name) {
    std::string p = t_.Ws(name);
    WriteFile(p, "mine\n");
    if (xattrs_) ::setxattr(p.c_str(), "user.cordon", "mine", 4, 0);
    return p;
  }
  int Inside(const std::vector<std::string>& op) { return Probe("workspace-write", op); }
  int Outside(const std::vector<std::string>& op) {
    return Probe("workspace-write", op, {"--ro", t_.outside()});
  }
  // `op` on the outside file: refused with `err`, nothing changed.
  void ExpectRefusedOutside(const std::string& op, int err = EACCES) {
    SCOPED_TRACE(op);
    std::string before = State(secret_);
    EXPECT_EQ(Outside({op, secret_}), err) << last_.err;
    EXPECT_EQ(State(secret_), before);
  }

  std::string secret_;
  bool xattrs_ = false;
};

time_t Mtime(const std::string& p) {
  struct stat st;
  return ::lstat(p.c_str(), &st) == 0 ? st.st_mtim.tv_sec : -1;
}

TEST_P(NotifiedSyscallTest, TimesAndOwners) {
  for (const char* op : {"utime", "utimes", "futimesat", "lchown", "fchown", "truncate"}) {
    ExpectRefusedOutside(op);
    std::string mine = Mine(std::string(op) + ".txt");
    EXPECT_EQ(Inside({op, mine}), 0) << op << ": " << last_.err;
    if (std::string(op).find("utime") != std::string::npos) {
      EXPECT_EQ(Mtime(mine), kProbeTime) << op;
    }
  }
  EXPECT_EQ(ReadFile(t_.Ws("truncate.txt")), "");
}

TEST_P(NotifiedSyscallTest, ALinksOwnOwnerAndTimesChangeButNeverItsTarget) {
  // tar and cp -a give each link they make its owner and times with calls
  // that do not follow it; the target, inside or outside, stays as it was.
  std::string mine = Mine("target.txt");
  ASSERT_EQ(::symlink("target.txt", t_.Ws("in-link").c_str()), 0);
  ASSERT_EQ(::symlink(secret_.c_str(), t_.Ws("out-link").c_str()), 0);
  std::string target_before = State(mine), secret_before = State(secret_);
  for (const char* link : {"in-link", "out-link"}) {
    for (const char* op : {"lutimens", "lchown", "fchownat-nofollow"}) {
      SCOPED_TRACE(std::string(op) + " " + link);
      EXPECT_EQ(Outside({op, t_.Ws(link)}), 0) << last_.err;
    }
    EXPECT_EQ(Mtime(t_.Ws(link)), kProbeTime) << link;
    // A link has no mode of its own and takes no user xattr (the kernel's
    // answers); the calls that follow it are refused.
    EXPECT_EQ(Outside({"lchmod2", t_.Ws(link)}), EOPNOTSUPP) << last_.err;
    EXPECT_EQ(Outside({"lsetxattr", t_.Ws(link)}), EPERM) << last_.err;
  }
  EXPECT_EQ(State(mine), target_before);
  // The calls that follow a link: refused for the one that leads outside.
  for (const char* op : {"utimes", "chown", "chmod", "setxattr"}) {
    EXPECT_EQ(Outside({op, t_.Ws("out-link")}), EACCES) << op;
  }
  EXPECT_EQ(State(secret_), secret_before);
  // A link with a second name may have it outside: not even the link changes.
  ASSERT_EQ(::linkat(AT_FDCWD, t_.Ws("in-link").c_str(), AT_FDCWD, t_.Out("twin").c_str(), 0), 0);
  const timespec later[2] = {{2000000000, 0}, {2000000000, 0}};
  ASSERT_EQ(::utimensat(AT_FDCWD, t_.Out("twin").c_str(), later, AT_SYMLINK_NOFOLLOW), 0);
  EXPECT_EQ(Outside({"lutimens", t_.Ws("in-link")}), EACCES);
  EXPECT_EQ(Outside({"lchown", t_.Ws("in-link")}), EACCES);
  EXPECT_EQ(Mtime(t_.Out("twin")), 2000000000);
}

// A call that follows links acts on what a link in the workspace names
// when that is a workspace file, as the kernel would (issue 28: Python's
// tempfile cleanup and shutil.copymode chmod through links); a chain of
// links, relative and absolute, is followed link by link. Protected and
// hard-linked targets stay refused, and so does a link to outside (above).
TEST_P(NotifiedSyscallTest, ACallThatFollowsAWorkspaceLinkChangesItsTarget) {
  std::string mine = Mine("target.txt");
  ASSERT_EQ(::mkdir(t_.Ws("sub").c_str(), 0755), 0);
  ASSERT_EQ(::symlink("../target.txt", t_.Ws("sub/up-link").c_str()), 0);
  ASSERT_EQ(::symlink(t_.Ws("sub/up-link").c_str(), t_.Ws("abs-link").c_str()), 0);
  ASSERT_EQ(::chmod(mine.c_str(), 0600), 0);
  EXPECT_EQ(Inside({"chmod", t_.Ws("abs-link")}), 0) << last_.err;
  struct stat st;
  ASSERT_EQ(::lstat(mine.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0777u);
  EXPECT_EQ(Inside({"utimes", t_.Ws("sub/up-link")}), 0) << last_.err;
  EXPECT_EQ(Mtime(mine), kProbeTime);
  EXPECT_NE(Mtime(t_.Ws("sub/up-link")), kProbeTime);  // the link itself stays
  // A protected file behind a link stays read-only; a hard-linked one too.
  ASSERT_EQ(::mkdir(t_.Ws(".git").c_str(), 0755), 0);
  WriteFile(t_.Ws(".git/config"), "[core]\n");
  ASSERT_EQ(::symlink(".git/config", t_.Ws("cfg-link").c_str()), 0);
  EXPECT_EQ(Inside({"chmod", t_.Ws("cfg-link")}), EACCES);
  ASSERT_EQ(::lstat(t_.Ws(".git/config").c_str(), &st), 0);
  EXPECT_NE(st.st_mode & 07777, 0777u);
  ASSERT_EQ(::link(mine.c_str(), t_.Out("second-name").c_str()), 0);
  EXPECT_EQ(Inside({"utimes", t_.Ws("abs-link")}), EACCES);
}

TEST_P(NotifiedSyscallTest, ExtendedAttributes) {
  if (!xattrs_) GTEST_SKIP() << "SKIPPED LOUDLY: " << t_.root() << " has no user xattrs";
  for (const char* op : {"setxattr", "fsetxattr", "removexattr", "lremovexattr", "fremovexattr"}) {
    ExpectRefusedOutside(op);
    std::string mine = Mine(std::string(op) + ".txt");
    EXPECT_EQ(Inside({op, mine}), 0) << op << ": " << last_.err;
    bool set = std::strstr(op, "setxattr") != nullptr;
    EXPECT_EQ(Xattr(mine), set ? "x" : "<none>") << op;
  }
}

TEST_P(NotifiedSyscallTest, CreationsAndRemovals) {
  for (const char* op : {"mknod-reg", "mknodat-reg"}) {
    EXPECT_EQ(Outside({op, t_.Out(op)}), EACCES) << op;
    EXPECT_FALSE(Exists(t_.Out(op))) << op;
    EXPECT_EQ(Inside({op, t_.Ws(op)}), 0) << op << ": " << last_.err;
    struct stat st;
    EXPECT_TRUE(::lstat(t_.Ws(op).c_str(), &st) == 0 && S_ISREG(st.st_mode)) << op;
  }
  EXPECT_EQ(Outside({"symlinkat", "x", t_.Out("sl")}), EACCES);
  EXPECT_FALSE(Exists(t_.Out("sl")));
  EXPECT_EQ(Inside({"symlinkat", "target", t_.Ws("sl")}), 0) << last_.err;
  char buf[16] = {};
  EXPECT_EQ(::readlink(t_.Ws("sl").c_str(), buf, sizeof buf - 1), 6);

  std::string mine = Mine("linked.txt");
  std::string before = State(secret_);
  EXPECT_EQ(Outside({"linkat", secret_, t_.Ws("stolen")}), EACCES) << "outside into the workspace";
  EXPECT_EQ(Outside({"linkat", mine, t_.Out("planted")}), EACCES) << "the workspace to outside";
  EXPECT_EQ(State(secret_), before);
  EXPECT_FALSE(Exists(t_.Ws("stolen")));
  EXPECT_FALSE(Exists(t_.Out("planted")));
  EXPECT_EQ(Inside({"linkat", mine, t_.Ws("second-name")}), 0) << last_.err;
  EXPECT_EQ(ReadFile(t_.Ws("second-name")), "mine\n");

  ASSERT_EQ(::mkdir(t_.Out("dir").c_str(), 0755), 0);
  EXPECT_EQ(Outside({"rmdir", t_.Out("dir")}), EACCES);
  EXPECT_TRUE(Exists(t_.Out("dir")));
  EXPECT_EQ(Inside({"rmdir-new", t_.Ws("newdir")}), 0) << last_.err;
  EXPECT_FALSE(Exists(t_.Ws("newdir")));
}

TEST_P(NotifiedSyscallTest, RenameExchange) {
  std::string a = Mine("a.txt");
  WriteFile(t_.Ws("b.txt"), "b\n");
  WriteFile(t_.Out("other.txt"), "other\n");
  std::string before = State(secret_);
  EXPECT_EQ(Outside({"exchange", a, secret_}), EACCES);
  EXPECT_EQ(Outside({"exchange", secret_, t_.Out("other.txt")}), EACCES);
  EXPECT_EQ(State(secret_), before);
  EXPECT_EQ(ReadFile(a), "mine\n");
  EXPECT_EQ(ReadFile(t_.Out("other.txt")), "other\n");
  EXPECT_EQ(Inside({"exchange", a, t_.Ws("b.txt")}), 0) << last_.err;
  EXPECT_EQ(ReadFile(a), "b\n");
  EXPECT_EQ(ReadFile(t_.Ws("b.txt")), "mine\n");
}

// FS_IOC_SETFLAGS and FS_IOC_FSSETXATTR, emulated on the fd the tool holds.
TEST_P(NotifiedSyscallTest, FileFlagIoctls) {
  std::string probe_file = Mine("probe-flags.txt");
  long flags = Flags(probe_file);
  int fd = ::open(probe_file.c_str(), O_RDONLY | O_CLOEXEC);
  int set = static_cast<int>(flags) | FS_NODUMP_FL;
  bool supported = flags >= 0 && ::ioctl(fd, FS_IOC_SETFLAGS, &set) == 0;
  ::close(fd);
  if (!supported) {
    GTEST_SKIP() << "SKIPPED LOUDLY: the filesystem of " << t_.root()
                 << " refuses FS_IOC_SETFLAGS itself: " << std::strerror(flags < 0 ? -flags : errno);
  }
  for (const char* op : {"setflags", "fssetxattr"}) {
    ExpectRefusedOutside(op);
    EXPECT_FALSE(Flags(secret_) & FS_NODUMP_FL) << op;
    std::string mine = Mine(std::string(op) + ".txt");
    EXPECT_EQ(Inside({op, mine}), 0) << op << ": " << last_.err;
    EXPECT_TRUE(Flags(mine) & FS_NODUMP_FL) << op;
  }
}

// setxattrat, removexattrat (6.13) and file_setattr (6.17) carry their
// arguments in structs; the supervisor does not emulate them and answers
// ENOSYS (libc and tools fall back to the path and fd forms above).
TEST_P(NotifiedSyscallTest, NewerAtFormsAreRefusedWithEnosys) {
  for (const char* op : {"setxattrat", "removexattrat", "file_setattr"}) {
    ExpectRefusedOutside(op, ENOSYS);
    std::string mine = Mine(std::string(op) + ".txt");
    std::string before = State(mine);
    EXPECT_EQ(Inside({op, mine}), ENOSYS) << op;
    EXPECT_EQ(State(mine), before) << op;
  }
}

// Set-id bits: refused on a file (it would hand its owner's ids to whoever
// runs it, outside the sandbox too), S_ISUID on a directory too; S_ISGID on a
// directory, which only gives new entries its group, is set as the kernel
// sets it for the owner (CPython's test_exist_ok_s_isgid_directory).
TEST_P(NotifiedSyscallTest, SetIdBitsOnAFileAreRefusedSetgidOnADirectoryIsSet) {
  std::string tool = Mine("tool");
  ASSERT_EQ(::chmod(tool.c_str(), 0755), 0);
  ASSERT_EQ(::mkdir(t_.Ws("shared").c_str(), 0755), 0);
  EXPECT_EQ(Inside({"sys", "chmod", tool, "4755"}), EPERM) << last_.err;
  EXPECT_EQ(Inside({"sys", "chmod", tool, "2755"}), EPERM) << last_.err;
  EXPECT_EQ(Inside({"sys", "chmod", t_.Ws("shared"), "4755"}), EPERM) << last_.err;
  struct stat st;
  ASSERT_EQ(::stat(tool.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0755u);
  ASSERT_EQ(::stat(t_.Ws("shared").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0755u);
  EXPECT_EQ(Inside({"sys", "chmod", t_.Ws("shared"), "2775"}), 0) << last_.err;
  ASSERT_EQ(::stat(t_.Ws("shared").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 02775u);
}

INSTANTIATE_TEST_SUITE_P(Probes, NotifiedSyscallTest, ProbeParams(), ProbeParamName);

}  // namespace
}  // namespace cordon::testing
