// WorkspaceStore against a temporary root on the real filesystem: layout,
// ownership checks, the lock that retire honours, and removal that keeps
// what lies outside the tree (links, mounts in a private mount namespace).
#include "supervisor/workspace_store.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sched.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <thread>

#include "policy/workspace_record.h"
#include "tests/support/child_process.h"
#include "tests/support/test_env.h"

namespace cordon::supervisor {
namespace {

using namespace cordon::testing;

constexpr char kDigest[] = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

mode_t ModeOf(const std::string& p) {
  struct stat st;
  return ::lstat(p.c_str(), &st) == 0 ? (st.st_mode & 07777) : 0xffff;
}

class WorkspaceStoreTest : public ::testing::Test {
 protected:
  std::string Root() const { return t_.root() + "/state/cordon"; }
  WorkspaceStore Store() {
    Result<WorkspaceStore> s = WorkspaceStore::Open(Root());
    EXPECT_TRUE(s.ok()) << Describe(s.error());
    return std::move(*s);
  }
  ScratchTree t_;
};

TEST_F(WorkspaceStoreTest, CreatesTheRootPrivateAndTwoSessionsGetDistinctWorkspaces) {
  WorkspaceStore s = Store();
  EXPECT_EQ(ModeOf(Root()), 0700u);
  Result<std::string> a = s.Create("A", kDigest, 1000);
  Result<std::string> b = s.Create("B", kDigest, 1000);
  ASSERT_TRUE(a.ok()) << Describe(a.error());
  ASSERT_TRUE(b.ok()) << Describe(b.error());
  EXPECT_NE(*a, *b);
  EXPECT_EQ(*a, s.FilesDir("A"));
  EXPECT_EQ(*a, Root() + "/assistant-workspaces/" + policy::OwnerDigest(::geteuid(), "A") + "/files");
  for (const std::string& f : {*a, *b}) {
    EXPECT_EQ(ModeOf(f), 0700u);
    std::string dir = f.substr(0, f.rfind('/'));
    EXPECT_EQ(ModeOf(dir), 0700u);
    EXPECT_TRUE(Exists(dir + "/record.json")) << "the record lives beside files/";
    EXPECT_FALSE(Exists(f + "/record.json")) << "never inside it";
  }
  Result<policy::WorkspaceRecord> r = s.Load("A");
  ASSERT_TRUE(r.ok()) << Describe(r.error());
  EXPECT_EQ(r->session, "A");
  EXPECT_EQ(r->owner_uid, ::geteuid());
  EXPECT_EQ(r->created, 1000);
  EXPECT_EQ(r->policy_digest, kDigest);
  EXPECT_EQ(s.List().size(), 2u);
  Result<std::string> again = s.Create("A", kDigest, 1000);
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.error().err, EEXIST);
  EXPECT_FALSE(s.Create("../x", kDigest, 1000).ok()) << "session ids are validated";
}

TEST_F(WorkspaceStoreTest, RefusesASymlinkedRoot) {
  ::mkdir(t_.Out("real").c_str(), 0700);
  ASSERT_EQ(::symlink(t_.Out("real").c_str(), t_.Ws("link").c_str()), 0);
  EXPECT_FALSE(WorkspaceStore::Open(t_.Ws("link")).ok());
  EXPECT_FALSE(Exists(t_.Out("real/assistant-workspaces"))) << "nothing made through the link";
  EXPECT_TRUE(WorkspaceStore::Open(t_.Out("real")).ok()) << "the real directory is fine";
}

TEST_F(WorkspaceStoreTest, RefusesAGroupWritableOrForeignRoot) {
  ::mkdir(t_.Out("r").c_str(), 0770);
  ::chmod(t_.Out("r").c_str(), 0770);
  EXPECT_FALSE(WorkspaceStore::Open(t_.Out("r")).ok());
  ::chmod(t_.Out("r").c_str(), 0700);
  EXPECT_TRUE(WorkspaceStore::Open(t_.Out("r")).ok());
  if (::geteuid() != 0) GTEST_SKIP() << "chown to another uid needs root";
  ::mkdir(t_.Out("f").c_str(), 0700);
  ASSERT_EQ(::chown(t_.Out("f").c_str(), 65534, 65534), 0);
  Result<WorkspaceStore> s = WorkspaceStore::Open(t_.Out("f"));
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().err, EPERM);
}

TEST_F(WorkspaceStoreTest, RefusesTamperedMissingForeignAndMisplacedRecords) {
  WorkspaceStore s = Store();
  ASSERT_TRUE(s.Create("A", kDigest, 1).ok());
  ASSERT_TRUE(s.Create("B", kDigest, 1).ok());
  std::string rec_a = s.SessionDir("A") + "/record.json";
  std::string rec_b = s.SessionDir("B") + "/record.json";
  std::string good = ReadFile(rec_a);
  ASSERT_TRUE(s.Acquire("A", kDigest).ok());

  // Tampered: the created time changed by one digit.
  std::string bad = good;
  bad.replace(bad.find("\"created\":1"), 11, "\"created\":2");
  WriteFile(rec_a, bad);
  EXPECT_EQ(s.Load("A").error().err, EBADMSG);
  EXPECT_FALSE(s.Acquire("A", kDigest).ok());

  // Another session's (valid) record copied in.
  WriteFile(rec_a, ReadFile(rec_b));
  EXPECT_EQ(s.Load("A").error().err, EPERM);

  // Missing.
  ::unlink(rec_a.c_str());
  EXPECT_EQ(s.Load("A").error().err, ENOENT);
  EXPECT_FALSE(s.Acquire("A", kDigest).ok());

  // A symlink in its place, to a good record.
  ASSERT_EQ(::symlink(rec_b.c_str(), rec_a.c_str()), 0);
  EXPECT_FALSE(s.Load("A").ok());
  ::unlink(rec_a.c_str());
  WriteFile(rec_a, good);
  ::chmod(rec_a.c_str(), 0600);
  EXPECT_TRUE(s.Load("A").ok());

  // Another policy.
  Result<Fd> other = s.Acquire("A", std::string(64, 'f'));
  ASSERT_FALSE(other.ok());
  EXPECT_EQ(other.error().err, EPERM);

  if (::geteuid() != 0) GTEST_SKIP() << "chown to another uid needs root";
  ASSERT_EQ(::chown(rec_a.c_str(), 65534, 65534), 0);
  EXPECT_EQ(s.Load("A").error().err, EPERM);
  ASSERT_EQ(::chown(rec_a.c_str(), 0, 0), 0);
  ASSERT_EQ(::chown(s.SessionDir("A").c_str(), 65534, 65534), 0);
  EXPECT_EQ(s.Load("A").error().err, EPERM);
  EXPECT_FALSE(s.Acquire("A", kDigest).ok());
  ASSERT_EQ(::chown(s.SessionDir("A").c_str(), 0, 0), 0);
  ASSERT_EQ(::chown(s.FilesDir("A").c_str(), 65534, 65534), 0);
  EXPECT_EQ(s.Load("A").error().err, EPERM);
}

TEST_F(WorkspaceStoreTest, RetireRefusesWhileASupervisorHoldsTheLockThenRemovesAll) {
  WorkspaceStore s = Store();
  ASSERT_TRUE(s.Create("A", kDigest, 1).ok());
  WriteFile(s.FilesDir("A") + "/work.txt", "work");
  {
    Result<Fd> lease = s.Acquire("A", kDigest);
    ASSERT_TRUE(lease.ok()) << Describe(lease.error());
    Result<RemoveStats> busy = s.Retire("A", /*wait=*/false);
    ASSERT_FALSE(busy.ok());
    EXPECT_EQ(busy.error().err, EBUSY);
    EXPECT_EQ(ReadFile(s.FilesDir("A") + "/work.txt"), "work");
    EXPECT_TRUE(s.Load("A").ok());
  }
  Result<RemoveStats> r = s.Retire("A", false);
  ASSERT_TRUE(r.ok()) << Describe(r.error());
  EXPECT_FALSE(Exists(s.SessionDir("A")));
  EXPECT_TRUE(Exists(Root() + "/assistant-workspaces"));
  EXPECT_EQ(s.Load("A").error().err, ENOENT);
}

TEST_F(WorkspaceStoreTest, RetireWaitsForTheLastSupervisor) {
  WorkspaceStore s = Store();
  ASSERT_TRUE(s.Create("A", kDigest, 1).ok());
  int ready[2];
  ASSERT_EQ(::pipe2(ready, O_CLOEXEC), 0);
  pid_t pid = ::fork();
  if (pid == 0) {
    Result<Fd> lease = s.Acquire("A", kDigest);
    if (!lease.ok()) _exit(1);
    if (::write(ready[1], "x", 1) != 1) _exit(2);
    ::usleep(500 * 1000);
    // Still there at the holder's last moment: retire waited.
    _exit(Exists(s.FilesDir("A")) ? 0 : 3);
  }
  ::close(ready[1]);
  char c;
  ASSERT_EQ(::read(ready[0], &c, 1), 1);
  ::close(ready[0]);
  Result<RemoveStats> r = s.Retire("A", /*wait=*/true);
  ASSERT_TRUE(r.ok()) << Describe(r.error());
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "retire did not wait";
  EXPECT_FALSE(Exists(s.SessionDir("A")));
}

TEST_F(WorkspaceStoreTest, RetireRemovesOddEntriesAndNothingOutside) {
  WorkspaceStore s = Store();
  ASSERT_TRUE(s.Create("A", kDigest, 1).ok());
  std::string f = s.FilesDir("A");
  WriteFile(t_.Out("target.txt"), "outside");
  ::mkdir(t_.Out("targetdir").c_str(), 0700);
  WriteFile(t_.Out("targetdir/keep"), "keep");
  WriteFile(f + "/new\nline", "x");
  WriteFile(f + "/-rf", "x");
  WriteFile(f + "/bad\xff\xfe", "x");
  ::mkdir((f + "/locked").c_str(), 0700);
  WriteFile(f + "/locked/inner", "x");
  ::chmod((f + "/locked").c_str(), 0000);
  ASSERT_EQ(::symlink(t_.Out("target.txt").c_str(), (f + "/link").c_str()), 0);
  ASSERT_EQ(::symlink(t_.Out("targetdir").c_str(), (f + "/dirlink").c_str()), 0);
  Result<RemoveStats> r = s.Retire("A", false);
  ASSERT_TRUE(r.ok()) << Describe(r.error());
  EXPECT_FALSE(Exists(s.SessionDir("A")));
  EXPECT_EQ(ReadFile(t_.Out("target.txt")), "outside");
  EXPECT_EQ(ReadFile(t_.Out("targetdir/keep")), "keep");
}

// In a private mount namespace: a tmpfs and a bind mount of an outside
// directory (same filesystem) inside files/. Retire keeps both mounts with
// what they hold, removes everything else, and keeps the record.
TEST_F(WorkspaceStoreTest, RetireStopsAtMountsInsideTheTree) {
  WorkspaceStore s = Store();
  ASSERT_TRUE(s.Create("A", kDigest, 1).ok());
  std::string f = s.FilesDir("A");
  ::mkdir(t_.Out("bound").c_str(), 0700);
  WriteFile(t_.Out("bound/keep"), "keep");
  ::mkdir((f + "/tmpfs").c_str(), 0700);
  ::mkdir((f + "/deep").c_str(), 0700);
  ::mkdir((f + "/deep/bind").c_str(), 0700);
  WriteFile(f + "/plain", "x");
  WriteFile(f + "/deep/plain", "x");
  const int status = InPrivateMountNamespace([&] {
    if (::mount("tmpfs", (f + "/tmpfs").c_str(), "tmpfs", 0, "mode=0700") != 0) return 79;
    if (::mount(t_.Out("bound").c_str(), (f + "/deep/bind").c_str(), nullptr, MS_BIND, nullptr) != 0) {
      return 80;
    }
    WriteFile(f + "/tmpfs/in-tmpfs", "t");
    Result<RemoveStats> r = s.Retire("A", false);
    if (!r.ok()) return 1;
    if (r->skipped_mounts != 2) return 2;
    if (ReadFile(f + "/tmpfs/in-tmpfs") != "t") return 3;
    if (ReadFile(f + "/deep/bind/keep") != "keep") return 4;
    if (Exists(f + "/plain") || Exists(f + "/deep/plain")) return 5;
    if (!Exists(s.SessionDir("A") + "/record.json")) return 6;
    return 0;
  });
  if (status == kChildSetupFailed) {
    GTEST_SKIP() << "no private mount namespace here (unshare/mount failed)";
  }
  EXPECT_EQ(status, 0);
  EXPECT_EQ(ReadFile(t_.Out("bound/keep")), "keep");
  // The namespace is gone: the mount points are empty directories now, and
  // a second retire finishes the job.
  Result<RemoveStats> r = s.Retire("A", false);
  ASSERT_TRUE(r.ok()) << Describe(r.error());
  EXPECT_EQ(r->skipped_mounts, 0u);
  EXPECT_FALSE(Exists(s.SessionDir("A")));
  EXPECT_EQ(ReadFile(t_.Out("bound/keep")), "keep");
}

// The home directory's line of this uid in /etc/passwd
// (name:pw:uid:gid:gecos:dir:shell); empty when there is none.
std::string PasswdHome() {
  std::string home;
  FILE* f = std::fopen("/etc/passwd", "r");
  char line[1024];
  while (f != nullptr && std::fgets(line, sizeof line, f) != nullptr) {
    std::vector<std::string> fields;
    std::string field;
    for (char c : std::string(line)) {
      if (c == ':' || c == '\n') fields.push_back(std::exchange(field, ""));
      else field += c;
    }
    if (fields.size() >= 6 && fields[2] == std::to_string(::geteuid())) {
      home = fields[5];
      break;
    }
  }
  if (f != nullptr) std::fclose(f);
  return home;
}

[[noreturn]] void CheckDefaultRootAndExit() {
  ::setenv("XDG_STATE_HOME", "/x/state", 1);
  if (DefaultWorkspacesRoot() != "/x/state/cordon") _exit(1);
  ::unsetenv("XDG_STATE_HOME");
  ::setenv("HOME", "/h", 1);
  if (DefaultWorkspacesRoot() != "/h/.local/state/cordon") _exit(2);
  ::unsetenv("HOME");
  std::string home = PasswdHome();
  if (home.empty()) _exit(3);
  _exit(DefaultWorkspacesRoot() == home + "/.local/state/cordon" ? 0 : 4);
}

// Without XDG_STATE_HOME and HOME, the home directory comes from
// the passwd database (getpwuid; the test reads /etc/passwd). In a child,
// so the test's own environment stays as it was.
TEST(DefaultWorkspacesRoot, FollowsXdgThenHomeThenPasswd) {
  EXPECT_EXIT(CheckDefaultRootAndExit(), ::testing::ExitedWithCode(0), "");
}

}  // namespace
}  // namespace cordon::supervisor
