// The supervisor's emulation of mutating syscalls, end to end with the real
// binary: hard links, symlinks, metadata changes and fds pointing outside,
// sensitive deletes, races, many threads, and a supervisor killed mid-run.
// Each case runs with the dynamic and the static probe, on the default rung
// and on the notify-all rung where it applies.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <thread>

#include "tests/support/child_process.h"
#include "tests/support/probe_test.h"
#include "tests/support/test_env.h"

namespace cordon::testing {
namespace {

class NotifyTest : public ProbeTest {
 protected:
  void SetUp() override {
    WriteFile(t_.Out("secret.txt"), "secret\n");
    ::chmod(t_.Out("secret.txt").c_str(), 0644);
    WriteFile(t_.Ws("mine.txt"), "mine\n");
  }
  int Probe(const std::vector<std::string>& op, const std::vector<std::string>& extra = {}) {
    return ProbeTest::Probe("workspace-write", op, extra);
  }
  mode_t Mode(const std::string& p) {
    struct stat st;
    return ::lstat(p.c_str(), &st) == 0 ? st.st_mode & 07777 : 0;
  }
};

// A FIFO in the workspace is a special file: refused for writing (and,
// without Landlock, for reading) at once. Waiting on it would hold up the
// notify thread, and cordon's exit if nobody opened the other end.
TEST_P(NotifyTest, AFifoIsRefusedWithoutWaiting) {
  ASSERT_EQ(::mkfifo(t_.Ws("fifo").c_str(), 0644), 0);
  EXPECT_EQ(Probe({"open-nohang", "fifo", "w"}), EACCES) << last_.err;
  if (std::get<1>(GetParam())) {  // notify-all: the supervisor opens reads too
    EXPECT_EQ(Probe({"open-nohang", "fifo", "r"}), EACCES) << last_.err;
  }
  // The honest neighbours: a file opened for appending has the tool's flags,
  // without the O_NONBLOCK the supervisor opened it with; an O_PATH open
  // (which takes no other flag) is not given one.
  EXPECT_EQ(Probe({"append-flags", "mine.txt"}), 0) << last_.err;
  EXPECT_EQ(Probe({"opath-write", "mine.txt"}), 0) << last_.err;
}

// The tool holds no capability, so the kernel checks file permissions for
// it: a root tool cannot read another user's 0600 file or look into a 0700
// directory. Where the supervisor looks up and opens for the tool (every
// read on the notify-all rung, inotify watches on both), it does so with
// its own effective capabilities lowered, and answers as the kernel would.
TEST_P(NotifyTest, ReadsAndWatchesGetTheToolsFilePermissions) {
  constexpr uid_t kNobody = 65534;
  WriteFile(t_.Ws("others.txt"), "others\n");
  WriteFile(t_.Ws("shared.txt"), "shared\n");
  ASSERT_EQ(::mkdir(t_.Ws("private").c_str(), 0700), 0);
  WriteFile(t_.Ws("private/x"), "x\n");
  if (::chown(t_.Ws("others.txt").c_str(), kNobody, kNobody) != 0 ||
      ::chown(t_.Ws("shared.txt").c_str(), kNobody, kNobody) != 0 ||
      ::chown(t_.Ws("private").c_str(), kNobody, kNobody) != 0) {
    GTEST_SKIP() << "SKIPPED LOUDLY: cannot give files to uid " << kNobody << " (not root?)";
  }
  ::chmod(t_.Ws("others.txt").c_str(), 0600);
  ::chmod(t_.Ws("shared.txt").c_str(), 0644);
  if (::geteuid() != 0) GTEST_SKIP() << "SKIPPED LOUDLY: the tool must be a capless root";
  EXPECT_EQ(Probe({"read", "others.txt"}), EACCES) << last_.err;
  EXPECT_EQ(Probe({"read", "private/x"}), EACCES) << last_.err;
  EXPECT_EQ(Probe({"read", "private/absent"}), EACCES) << "no word of what it holds\n" << last_.err;
  EXPECT_EQ(Probe({"exec", "private/absent"}), EACCES) << last_.err;
  // In a container without pidfd_getfd no watch is made (README): EBADF.
  auto watch = [&](int err) { return InContainerPass() ? EBADF : err; };
  EXPECT_EQ(Probe({"inotify", "others.txt"}), watch(EACCES)) << last_.err;
  EXPECT_EQ(Probe({"inotify", "private/x"}), EACCES) << "its path is refused first\n" << last_.err;
  // The honest neighbours: what the permissions let anyone read.
  EXPECT_EQ(Probe({"read", "shared.txt"}), 0) << last_.err;
  EXPECT_EQ(Probe({"inotify", "shared.txt"}), watch(0)) << last_.err;
  EXPECT_EQ(Probe({"inotify", "private"}), watch(EACCES)) << "watching needs read permission\n"
                                                          << last_.err;
  EXPECT_EQ(Probe({"read", "absent"}), ENOENT) << last_.err;
}

// The mutations the supervisor makes for the tool are made with the tool's
// file permissions too, so the strict default grants nothing the kernel
// would refuse the capless tool itself (as under links: kernel): no write
// to another user's file, no entry made or moved in its directory, and its
// modes, times and attributes stay its own.
TEST_P(NotifyTest, MutationsGetTheToolsFilePermissions) {
  constexpr uid_t kNobody = 65534;
  WriteFile(t_.Ws("others.txt"), "others\n");
  ASSERT_EQ(::mkdir(t_.Ws("theirs").c_str(), 0755), 0);
  WriteFile(t_.Ws("theirs/in.txt"), "in\n");
  WriteFile(t_.Ws("mine.txt"), "mine\n");
  for (const char* p : {"others.txt", "theirs", "theirs/in.txt"}) {
    if (::chown(t_.Ws(p).c_str(), kNobody, kNobody) != 0) {
      GTEST_SKIP() << "SKIPPED LOUDLY: cannot give files to uid " << kNobody << " (not root?)";
    }
  }
  ::chmod(t_.Ws("others.txt").c_str(), 0644);
  if (::geteuid() != 0) GTEST_SKIP() << "SKIPPED LOUDLY: the tool must be a capless root";
  for (const std::vector<std::string>& op :
       std::vector<std::vector<std::string>>{{"write", "others.txt"},
                                             {"trunc", "others.txt"},
                                             {"truncate", "others.txt"},
                                             {"utimens", "others.txt"},
                                             {"setxattr", "others.txt"},
                                             {"write", "theirs/new.txt"},
                                             {"mkdir", "theirs/dir"},
                                             {"symlink", "mine.txt", "theirs/sym"},
                                             {"link", "mine.txt", "theirs/link"},
                                             {"rename", "theirs/in.txt", "theirs/moved.txt"},
                                             {"rename", "mine.txt", "theirs/mine.txt"}}) {
    EXPECT_EQ(Probe(op), EACCES) << op[0] << " " << op[1] << ": " << last_.err;
  }
  for (const char* op : {"chmod", "chown", "fchown"}) {
    EXPECT_EQ(Probe({op, "others.txt"}), EPERM) << op << ": " << last_.err;
  }
  EXPECT_EQ(Probe({"utimes", "others.txt"}), EPERM) << "explicit times: owner only\n" << last_.err;
  int acl = Probe({"setacl", "others.txt"});
  if (acl != EOPNOTSUPP) {
    EXPECT_EQ(acl, EPERM) << "an ACL is the owner's\n" << last_.err;
  }
  EXPECT_EQ(ReadFile(t_.Ws("others.txt")), "others\n");
  EXPECT_EQ(ReadFile(t_.Ws("theirs/in.txt")), "in\n");
  struct stat st;
  ASSERT_EQ(::stat(t_.Ws("others.txt").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0644u);
  EXPECT_EQ(st.st_uid, kNobody);
  EXPECT_NE(st.st_mtime, 1000000000) << "utimes changed another user's file";
  for (const char* p : {"theirs/new.txt", "theirs/dir", "theirs/sym", "theirs/link",
                        "theirs/moved.txt", "theirs/mine.txt"}) {
    EXPECT_FALSE(Exists(t_.Ws(p))) << p;
  }
  // The honest neighbours: the tool's own files and directories.
  EXPECT_EQ(Probe({"write", "mine.txt"}), 0) << last_.err;
  EXPECT_EQ(Probe({"chmod", "mine.txt"}), 0) << last_.err;
  EXPECT_EQ(Probe({"utimes", "mine.txt"}), 0) << last_.err;
  EXPECT_EQ(Probe({"setxattr", "mine.txt"}), 0) << last_.err;
  EXPECT_EQ(Probe({"write", "new.txt"}), 0) << last_.err;
  EXPECT_EQ(Probe({"mkdir", "dir"}), 0) << last_.err;
  EXPECT_EQ(Probe({"rename", "new.txt", "dir/new.txt"}), 0) << last_.err;
  EXPECT_EQ(ReadFile(t_.Ws("mine.txt")), "probe\n");
  EXPECT_TRUE(Exists(t_.Ws("dir/new.txt")));
}

// A tool that makes itself undumpable (ssh-agent, gpg-agent do) denies a
// capless peer its memory and descriptors: the supervisor reads them with
// its own permissions, and the mutation itself is still the tool's.
TEST_P(NotifyTest, AnUndumpableToolIsStillServed) {
  WriteFile(t_.Ws("mine.txt"), "mine\n");
  if (InContainerPass()) {
    // No CAP_SYS_PTRACE: the tool may not make itself undumpable, and is
    // told so (EPERM); one that goes on (ssh does) is served.
    EXPECT_EQ(Probe({"undumpable", "write", "mine.txt"}), EPERM) << last_.err;
    EXPECT_NE(last_.err.find("PR_SET_DUMPABLE"), std::string::npos) << last_.err;
    EXPECT_EQ(ReadFile(t_.Ws("mine.txt")), "mine\n");
    EXPECT_EQ(Probe({"try-undumpable", "write", "mine.txt"}), 0) << last_.err;
    EXPECT_EQ(Probe({"try-undumpable", "rename", "mine.txt", "moved.txt"}), 0) << last_.err;
    EXPECT_EQ(ReadFile(t_.Ws("moved.txt")), "probe\n");
    EXPECT_EQ(Probe({"try-undumpable", "write", t_.Out("outside.txt")}), EACCES) << last_.err;
    EXPECT_FALSE(Exists(t_.Out("outside.txt")));
    return;
  }
  EXPECT_EQ(Probe({"undumpable", "write", "mine.txt"}), 0) << last_.err;
  EXPECT_EQ(Probe({"undumpable", "rename", "mine.txt", "moved.txt"}), 0) << last_.err;
  EXPECT_EQ(Probe({"undumpable", "mkdir", "dir"}), 0) << last_.err;
  EXPECT_EQ(Probe({"in", "dir", "undumpable", "write", "rel.txt"}), 0) << last_.err;
  EXPECT_EQ(Probe({"undumpable", "fchmod-ro", "moved.txt"}), 0) << last_.err;
  EXPECT_EQ(ReadFile(t_.Ws("moved.txt")), "probe\n");
  EXPECT_TRUE(Exists(t_.Ws("dir/rel.txt")));
  EXPECT_EQ(Probe({"undumpable", "write", t_.Out("outside.txt")}), EACCES) << last_.err;
  EXPECT_FALSE(Exists(t_.Out("outside.txt")));
}

// /dev/shm is the host's: glibc makes POSIX semaphores and shared memory
// there (Python's multiprocessing), so a run may make files at its top
// level and use, link, rename and remove those, and what it leaves is
// removed when it ends. Nothing it did not make there can be opened,
// changed, moved or removed, and no directory or link can be made.
TEST_P(NotifyTest, SharedMemoryHoldsTheRunsOwnFilesOnly) {
  struct stat st;
  if (::stat("/dev/shm", &st) != 0 || !S_ISDIR(st.st_mode)) {
    GTEST_SKIP() << "SKIPPED LOUDLY: no /dev/shm directory here";
  }
  const std::string prefix =
      "/dev/shm/cordon-test-" + std::to_string(::getpid()) + "-" + std::to_string(::time(nullptr));
  const std::string host = prefix + "-host";
  WriteFile(host, "host\n");
  ::chmod(host.c_str(), 0644);
  EXPECT_EQ(Probe({"shm-cycle", prefix}), 0) << last_.err;
  for (const char* s : {".tmp", ".sem", ".moved", ".left"}) {
    EXPECT_FALSE(Exists(prefix + s)) << prefix + s << ": dropped by the tool or removed by cordon";
  }
  for (const std::vector<std::string>& op :
       std::vector<std::vector<std::string>>{{"write", host},
                                             {"trunc", host},
                                             {"unlink", host},
                                             {"rename", host, prefix + "-moved"},
                                             {"link", host, prefix + "-link"},
                                             {"chmod", host},
                                             {"read", host},
                                             {"mkdir", prefix + "-dir"},
                                             {"symlink", host, prefix + "-sym"}}) {
    EXPECT_EQ(Probe(op), EACCES) << op[0] << ": " << last_.err;
  }
  EXPECT_EQ(ReadFile(host), "host\n");
  ASSERT_EQ(::stat(host.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0644u);
  for (const char* s : {"-moved", "-link", "-dir", "-sym"}) EXPECT_FALSE(Exists(prefix + s)) << s;
  // Where the kernel takes the writes (links: kernel, deletes allowed),
  // nothing tells the run's files from the host's: /dev/shm stays shut.
  // Not on the notify-all rung, where the supervisor decides all the same.
  WriteFile(t_.Out("fast.json"), R"({"links": "kernel", "sensitive": {"delete": "allow"}})");
  EXPECT_EQ(Probe({"create", prefix + "-fast"}, {"--policy", t_.Out("fast.json")}),
            notify_all() ? 0 : EACCES)
      << last_.err;
  EXPECT_FALSE(Exists(prefix + "-fast"));
  // Deletes allowed or not, the host's file is not the run's to delete.
  EXPECT_EQ(Probe({"unlink", host}, {"--policy", t_.Out("fast.json")}), EACCES) << last_.err;
  EXPECT_EQ(ReadFile(host), "host\n");
  // Only the top level: a directory of the host's holds nothing of the run.
  ASSERT_EQ(::mkdir((prefix + "-hostdir").c_str(), 0755), 0);
  EXPECT_EQ(Probe({"create", prefix + "-hostdir/x"}), EACCES) << last_.err;
  EXPECT_FALSE(Exists(prefix + "-hostdir/x"));
  ::rmdir((prefix + "-hostdir").c_str());
  ::unlink(host.c_str());
}

// "cmake ..", "gcc -I../include", "tar czf ../x.tgz": the leading ".." of a
// relative path climb the tool's cwd or dirfd, which the kernel names by its
// physical path, so there is no alias to refuse. A ".." after a name is one
// ("sub" could be a symlink) and stays refused; climbing out of the
// workspace is refused as any outside path is.
TEST_P(NotifyTest, LeadingParentSegmentsClimbTheCwdOrDirfd) {
  ASSERT_EQ(::mkdir(t_.Ws("sub").c_str(), 0755), 0);
  ASSERT_EQ(::mkdir(t_.Ws("sub/deeper").c_str(), 0755), 0);
  EXPECT_EQ(Probe({"in", "sub", "read", "../mine.txt"}), 0) << last_.err;
  EXPECT_EQ(Probe({"in", "sub/deeper", "create", ".././../made.txt"}), 0) << last_.err;
  EXPECT_EQ(ReadFile(t_.Ws("made.txt")), "probe\n");
  EXPECT_EQ(Probe({"in", "sub", "rename", "../made.txt", "../moved.txt"}), 0) << last_.err;
  EXPECT_TRUE(Exists(t_.Ws("moved.txt")));
  EXPECT_EQ(Probe({"in", "sub", "mkdir", "../newdir"}), 0) << last_.err;
  EXPECT_TRUE(Exists(t_.Ws("newdir")));
  EXPECT_EQ(Probe({"openat-from", "sub/deeper", "../from-dirfd.txt"}), 0) << last_.err;
  EXPECT_EQ(ReadFile(t_.Ws("sub/from-dirfd.txt")), "probe\n");

  // A file is no directory to climb from, whichever layer sees it first.
  EXPECT_EQ(Probe({"openat-from", "mine.txt", "../via-file.txt"}), ENOTDIR) << last_.err;
  EXPECT_FALSE(Exists(t_.Ws("via-file.txt")));
  EXPECT_EQ(Probe({"in", "sub", "create", "deeper/../named.txt"}), EACCES) << last_.err;
  EXPECT_FALSE(Exists(t_.Ws("sub/named.txt")));
  EXPECT_EQ(Probe({"in", "sub", "mkdir", "../sub/../dir2"}), EACCES) << last_.err;
  EXPECT_FALSE(Exists(t_.Ws("dir2")));
  EXPECT_EQ(Probe({"in", "sub", "create", "../../outside/escape.txt"}), EACCES) << last_.err;
  EXPECT_FALSE(Exists(t_.Out("escape.txt")));
  EXPECT_EQ(Probe({"in", "sub", "read", "../../outside/secret.txt"}), EACCES) << last_.err;
}

// Making a name that exists is EEXIST wherever it is, as the kernel says
// before it asks any permission (`mkdir -p` and cmake make every ancestor);
// a new name outside stays refused and is not made.
TEST_P(NotifyTest, MakingAnExistingNameIsEexistEvenOutside) {
  EXPECT_EQ(Probe({"mkdir", t_.outside()}), EEXIST) << last_.err;
  EXPECT_EQ(Probe({"mkdir", "/etc"}), EEXIST) << last_.err;
  EXPECT_EQ(Probe({"symlink", "x", t_.Out("secret.txt")}), EEXIST) << last_.err;
  EXPECT_EQ(Probe({"mkdir", "mine.txt"}), EEXIST) << last_.err;
  EXPECT_EQ(Probe({"mkdir", t_.Out("newdir")}), EACCES) << last_.err;
  EXPECT_FALSE(Exists(t_.Out("newdir")));
  EXPECT_EQ(Probe({"symlink", "x", t_.Out("newlink")}), EACCES) << last_.err;
  EXPECT_FALSE(Exists(t_.Out("newlink")));
  // Not where the tool's own lookup could not reach: a directory of another
  // user's that only its owner may search hides its names from the tool,
  // and the supervisor's capabilities must not tell them.
  ASSERT_EQ(::mkdir(t_.Out("theirs").c_str(), 0700), 0);
  WriteFile(t_.Out("theirs/hidden"), "x\n");
  ASSERT_EQ(::chown(t_.Out("theirs").c_str(), 4242, 4242), 0);
  EXPECT_EQ(Probe({"mkdir", t_.Out("theirs/hidden")}), EACCES) << last_.err;
  EXPECT_EQ(Probe({"mkdir", t_.Out("theirs/absent")}), EACCES) << last_.err;
  // A symlink on the way is followed, as the tool's own lookup (and the
  // kernel's mkdir) would.
  ASSERT_EQ(::symlink(t_.outside().c_str(), t_.Out("via-link").c_str()), 0);
  EXPECT_EQ(Probe({"mkdir", t_.Out("via-link/secret.txt")}), EEXIST) << last_.err;
  EXPECT_EQ(Probe({"mkdir", t_.Out("via-link/theirs/hidden")}), EACCES) << last_.err;
}

TEST_P(NotifyTest, HardLinkToAnOutsideFileCannotBeOpenedForWriting) {
  ASSERT_EQ(::link(t_.Out("secret.txt").c_str(), t_.Ws("hl").c_str()), 0);
  EXPECT_EQ(Probe({"write", "hl"}), EACCES);
  // Left out of the grant at launch (issue 27 item 8): the supervisor names
  // why; the preload, which refuses first in a dynamic tool, sees a denial.
  EXPECT_TRUE(last_.err.find("hard-linked") != std::string::npos ||
              last_.err.find("denied path") != std::string::npos)
      << last_.err;
  EXPECT_EQ(Probe({"trunc", "hl"}), EACCES);
  EXPECT_EQ(Probe({"raw-openat-write", "hl"}), EACCES);
  EXPECT_EQ(ReadFile(t_.Out("secret.txt")), "secret\n");
  EXPECT_EQ(Probe({"write", "mine.txt"}), 0) << "a single-link file next to it is writable";
}

TEST_P(NotifyTest, SymlinkToAnOutsideFileCannotBeWrittenOrChangedThrough) {
  ASSERT_EQ(::symlink(t_.Out("secret.txt").c_str(), t_.Ws("sl").c_str()), 0);
  EXPECT_EQ(Probe({"write", "sl"}), EACCES);
  EXPECT_EQ(Probe({"trunc", "sl"}), EACCES);
  EXPECT_EQ(Probe({"chmod", "sl"}), EACCES);
  EXPECT_EQ(Probe({"truncate", "sl"}), EACCES);
  EXPECT_EQ(ReadFile(t_.Out("secret.txt")), "secret\n");
  EXPECT_EQ(Mode(t_.Out("secret.txt")), 0644);
}

TEST_P(NotifyTest, SymlinkedDirectoryOnTheWayIsRefused) {
  ASSERT_EQ(::symlink(t_.outside().c_str(), t_.Ws("out").c_str()), 0);
  EXPECT_EQ(Probe({"create", "out/new.txt"}), EACCES);
  EXPECT_EQ(Probe({"unlink", "out/secret.txt"}), EACCES);
  EXPECT_FALSE(Exists(t_.Out("new.txt")));
  EXPECT_TRUE(Exists(t_.Out("secret.txt")));
}

// O_CREAT|O_EXCL makes a new inode, never a link, yet it is decided by the
// supervisor like every write-open (no CONTINUE at kernel speed): a protected
// path that did not exist at start has no Landlock carve to stop it, and the
// strict link rule refuses a directory symlink on the way.
TEST_P(NotifyTest, ExclusiveCreationsAreDecidedToo) {
  ASSERT_EQ(::mkdir(t_.Ws("sub").c_str(), 0755), 0);
  ASSERT_EQ(::symlink("sub", t_.Ws("via").c_str()), 0);
  EXPECT_EQ(Probe({"create", ".envrc"}), EACCES) << "a protected path born in the run";
  EXPECT_EQ(Probe({"create", "via/new.txt"}), EACCES) << "through a symlinked directory";
  EXPECT_FALSE(Exists(t_.Ws(".envrc")));
  EXPECT_FALSE(Exists(t_.Ws("sub/new.txt")));
  EXPECT_EQ(Probe({"create", "sub/new.txt"}), 0) << last_.err;
  EXPECT_EQ(ReadFile(t_.Ws("sub/new.txt")), "probe\n");
}

// glibc's fchmodat(AT_SYMLINK_NOFOLLOW) changes the mode through
// /proc/self/fd/N (tar, cp -a and Python's copystat use it), and libacl's
// copy (sed -i, cp -a) sets system.posix_acl_access: both work on the
// tool's own files in the workspace.
TEST_P(NotifyTest, ModesThroughProcFdAndAclsWorkInside) {
  EXPECT_EQ(Probe({"lchmod", "mine.txt"}), 0) << last_.err;
  EXPECT_EQ(Mode(t_.Ws("mine.txt")), 0700u);
  int acl = Probe({"setacl", "mine.txt"});
  if (acl == EOPNOTSUPP) GTEST_SKIP() << "no POSIX ACLs on this filesystem";
  EXPECT_EQ(acl, 0) << last_.err;
  EXPECT_EQ(Mode(t_.Ws("mine.txt")), 0750u);
}

TEST_P(NotifyTest, MetadataOfOutsideFilesCannotChange) {
  struct stat before;
  ASSERT_EQ(::stat(t_.Out("secret.txt").c_str(), &before), 0);
  std::string s = t_.Out("secret.txt");
  EXPECT_EQ(Probe({"chmod", s}), EACCES);
  EXPECT_EQ(Probe({"fchmodat2", s}), EACCES);
  EXPECT_EQ(Probe({"chown", s}), EACCES);
  EXPECT_EQ(Probe({"utimens", s}), EACCES);
  EXPECT_EQ(Probe({"setxattr", s}), EACCES);
  EXPECT_EQ(Probe({"truncate", s}), EACCES);
  // An fd opened read-only on a readable outside file is not a way in,
  // nor is its /proc/self/fd name or an ACL set through it.
  EXPECT_EQ(Probe({"fchmod-ro", s}, {"--ro", t_.outside()}), EACCES) << last_.err;
  EXPECT_EQ(Probe({"lchmod", s}, {"--ro", t_.outside()}), EACCES) << last_.err;
  EXPECT_EQ(Probe({"setacl", s}, {"--ro", t_.outside()}), EACCES) << last_.err;
  struct stat after;
  ASSERT_EQ(::stat(s.c_str(), &after), 0);
  EXPECT_EQ(after.st_mode, before.st_mode);
  EXPECT_EQ(after.st_mtim.tv_sec, before.st_mtim.tv_sec);
  EXPECT_EQ(after.st_mtim.tv_nsec, before.st_mtim.tv_nsec);
  EXPECT_EQ(after.st_size, before.st_size);
  char buf[8];
  EXPECT_LT(::getxattr(s.c_str(), "user.cordon", buf, sizeof buf), 0);
}

TEST_P(NotifyTest, MetadataInsideTheWorkspaceChanges) {
  EXPECT_EQ(Probe({"chmod", "mine.txt"}), 0) << last_.err;
  EXPECT_EQ(Mode(t_.Ws("mine.txt")), 0777);
  EXPECT_EQ(Probe({"fchmodat2", "mine.txt"}), 0) << last_.err;
  EXPECT_EQ(Probe({"chown", "mine.txt"}), 0) << last_.err;
  EXPECT_EQ(Probe({"utimens", "mine.txt"}), 0) << last_.err;
  EXPECT_EQ(Probe({"fchmod-ro", "mine.txt"}), 0) << last_.err;
  EXPECT_EQ(Probe({"truncate", "mine.txt"}), 0) << last_.err;
  EXPECT_EQ(ReadFile(t_.Ws("mine.txt")), "");
  int xattr = Probe({"setxattr", "mine.txt"});
  if (xattr == EOPNOTSUPP) GTEST_SKIP() << "user xattrs unsupported on this filesystem";
  EXPECT_EQ(xattr, 0);
}

TEST_P(NotifyTest, MutationsInsideWorkAndOutsideAreRefused) {
  EXPECT_EQ(Probe({"mkdir", "d"}), 0);
  EXPECT_EQ(Probe({"symlink", "mine.txt", "d/link"}), 0);
  EXPECT_EQ(Probe({"mknod-chr", "d/dev"}), EACCES) << "devices are refused";
  EXPECT_FALSE(Exists(t_.Ws("d/dev")));
  // A FIFO is made where a file may be (FifoTest), and removed at the end.
  EXPECT_EQ(Probe({"mknod", "d/fifo"}), 0) << last_.err;
  EXPECT_FALSE(Exists(t_.Ws("d/fifo")));
  EXPECT_EQ(Probe({"link", "mine.txt", "d/hard"}), 0);
  EXPECT_EQ(Probe({"write", "mine.txt"}), EACCES) << "now hard-linked: nlink > 1";
  EXPECT_EQ(Probe({"link", t_.Out("secret.txt"), "d/stolen"}), EACCES);
  EXPECT_EQ(Probe({"symlink", "x", t_.Out("link")}), EACCES);
  EXPECT_EQ(Probe({"mkdir", t_.Out("d")}), EACCES);
  EXPECT_EQ(Probe({"exchange", "mine.txt", t_.Out("secret.txt")}), EACCES);
  EXPECT_EQ(Probe({"create", "a/../escape"}), EACCES) << "raw .. segment";
  EXPECT_FALSE(Exists(t_.Out("link")));
  EXPECT_FALSE(Exists(t_.Out("d")));
  EXPECT_FALSE(Exists(t_.Ws("d/stolen")));
  EXPECT_EQ(ReadFile(t_.Out("secret.txt")), "secret\n");
}

TEST_P(NotifyTest, DeletingThePreexistingFileNeedsApprovalButRunFilesGoFreely) {
  EXPECT_EQ(Probe({"unlink", "mine.txt"}, {"--sensitive-delete", "ask"}), EACCES);
  EXPECT_NE(last_.err.find("approval denied"), std::string::npos) << last_.err;
  EXPECT_EQ(ReadFile(t_.Ws("mine.txt")), "mine\n");
  RunResult r = RunCordon({"run", "--workspace", t_.ws(), "--profile", "workspace-write", "--",
                           "sh", "-c", "echo x > new && rm new && mkdir nd && rmdir nd"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_FALSE(Exists(t_.Ws("new")));
}

TEST_P(NotifyTest, RenameOverTheUsersFileCannotLaunderADelete) {
  RunResult r = RunCordon({"run", "--workspace", t_.ws(), "--profile", "workspace-write", "--sensitive-delete", "ask", "--",
                           "sh", "-c", "echo new > tmp && mv tmp mine.txt && rm mine.txt"});
  EXPECT_NE(r.status, 0);
  EXPECT_TRUE(Exists(t_.Ws("mine.txt")));
  EXPECT_EQ(ReadFile(t_.Ws("mine.txt")), "new\n") << "overwriting is allowed, deleting is not";
}

// The supervisor knows what it created (the run's own, whatever the coarse
// birth time says); opening the user's file with O_CREAT creates nothing.
TEST_P(NotifyTest, OpeningTheUsersFileWithOCreatDoesNotMakeItTheRuns) {
  RunResult r = RunCordon({"run", "--workspace", t_.ws(), "--profile", "workspace-write", "--sensitive-delete", "ask", "--",
                           "sh", "-c", "echo over > mine.txt && rm mine.txt"});
  EXPECT_NE(r.status, 0);
  EXPECT_EQ(ReadFile(t_.Ws("mine.txt")), "over\n") << "overwriting is allowed, deleting is not";
  r = RunCordon({"run", "--workspace", t_.ws(), "--profile", "workspace-write", "--", "sh", "-c",
                 "echo a > fresh && echo b >> fresh && rm fresh && mkdir d && echo c > d/f && "
                 "rm d/f && rmdir d"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_FALSE(Exists(t_.Ws("fresh")));
  EXPECT_FALSE(Exists(t_.Ws("d")));
}

// The supervisor truncates only what it did not just create: an existing
// file opened with O_TRUNC, with or without O_CREAT, is emptied first.
TEST_P(NotifyTest, TruncatingOpensEmptyAnExistingFile) {
  WriteFile(t_.Ws("long.txt"), "a line much longer than the probe's\n");
  EXPECT_EQ(Probe({"trunc", "long.txt"}), 0) << last_.err;
  EXPECT_EQ(ReadFile(t_.Ws("long.txt")), "probe\n");
  WriteFile(t_.Ws("long.txt"), "a line much longer than the probe's\n");
  EXPECT_EQ(Probe({"overwrite", "long.txt"}), 0) << last_.err;
  EXPECT_EQ(ReadFile(t_.Ws("long.txt")), "probe\n");
  EXPECT_EQ(Probe({"overwrite", "new.txt"}), 0) << last_.err;
  EXPECT_EQ(ReadFile(t_.Ws("new.txt")), "probe\n");
}

// A directory holding a denied path is pinned: an exchange may not move it
// from either end.
TEST_P(NotifyTest, ExchangeCannotMoveTheParentOfADeniedPath) {
  ASSERT_EQ(::mkdir(t_.Ws("a").c_str(), 0755), 0);
  ASSERT_EQ(::mkdir(t_.Ws("x").c_str(), 0755), 0);
  WriteFile(t_.Ws("a/secret"), "key\n");
  std::vector<std::string> deny = {"--deny", t_.Ws("a/secret")};
  EXPECT_EQ(Probe({"exchange", "x", "a"}, deny), EACCES) << last_.err;
  EXPECT_EQ(Probe({"exchange", "a", "x"}, deny), EACCES) << last_.err;
  EXPECT_EQ(ReadFile(t_.Ws("a/secret")), "key\n");
  ASSERT_EQ(::mkdir(t_.Ws("y").c_str(), 0755), 0);
  EXPECT_EQ(Probe({"exchange", "x", "y"}, deny), 0) << last_.err;
}

INSTANTIATE_TEST_SUITE_P(Probes, NotifyTest, ProbeParams(), ProbeParamName);

// The supervisor creates files for the tool with the tool's umask, which it
// caches: a umask changed mid-run must show in the very next creation.
TEST(NotifyUmask, CreationsFollowUmaskChangesMidRun) {
  for (bool notify_all : {false, true}) {
    SCOPED_TRACE(notify_all ? "notify-all" : "landlock");
    ScratchTree t;
    std::vector<std::string> args = {"run", "--workspace", t.ws(), "--profile", "workspace-write"};
    if (notify_all) args.push_back("--test-force-notify-all");
    args.insert(args.end(), {"--", "sh", "-c",
                             "umask 022; : > a; umask 077; : > b; mkdir d; umask 027; : > c"});
    RunResult r = RunCordon(args);
    ASSERT_EQ(r.status, 0) << r.err;
    auto mode = [&](const char* name) {
      struct stat st;
      return ::stat(t.Ws(name).c_str(), &st) == 0 ? st.st_mode & 07777 : 01;
    };
    EXPECT_EQ(mode("a"), 0644u);
    EXPECT_EQ(mode("b"), 0600u);
    EXPECT_EQ(mode("d"), 0700u);
    EXPECT_EQ(mode("c"), 0640u);
  }
}

// git makes index.lock and renames it over index, again and again, and a
// filesystem hands a freed inode number to its next new file: the lock made
// after two cycles may carry the number of the first one, which had
// replaced the user's index. A new file is the run's whatever its number
// meant before. What the laundering rule guards stays guarded: renaming the
// replaced file onto itself, or through a second link, does not free it.
TEST(NotifyDeletes, ARunBornFileIsNotTakenForAReplacedOneByItsInodeNumber) {
  for (bool notify_all : {false, true}) {
    SCOPED_TRACE(notify_all ? "notify-all" : "landlock");
    ScratchTree t;
    WriteFile(t.Ws("index"), "the user's\n");
    std::vector<std::string> args = {"run",      "--workspace", t.ws(),           "--ro",
                                     ProbeDir(), "--profile",   "workspace-write",
                                     "--sensitive-delete", "ask"};
    if (notify_all) args.push_back("--test-force-notify-all");
    const std::string probe = PROBE_DYNAMIC;
    args.insert(args.end(),
                {"--", "sh", "-c",
                 "for i in 1 2 3; do echo $i > index.lock && mv index.lock index || exit 10; done; "
                 "echo rollback > index.lock && rm index.lock || exit 11; " +
                     probe + " rename index index || exit 12; " + probe +
                     " unlink index && exit 13; ln index second && rm second && exit 14; "
                     "rm index && exit 15; exit 0"});
    RunResult r = RunCordon(args);
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_FALSE(Exists(t.Ws("index.lock")));
    EXPECT_EQ(ReadFile(t.Ws("index")), "3\n") << "the file that replaced the user's is kept";
  }
}

std::string StressBin() { return ProbeDir() + "/stress"; }

TEST(NotifyStress, SixtyFourThreadsAreAllAnsweredCorrectly) {
  ScratchTree t;
  RunResult r = RunCordon({"run", "--workspace", t.ws(), "--ro", ProbeDir(), "--profile",
                           "workspace-write", "--", StressBin(), "threads", "64", "20"});
  EXPECT_EQ(r.status, 0) << r.err;
}

TEST(NotifyStress, SymlinkSwapRaceNeverTouchesTheOutside) {
  ScratchTree t;
  WriteFile(t.Out("victim"), "victim\n");
  ::chmod(t.Out("victim").c_str(), 0644);
  RunResult r = RunCordon({"run", "--workspace", t.ws(), "--ro", ProbeDir(), "--profile",
                           "workspace-write", "--", StressBin(), "race", t.outside(), "3"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_FALSE(Exists(t.Out("f")));
  EXPECT_FALSE(Exists(t.Out("g")));
  EXPECT_EQ(ReadFile(t.Out("victim")), "victim\n");
  struct stat st;
  ASSERT_EQ(::stat(t.Out("victim").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0644u);
}

TEST(NotifyStress, KillingTheSupervisorLeavesNoMutationBehind) {
  ScratchTree t;
  BackgroundCordon cordon({"run", "--profile", "workspace-write", "--workspace", t.ws(), "--ro",
                           ProbeDir(), "--", StressBin(), "loop-create"},
                          ChildIo{.err_file = "/dev/null"});
  auto count = [&] {
    int n = 0;
    while (Exists(t.Ws("n" + std::to_string(n)))) ++n;
    return n;
  };
  for (int i = 0; i < 300 && count() < 20; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_GE(count(), 20) << "the tool never got going";
  std::string run_tmp = RunTmpdir(cordon.pid());
  EXPECT_EQ(run_tmp.rfind(PrivateTmpPrefix(), 0), 0u) << run_tmp;
  cordon.Stop(SIGKILL);
  int at_kill = count();
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_LE(count(), at_kill + 1) << "files kept appearing after the supervisor died";
}

}  // namespace
}  // namespace cordon::testing
