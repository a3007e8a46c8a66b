// `cordon workspace` and `cordon run --session` end to end: the real binary,
// the real kernel, a temporary --workspaces-root. Ground truth on disk.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <thread>

#include "tests/support/child_process.h"
#include "tests/support/test_env.h"

namespace cordon::testing {
namespace {

class WorkspaceTest : public ::testing::Test {
 protected:
  std::string Root() const { return t_.root() + "/state"; }
  // The policy options every create and run of these tests share: the
  // digest in the record covers them.
  std::vector<std::string> PolicyArgs() const {
    // (--ro first: a repeatable option right before "--" makes CLI11 take
    // the tool's own dash arguments as cordon's.)
    return {"--ro", ProbeDir(), "--workspaces-root", Root(), "--profile", "workspace-write"};
  }
  RunResult Cordon(std::vector<std::string> head, const std::vector<std::string>& tail = {}) {
    head.insert(head.end(), tail.begin(), tail.end());
    return RunCordon(head);
  }
  // Creates the session's workspace; returns its files/ path.
  std::string Create(const std::string& session) {
    std::vector<std::string> a = {"workspace", "create", "--session", session};
    for (auto& x : PolicyArgs()) a.push_back(x);
    RunResult r = RunCordon(a);
    EXPECT_EQ(r.status, 0) << r.err;
    std::string out = r.out;
    while (!out.empty() && out.back() == '\n') out.pop_back();
    return out;
  }
  int Probe(const std::string& session, const std::vector<std::string>& op) {
    std::vector<std::string> a = {"run", "--session", session};
    for (auto& x : PolicyArgs()) a.push_back(x);
    a.push_back("--");
    a.push_back(PROBE_DYNAMIC);
    a.insert(a.end(), op.begin(), op.end());
    last_ = RunCordon(a);
    return last_.status;
  }
  RunResult Retire(const std::string& session, bool wait = false) {
    std::vector<std::string> a = {"workspace", "retire", "--session", session,
                                  "--workspaces-root", Root()};
    if (wait) a.push_back("--wait");
    return RunCordon(a);
  }
  static std::string Parent(const std::string& p) { return p.substr(0, p.rfind('/')); }
  // Whether a run of the session whose files/ are `files` holds its lock
  // (a non-blocking exclusive flock on it fails) within about ten seconds.
  static bool LockHeld(const std::string& files) {
    const std::string lock = Parent(files) + "/lock";
    for (int i = 0; i < 200; ++i) {
      int fd = ::open(lock.c_str(), O_RDONLY | O_CLOEXEC);
      const bool held = fd >= 0 && ::flock(fd, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK;
      if (fd >= 0) ::close(fd);
      if (held) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return false;
  }

  ScratchTree t_;
  RunResult last_;
};

TEST_F(WorkspaceTest, SessionsGetDistinctPrivateWorkspaces) {
  std::string a = Create("A");
  std::string b = Create("B");
  ASSERT_FALSE(a.empty());
  ASSERT_FALSE(b.empty());
  EXPECT_NE(a, b);
  EXPECT_EQ(a.rfind(Root() + "/assistant-workspaces/", 0), 0u) << a;
  EXPECT_EQ(a.substr(a.size() - 6), "/files");
  struct stat st;
  ASSERT_EQ(::stat(a.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0700u);

  // The tool starts in its workspace and may write there.
  EXPECT_EQ(Probe("A", {"write", "mine.txt"}), 0) << last_.err;
  EXPECT_EQ(ReadFile(a + "/mine.txt"), "probe\n");
  WriteFile(b + "/theirs.txt", "B's\n");
  // Session A cannot reach session B's files, nor write into them.
  EXPECT_EQ(Probe("A", {"read", b + "/theirs.txt"}), EACCES);
  EXPECT_EQ(Probe("A", {"write", b + "/theirs.txt"}), EACCES);
  EXPECT_EQ(Probe("A", {"create", b + "/planted.txt"}), EACCES);
  EXPECT_EQ(ReadFile(b + "/theirs.txt"), "B's\n");
  EXPECT_FALSE(Exists(b + "/planted.txt"));
  EXPECT_EQ(Probe("B", {"read", "theirs.txt"}), 0) << "B reads its own";

  RunResult list = Cordon({"workspace", "list", "--workspaces-root", Root()});
  EXPECT_EQ(list.status, 0) << list.err;
  EXPECT_NE(list.out.find("A\t"), std::string::npos) << list.out;
  EXPECT_NE(list.out.find(b), std::string::npos) << list.out;
  RunResult show = Cordon({"workspace", "show", "A", "--workspaces-root", Root()});
  EXPECT_EQ(show.status, 0) << show.err;
  EXPECT_NE(show.out.find("\"session\": \"A\""), std::string::npos) << show.out;
  EXPECT_NE(show.out.find(a), std::string::npos) << show.out;
}

TEST_F(WorkspaceTest, TheOwnershipRecordIsOutOfReach) {
  std::string a = Create("A");
  std::string record = Parent(a) + "/record.json";
  ASSERT_TRUE(Exists(record));
  std::string before = ReadFile(record);
  EXPECT_EQ(Probe("A", {"read", "../record.json"}), EACCES);
  EXPECT_EQ(Probe("A", {"read", record}), EACCES);
  EXPECT_EQ(Probe("A", {"write", record}), EACCES);
  EXPECT_EQ(Probe("A", {"unlink", record}), EACCES);
  EXPECT_EQ(Probe("A", {"rename", "../record.json", "stolen"}), EACCES);
  EXPECT_EQ(Probe("A", {"write", "../lock"}), EACCES);
  EXPECT_EQ(ReadFile(record), before);
  EXPECT_EQ(Probe("A", {"read", "/etc/passwd"}), 0) << last_.err;
}

TEST_F(WorkspaceTest, RefusesBadWorkspacesBeforeAnythingRuns) {
  std::string a = Create("A");
  std::string record = Parent(a) + "/record.json";
  std::string good = ReadFile(record);
  std::string marker = a + "/ran";

  // No such session.
  EXPECT_EQ(Probe("nobody", {"create", marker}), 125);
  // Another policy than the one the workspace was created for.
  {
    RunResult r = RunCordon({"run", "--session", "A", "--workspaces-root", Root(), "--ro",
                             ProbeDir(), "--", PROBE_DYNAMIC, "create", marker});
    EXPECT_EQ(r.status, 125);
    EXPECT_NE(r.err.find("policy digest"), std::string::npos) << r.err;
  }
  // --session with --workspace.
  {
    std::vector<std::string> args = {"run", "--session", "A", "--workspace", t_.ws()};
    for (auto& x : PolicyArgs()) args.push_back(x);
    args.insert(args.end(), {"--", PROBE_DYNAMIC, "create", t_.Ws("ran")});
    EXPECT_EQ(RunCordon(args).status, 125);
    EXPECT_FALSE(Exists(t_.Ws("ran")));
  }
  // A tampered record.
  std::string bad = good;
  bad.replace(bad.find("\"session\":\"A\""), 13, "\"session\":\"B\"");
  WriteFile(record, bad);
  EXPECT_EQ(Probe("A", {"create", marker}), 125);
  EXPECT_NE(last_.err.find("integrity"), std::string::npos) << last_.err;
  EXPECT_EQ(Cordon({"workspace", "show", "A", "--workspaces-root", Root()}).status, 125);
  // A missing record.
  ::unlink(record.c_str());
  EXPECT_EQ(Probe("A", {"create", marker}), 125);
  WriteFile(record, good);
  EXPECT_EQ(Probe("A", {"create", marker}), 0) << last_.err;
  ::unlink(marker.c_str());

  if (::geteuid() != 0) GTEST_SKIP() << "chown to another uid needs root";
  // A foreign owner: the record, then the session directory.
  ASSERT_EQ(::chown(record.c_str(), 65534, 65534), 0);
  EXPECT_EQ(Probe("A", {"create", marker}), 125);
  ASSERT_EQ(::chown(record.c_str(), 0, 0), 0);
  ASSERT_EQ(::chown(Parent(a).c_str(), 65534, 65534), 0);
  EXPECT_EQ(Probe("A", {"create", marker}), 125);
  ASSERT_EQ(::chown(Parent(a).c_str(), 0, 0), 0);
  EXPECT_FALSE(Exists(marker)) << "nothing ran for any refused workspace";
}

TEST_F(WorkspaceTest, RefusesSymlinkedAndForeignRoots) {
  ::mkdir(t_.Out("real").c_str(), 0700);
  ASSERT_EQ(::symlink(t_.Out("real").c_str(), t_.Ws("root-link").c_str()), 0);
  RunResult r = RunCordon({"workspace", "create", "--session", "A", "--workspaces-root",
                           t_.Ws("root-link")});
  EXPECT_EQ(r.status, 125);
  EXPECT_FALSE(Exists(t_.Out("real/assistant-workspaces")));
  r = RunCordon({"run", "--session", "A", "--workspaces-root", t_.Ws("root-link"), "--",
                 PROBE_DYNAMIC, "exit", "0"});
  EXPECT_EQ(r.status, 125);
  EXPECT_EQ(RunCordon({"workspace", "list", "--workspaces-root", t_.Ws("root-link")}).status, 125);

  ::mkdir(t_.Out("open").c_str(), 0777);
  ::chmod(t_.Out("open").c_str(), 0777);
  EXPECT_EQ(RunCordon({"workspace", "create", "--session", "A", "--workspaces-root",
                       t_.Out("open")}).status,
            125);
  if (::geteuid() != 0) GTEST_SKIP() << "chown to another uid needs root";
  ::mkdir(t_.Out("foreign").c_str(), 0700);
  ASSERT_EQ(::chown(t_.Out("foreign").c_str(), 65534, 65534), 0);
  EXPECT_EQ(RunCordon({"workspace", "create", "--session", "A", "--workspaces-root",
                       t_.Out("foreign")}).status,
            125);
  EXPECT_FALSE(Exists(t_.Out("foreign/assistant-workspaces")));
}

TEST_F(WorkspaceTest, DefaultRootIsCreatedPrivateUnderXdgStateHome) {
  std::string xdg = t_.root() + "/xdg";
  RunResult r = RunCordon({"workspace", "create", "--session", "A"}, "",
                          {"XDG_STATE_HOME=" + xdg});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out.rfind(xdg + "/cordon/assistant-workspaces/", 0), 0u) << r.out;
  struct stat st;
  ASSERT_EQ(::lstat((xdg + "/cordon").c_str(), &st), 0);
  EXPECT_TRUE(S_ISDIR(st.st_mode));
  EXPECT_EQ(st.st_mode & 07777, 0700u);
}

TEST_F(WorkspaceTest, RetireWaitsForTheRunningToolThenRemovesTheTree) {
  std::string a = Create("A");
  std::string b = Create("B");
  WriteFile(b + "/other-session.txt", "B");
  WriteFile(t_.Out("target.txt"), "outside\n");
  ::mkdir(t_.Out("targetdir").c_str(), 0755);
  WriteFile(t_.Out("targetdir/keep"), "keep\n");

  // The tool makes odd names and modes, and links out of the tree.
  for (auto op : std::vector<std::vector<std::string>>{
           {"write", "line\nbreak"},
           {"write", "-rf"},
           {"write", "bytes\xff\xfe"},
           {"mkdir", "closed"},
           {"write", "closed/inner"},
           {"symlink", t_.Out("target.txt"), "file-link"},
           {"symlink", t_.Out("targetdir"), "dir-link"}}) {
    EXPECT_EQ(Probe("A", op), 0) << op[0] << " " << op[1] << ": " << last_.err;
  }
  ASSERT_EQ(::chmod((a + "/closed").c_str(), 0000), 0);
  ASSERT_TRUE(Exists(a + "/line\nbreak"));

  // A tool that is still running.
  std::vector<std::string> args = {"run", "--session", "A"};
  for (auto& x : PolicyArgs()) args.push_back(x);
  args.insert(args.end(), {"--", PROBE_DYNAMIC, "sleep", "30"});
  BackgroundCordon runner(args, ChildIo{.err_file = "/dev/null"});
  // Running means the supervisor holds the session lock.
  ASSERT_TRUE(LockHeld(a)) << "the run never took its session lock";

  RunResult busy = Retire("A");
  EXPECT_EQ(busy.status, 1) << busy.err;
  EXPECT_NE(busy.err.find("still running"), std::string::npos) << busy.err;
  EXPECT_TRUE(Exists(a + "/line\nbreak"));
  EXPECT_TRUE(Exists(a + "/-rf"));
  EXPECT_TRUE(Exists(a + "/bytes\xff\xfe"));
  EXPECT_TRUE(Exists(a + "/file-link"));
  EXPECT_TRUE(Exists(Parent(a) + "/record.json"));

  ASSERT_NE(runner.Stop(SIGTERM), -1);

  RunResult done = Retire("A");
  EXPECT_EQ(done.status, 0) << done.err;
  EXPECT_FALSE(Exists(Parent(a)));
  EXPECT_EQ(ReadFile(t_.Out("target.txt")), "outside\n");
  EXPECT_EQ(ReadFile(t_.Out("targetdir/keep")), "keep\n");
  EXPECT_EQ(ReadFile(b + "/other-session.txt"), "B") << "the other session is untouched";
  EXPECT_EQ(Probe("A", {"exit", "0"}), 125) << "a retired session runs nothing";
  EXPECT_EQ(Retire("A").status, 125) << "nothing left to retire";
}

TEST_F(WorkspaceTest, RetireWaitBlocksUntilTheRunEnds) {
  std::string a = Create("A");
  std::vector<std::string> args = {"run", "--session", "A"};
  for (auto& x : PolicyArgs()) args.push_back(x);
  // The tool's last act needs its workspace: if retire did not wait, the
  // write fails and the run exits non-zero.
  args.insert(args.end(), {"--", "/bin/sh", "-c", "sleep 1 && echo done > done.txt"});
  BackgroundCordon runner(args);
  ASSERT_TRUE(LockHeld(a)) << "the run never took its session lock";
  RunResult r = Retire("A", /*wait=*/true);
  EXPECT_EQ(r.status, 0) << r.err;
  const int status = runner.Wait();
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "the tool lost its workspace";
  EXPECT_FALSE(Exists(Parent(a)));
}

}  // namespace
}  // namespace cordon::testing
