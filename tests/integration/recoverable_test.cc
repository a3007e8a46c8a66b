// Issue 26, recoverable runs: under the default sensitive.delete
// ("recoverable") a file of the user's that the run removes or replaces is
// kept in the run's journal, honest git work in a repository that predates
// the run needs no approval, and `cordon undo` brings the tree back byte for
// byte. The journal is out of the tool's reach, and bad input to undo
// touches nothing. Real git, make and the real cordon binary; the tree is
// read from disk afterwards.
#include <dirent.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "policy/digest.h"
#include "tests/support/test_env.h"

namespace cordon::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// Every entry beneath `dir`: its type, mode and (for a file) SHA-256, for
// symlinks the target. Times are left out: git rewrites them.
void Listing(const std::string& dir, const std::string& rel, std::map<std::string, std::string>& out) {
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return;
  while (dirent* e = ::readdir(d)) {
    std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    std::string path = dir + "/" + name, r = rel.empty() ? name : rel + "/" + name;
    struct stat st;
    if (::lstat(path.c_str(), &st) != 0) continue;
    std::ostringstream v;
    v << std::oct << st.st_mode << " ";
    if (S_ISREG(st.st_mode)) {
      v << policy::Sha256Hex(ReadFile(path));
    } else if (S_ISLNK(st.st_mode)) {
      char buf[4096];
      ssize_t n = ::readlink(path.c_str(), buf, sizeof buf);
      v << std::string(buf, n > 0 ? static_cast<size_t>(n) : 0);
    } else if (S_ISDIR(st.st_mode)) {
      Listing(path, r, out);
    }
    out[r] = v.str();
  }
  ::closedir(d);
}

std::map<std::string, std::string> Listing(const std::string& dir) {
  std::map<std::string, std::string> out;
  Listing(dir, "", out);
  return out;
}

class RecoverableTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(::mkdir((t_.root() + "/home").c_str(), 0700), 0);
    env_ = {"HOME=" + t_.root() + "/home", "XDG_STATE_HOME=" + t_.root() + "/state",
            "GIT_AUTHOR_NAME=Tess Ter", "GIT_AUTHOR_EMAIL=tess@example.org",
            "GIT_COMMITTER_NAME=Tess Ter", "GIT_COMMITTER_EMAIL=tess@example.org",
            "GIT_CONFIG_NOSYSTEM=1"};
  }
  // A shell script run bare (the user, before and after cordon).
  int Bare(const std::string& script) {
    std::string cmd = "cd '" + t_.ws() + "' && env";
    for (const auto& e : env_) cmd += " '" + e + "'";
    cmd += " sh -c '" + script + "' >/dev/null 2>&1";
    return std::system(cmd.c_str());
  }
  RunResult Run(const std::string& script, std::vector<std::string> flags = {}) {
    std::vector<std::string> args = {"run", "--profile", "workspace-write", "--workspace", t_.ws(),
                                     "--approvals", "deny"};
    args.insert(args.end(), flags.begin(), flags.end());
    args.insert(args.end(), {"--", "sh", "-c", script});
    return RunCordon(args, t_.ws(), env_);
  }
  RunResult Cordon(std::vector<std::string> args) { return RunCordon(args, t_.ws(), env_); }
  std::string Journals() const { return t_.root() + "/state/cordon/journal"; }
  // A repository committed before the run: main (two commits), a branch
  // feature that changes src/util.txt and deletes docs/old.txt, a build/
  // tree from an earlier build, a local edit and an untracked file.
  void MakeRepository() {
    ASSERT_EQ(Bare("git init -q -b main && mkdir -p src docs && echo one > src/util.txt && "
                   "echo old > docs/old.txt && printf \"clean:\\n\\trm -rf build\\n\" > Makefile && "
                   "git add . && git commit -qm init && echo v2 >> src/util.txt && "
                   "git commit -qam second && git checkout -qb feature && echo two > src/util.txt && "
                   "git rm -q docs/old.txt && git commit -qam feat && git checkout -q main && "
                   "mkdir -p build/sub && echo obj > build/a.o && echo o2 > build/sub/b.o && "
                   "echo local >> src/util.txt && echo wip > src/wip.txt"),
              0);
  }
  ScratchTree t_;
  std::vector<std::string> env_;
};

TEST_F(RecoverableTest, HonestGitWorkNeedsNoApprovalAndUndoRestoresTheTreeByteForByte) {
  MakeRepository();
  const auto before = Listing(t_.ws());
  RunResult r = Run(
      "set -e; git checkout -q -b x; git checkout -q main; git stash -q; git checkout -q feature; "
      "test ! -e docs/old.txt; git checkout -q main; git stash pop -q; git reset -q --hard HEAD~1; "
      "/usr/bin/make -s clean; test ! -e build; mkdir -p build; echo x > build/y; rm -rf build; "
      "echo finished");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("finished"));
  EXPECT_NE(Listing(t_.ws()), before);
  RunResult show = Cordon({"runs", "show"});
  EXPECT_EQ(show.status, 0) << show.err;
  EXPECT_THAT(show.out, HasSubstr("deleted (kept)"));
  EXPECT_THAT(show.out, HasSubstr("build/sub/b.o"));
  RunResult undo = Cordon({"undo"});
  EXPECT_EQ(undo.status, 0) << undo.out << undo.err;
  EXPECT_EQ(Listing(t_.ws()), before) << "the whole tree, .git included, as before the run";
  // Once only.
  EXPECT_EQ(Cordon({"undo"}).status, 125);
}

// A run recorded at another path whose directory had this one's inode (a
// workspace removed, its inode number taken again; here: renamed) does not
// make a second undo say the workspace moved: runs were recorded here.
TEST_F(RecoverableTest, ASecondUndoSaysSoWhenAnotherPathOnceHadThisInode) {
  WriteFile(t_.Ws("a.txt"), "a\n");
  ASSERT_EQ(Run("rm a.txt").status, 0);
  const std::string other = t_.root() + "/ws-other";
  ASSERT_EQ(::rename(t_.ws().c_str(), other.c_str()), 0);
  // The record of ws (not undone) names `other`'s inode; a run there.
  WriteFile(other + "/b.txt", "b\n");
  RunResult r = RunCordon({"run", "--profile", "workspace-write", "--workspace", other,
                           "--approvals", "deny", "--", "sh", "-c", "rm b.txt"},
                          other, env_);
  ASSERT_EQ(r.status, 0) << r.err;
  ASSERT_EQ(RunCordon({"undo", "--workspace", other}, other, env_).status, 0);
  EXPECT_EQ(ReadFile(other + "/b.txt"), "b\n");
  RunResult again = RunCordon({"undo", "--workspace", other}, other, env_);
  EXPECT_EQ(again.status, 125);
  EXPECT_THAT(again.err, HasSubstr("not undone already")) << again.err;
  EXPECT_THAT(again.err, Not(HasSubstr("moved"))) << again.err;
}

TEST_F(RecoverableTest, DirectoriesRenamedInTheRunAreTakenBackWithWhatTheyHold) {
  ASSERT_EQ(::mkdir(t_.Ws("old").c_str(), 0755), 0);
  WriteFile(t_.Ws("old/kept.txt"), "kept\n");
  const auto before = Listing(t_.ws());
  RunResult r = Run("mkdir -p new/sub && echo x > new/sub/f && mv new new2 && echo y > new2/g && "
                    "mv old renamed && echo z > renamed/h && rm renamed/kept.txt && "
                    "mv new2/sub renamed/sub");
  ASSERT_EQ(r.status, 0) << r.err;
  RunResult undo = Cordon({"undo"});
  EXPECT_EQ(undo.status, 0) << undo.out << undo.err;
  EXPECT_EQ(Listing(t_.ws()), before);
}

TEST_F(RecoverableTest, UndoNeverClobbersWhatTheUserChangedAfterTheRun) {
  WriteFile(t_.Ws("a.txt"), "before\n");
  WriteFile(t_.Ws("b.txt"), "before\n");
  RunResult r = Run("echo run > a.txt && echo run > b.txt");
  ASSERT_EQ(r.status, 0) << r.err;
  WriteFile(t_.Ws("a.txt"), "the user's edit after the run\n");
  RunResult undo = Cordon({"undo"});
  EXPECT_EQ(undo.status, 1) << undo.out << undo.err;
  EXPECT_THAT(undo.out, HasSubstr("kept as it is: a.txt"));
  EXPECT_EQ(ReadFile(t_.Ws("a.txt")), "the user's edit after the run\n");
  EXPECT_EQ(ReadFile(t_.Ws("b.txt")), "before\n") << "the untouched one is restored";
}

TEST_F(RecoverableTest, UnderAskTheUsersFilesStayRefused) {
  WriteFile(t_.Ws("mine.txt"), "mine\n");
  RunResult r = Run("rm mine.txt", {"--sensitive-delete", "ask"});
  EXPECT_NE(r.status, 0);
  EXPECT_EQ(ReadFile(t_.Ws("mine.txt")), "mine\n");
  // The default keeps it and lets the delete happen.
  r = Run("rm mine.txt");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_FALSE(Exists(t_.Ws("mine.txt")));
  EXPECT_EQ(Cordon({"undo"}).status, 0);
  EXPECT_EQ(ReadFile(t_.Ws("mine.txt")), "mine\n");
}

TEST_F(RecoverableTest, TheToolCannotReachTheJournal) {
  WriteFile(t_.Ws("mine.txt"), "mine\n");
  ASSERT_EQ(Run("rm mine.txt").status, 0);
  const std::string j = Journals();
  ASSERT_TRUE(Exists(j + "/runs")) << "the journal lives beside the workspace";
  RunResult list = Cordon({"runs", "list"});
  const std::string id = list.out.substr(0, list.out.find(' '));
  // A later run, granted the whole scratch tree read-write, still may not
  // read, write, rename or link into the journal.
  const std::vector<std::string> rw = {"--rw", t_.root()};
  for (const std::string& attack :
       {"cat " + j + "/runs/*/changes.jsonl", "cat " + j + "/runs/*/slots/1",
        "echo x > " + j + "/evil", "echo x >> " + j + "/runs/" + id + "/changes.jsonl",
        "echo x > f && mv f " + j + "/runs/", "echo x > f && ln f " + j + "/f2",
        "rm -rf " + j, "mv " + j + " " + t_.root() + "/moved"}) {
    RunResult r = Run(attack, rw);
    EXPECT_NE(r.status, 0) << attack;
  }
  EXPECT_FALSE(Exists(j + "/evil"));
  EXPECT_FALSE(Exists(j + "/f2"));
  EXPECT_FALSE(Exists(t_.root() + "/moved"));
  EXPECT_EQ(Cordon({"undo", id}).status, 0) << "the journal is whole";
  EXPECT_EQ(ReadFile(t_.Ws("mine.txt")), "mine\n");
}

TEST_F(RecoverableTest, AtTheJournalsBoundNothingIsDroppedAndTheChangeIsRefused) {
  WriteFile(t_.Ws("small.txt"), "s\n");
  WriteFile(t_.Ws("big.txt"), std::string(64 << 10, 'b'));
  WriteFile(t_.Ws("policy.json"), R"({"limits": {"journalBytes": 16384}})");
  RunResult r = Run("rm small.txt; rm big.txt; echo done", {"--policy", t_.Ws("policy.json")});
  EXPECT_THAT(r.out, HasSubstr("done"));
  EXPECT_FALSE(Exists(t_.Ws("small.txt")));
  EXPECT_TRUE(Exists(t_.Ws("big.txt"))) << "past the bound the delete is refused, not unkept";
  EXPECT_THAT(r.err, HasSubstr("limits.journalBytes"));
  EXPECT_EQ(Cordon({"undo"}).status, 0);
  EXPECT_EQ(ReadFile(t_.Ws("small.txt")), "s\n");
}

// A tool that churns deletes until the journal's bound is hit pushes out
// nothing kept before, in this run or an earlier one: past the bound each
// delete is refused (and said so), and undo brings every kept file back.
TEST_F(RecoverableTest, FillingTheJournalToItsBoundPushesOutNothingKeptBefore) {
  WriteFile(t_.Ws("first.txt"), "first\n");
  ASSERT_EQ(Run("rm first.txt").status, 0);
  const std::string block(8192, 'x');
  for (int i = 0; i < 8; ++i) WriteFile(t_.Ws("f" + std::to_string(i) + ".bin"), block);
  WriteFile(t_.root() + "/p.json", R"({"limits": {"journalBytes": 32768}})");
  RunResult r = Run("for f in f*.bin; do rm $f; done; echo x > new && rm new && echo done",
                    {"--policy", t_.root() + "/p.json"});
  EXPECT_THAT(r.out, HasSubstr("done")) << "the run's own files come and go past the bound";
  EXPECT_THAT(r.err, HasSubstr("limits.journalBytes"));
  EXPECT_THAT(r.err, HasSubstr("what it kept stays kept"));
  int gone = 0;
  for (int i = 0; i < 8; ++i) gone += !Exists(t_.Ws("f" + std::to_string(i) + ".bin"));
  EXPECT_GT(gone, 0);
  EXPECT_LT(gone, 8) << "past the bound a delete is refused";
  RunResult list = Cordon({"runs", "list"});
  ASSERT_EQ(list.status, 0) << list.err;
  const std::string first = list.out.substr(0, list.out.find(' '));
  EXPECT_EQ(Cordon({"undo"}).status, 0) << "the run that hit the bound";
  for (int i = 0; i < 8; ++i) EXPECT_EQ(ReadFile(t_.Ws("f" + std::to_string(i) + ".bin")), block);
  RunResult undo = Cordon({"undo", first});
  EXPECT_EQ(undo.status, 0) << undo.out << undo.err;
  EXPECT_EQ(ReadFile(t_.Ws("first.txt")), "first\n");
}

// Two runs begun in one second: `cordon undo` takes the newer first,
// whatever their pids. The pids are chosen through ns_last_pid so that
// the older run's is the wider-sorting one ("9991" after "10001" as
// text), as after a wrap; run ids ordered by pid undid the older run.
TEST_F(RecoverableTest, OfTwoRunsInOneSecondTheNewerIsUndoneFirst) {
  const char* kLastPid = "/proc/sys/kernel/ns_last_pid";
  if (::access(kLastPid, W_OK) != 0) {
    GTEST_SKIP() << kLastPid << " is not writable here (needs root in the initial pid namespace)";
  }
  WriteFile(t_.Ws("a.txt"), "a\n");
  WriteFile(t_.Ws("b.txt"), "b\n");
  WriteFile(kLastPid, "9990");
  ASSERT_EQ(Run("rm a.txt").status, 0);
  WriteFile(kLastPid, "10000");
  ASSERT_EQ(Run("rm b.txt").status, 0);
  RunResult undo = Cordon({"undo"});
  ASSERT_EQ(undo.status, 0) << undo.err;
  EXPECT_TRUE(Exists(t_.Ws("b.txt"))) << "the newer run is undone first: " << undo.err;
  EXPECT_FALSE(Exists(t_.Ws("a.txt"))) << undo.err;
}

// A write in place to a file too large for the journal to keep a copy of
// (limits.journalCopyBytes, no reflink) is asked about, as a delete is
// under "ask": under --approvals deny refused with one line that says why
// and what to do; allowed once by an approver, it goes through unkept.
TEST_F(RecoverableTest, AnInPlaceWriteTooLargeToKeepIsAskedAbout) {
  const std::string big(4096, 'b');
  WriteFile(t_.Ws("big.log"), big);
  WriteFile(t_.Ws("small.log"), "s\n");
  WriteFile(t_.root() + "/p.json", R"({"limits": {"journalCopyBytes": 1024}})");
  const std::vector<std::string> policy = {"--policy", t_.root() + "/p.json"};
  RunResult r = Run("echo x >> small.log; echo y >> big.log; truncate -s 1 big.log; echo done",
                    policy);
  EXPECT_THAT(r.out, HasSubstr("done"));
  EXPECT_EQ(ReadFile(t_.Ws("small.log")), "s\nx\n") << "under the bound: copied, written";
  if (ReadFile(t_.Ws("big.log")) != big) {
    // A filesystem that shares extents keeps a reflink whatever the size.
    GTEST_SKIP() << "the workspace's filesystem has reflinks: nothing to ask";
  }
  EXPECT_THAT(r.err, HasSubstr("larger than limits.journalCopyBytes"));
  EXPECT_THAT(r.err, HasSubstr("approval denied"));
  EXPECT_THAT(r.err, HasSubstr("raise limits.journalCopyBytes (1024 bytes)"));
  // truncate(2) by path, from a static binary (no preload): the same.
  r = RunCordon({"run", "--profile", "workspace-write", "--workspace", t_.ws(), "--policy",
                 t_.root() + "/p.json", "--approvals", "deny", "--ro", ProbeDir(), "--",
                 PROBE_STATIC, "truncate", "big.log"},
                t_.ws(), env_);
  EXPECT_EQ(r.status, EACCES) << r.err;
  EXPECT_THAT(r.err, HasSubstr("larger than limits.journalCopyBytes"));
  EXPECT_EQ(ReadFile(t_.Ws("big.log")), big);
  // An approver that allows writes to *.log once each.
  WriteFile(t_.root() + "/rules.json", R"([{"glob": "*.log", "op": "write"}])");
  r = RunCordon({"run", "--profile", "workspace-write", "--workspace", t_.ws(), "--policy",
                 t_.root() + "/p.json", "--approvals", "rules:" + t_.root() + "/rules.json", "--",
                 "sh", "-c", "echo y >> big.log && echo z >> big.log"},
                t_.ws(), env_);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(ReadFile(t_.Ws("big.log")), big + "y\nz\n") << "asked once, then written";
  EXPECT_THAT(r.err, HasSubstr("cordon undo cannot take it back"));
  // A delete rule does not allow a write.
  WriteFile(t_.root() + "/rules.json", R"([{"glob": "*.log"}])");
  r = RunCordon({"run", "--profile", "workspace-write", "--workspace", t_.ws(), "--policy",
                 t_.root() + "/p.json", "--approvals", "rules:" + t_.root() + "/rules.json", "--",
                 "sh", "-c", "echo w >> big.log"},
                t_.ws(), env_);
  EXPECT_NE(r.status, 0);
  EXPECT_EQ(ReadFile(t_.Ws("big.log")), big + "y\nz\n");
}

// On a filesystem that shares extents the kept copy is a reflink, whatever
// its size: a write in place past limits.journalCopyBytes is kept, not
// asked about, and undo takes it back. The workspace is a directory of a
// fresh btrfs on a loop device (the journal goes to the top of that mount).
TEST_F(RecoverableTest, OnAReflinkFilesystemAnInPlaceWriteIsKeptWhateverItsSize) {
  const std::string mnt = t_.root() + "/btrfs";
  ASSERT_EQ(::mkdir(mnt.c_str(), 0755), 0);
  if (std::system(("command -v mkfs.btrfs >/dev/null && truncate -s 128M " + mnt + ".img && " +
                   "mkfs.btrfs -q -f " + mnt + ".img >/dev/null 2>&1 && mount -o loop " + mnt +
                   ".img " + mnt + " 2>/dev/null")
                      .c_str()) != 0) {
    GTEST_SKIP() << "cannot mount a btrfs image on a loop device here";
  }
  const std::string ws = mnt + "/ws";
  ASSERT_EQ(::mkdir(ws.c_str(), 0755), 0);
  const std::string big(64 << 10, 'b');
  WriteFile(ws + "/big.log", big);
  WriteFile(t_.root() + "/p.json", R"({"limits": {"journalCopyBytes": 1024}})");
  RunResult explain = RunCordon(
      {"policy", "explain", t_.root() + "/p.json", "--profile", "workspace-write", "--workspace", ws},
      ws, env_);
  EXPECT_THAT(explain.out, HasSubstr("a reflink copy, any size")) << explain.err;
  RunResult r = RunCordon({"run", "--profile", "workspace-write", "--workspace", ws, "--policy",
                           t_.root() + "/p.json", "--approvals", "deny", "--", "sh", "-c",
                           "echo y >> big.log"},
                          ws, env_);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(ReadFile(ws + "/big.log"), big + "y\n");
  RunResult undo = RunCordon({"undo", "--workspace", ws}, ws, env_);
  EXPECT_EQ(undo.status, 0) << undo.out << undo.err;
  EXPECT_EQ(ReadFile(ws + "/big.log"), big);
  ::umount2(mnt.c_str(), MNT_DETACH);
}

TEST_F(RecoverableTest, BadInputToUndoTouchesNothing) {
  WriteFile(t_.Ws("mine.txt"), "mine\n");
  // No run at all yet.
  RunResult u = Cordon({"undo"});
  EXPECT_EQ(u.status, 125);
  EXPECT_THAT(u.err, HasSubstr("no recoverable run"));
  ASSERT_EQ(Run("rm mine.txt && echo new > other.txt").status, 0);
  // An unknown run, a malformed id.
  EXPECT_EQ(Cordon({"undo", "20990101T000000Z-1"}).status, 125);
  EXPECT_EQ(Cordon({"undo", "../../etc"}).status, 125);
  // A journal edited by hand: the digest no longer matches.
  std::string runs = Journals() + "/runs";
  RunResult list = Cordon({"runs", "list"});
  ASSERT_EQ(list.status, 0);
  std::string id = list.out.substr(0, list.out.find(' '));
  std::string changes = runs + "/" + id + "/changes.jsonl";
  std::string text = ReadFile(changes);
  WriteFile(changes, text + R"({"ino":1,"op":"create","path":"src","type":"file"})" "\n");
  u = Cordon({"undo"});
  EXPECT_EQ(u.status, 125);
  EXPECT_THAT(u.err, HasSubstr("damaged"));
  EXPECT_FALSE(Exists(t_.Ws("mine.txt")));
  EXPECT_TRUE(Exists(t_.Ws("other.txt")));
  WriteFile(changes, text);
  // The workspace moved: refused, nothing touched.
  const std::string moved = t_.root() + "/ws-moved";
  ASSERT_EQ(::rename(t_.ws().c_str(), moved.c_str()), 0);
  u = RunCordon({"undo", "--workspace", moved}, moved, env_);
  EXPECT_EQ(u.status, 125);
  EXPECT_THAT(u.err, HasSubstr("moved"));
  u = RunCordon({"undo", id}, moved, env_);
  EXPECT_EQ(u.status, 125) << u.out;
  EXPECT_TRUE(Exists(moved + "/other.txt"));
  ASSERT_EQ(::rename(moved.c_str(), t_.ws().c_str()), 0);
  // Back where it was, the journal whole: undo works.
  EXPECT_EQ(Cordon({"undo"}).status, 0);
  EXPECT_EQ(ReadFile(t_.Ws("mine.txt")), "mine\n");
  EXPECT_FALSE(Exists(t_.Ws("other.txt")));
  // prune: a bad age is 125; then the journal goes.
  EXPECT_EQ(Cordon({"runs", "prune", "--older-than", "soon"}).status, 125);
  EXPECT_EQ(Cordon({"runs", "prune", "--older-than", "0s"}).status, 0);
  EXPECT_FALSE(Exists(runs + "/" + id));
}

// The journal is made on the run's first change: a run that changes
// nothing makes none (an inode a launch makes costs ext4 a scan), looked at
// from outside while the run goes (the tool cannot see the journals); one
// that changes something has one from that change on.
TEST_F(RecoverableTest, ARunThatChangesNothingMakesNoJournal) {
  WriteFile(t_.Ws("mine.txt"), "mine\n");
  std::string cmd = "cd '" + t_.ws() + "' && env";
  for (const auto& e : env_) cmd += " '" + e + "'";
  cmd += " " + CordonShellCommand() + " run --profile workspace-write --workspace '" + t_.ws() +
         "' -- sh -c 'cat mine.txt && sleep 1'";
  FILE* run = ::popen(cmd.c_str(), "r");
  ASSERT_NE(run, nullptr);
  char line[64] = {};
  ASSERT_NE(std::fgets(line, sizeof line, run), nullptr);
  EXPECT_STREQ(line, "mine\n");
  EXPECT_EQ(ListDir(Journals() + "/runs"), std::vector<std::string>{});
  EXPECT_EQ(::pclose(run), 0);
  EXPECT_EQ(ListDir(Journals() + "/runs"), std::vector<std::string>{});
  RunResult r = Run("rm mine.txt");
  ASSERT_EQ(r.status, 0) << r.err;
  std::vector<std::string> runs = ListDir(Journals() + "/runs");
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_TRUE(Exists(Journals() + "/runs/" + runs[0] + "/meta.json"));
  RunResult u = Cordon({"undo"});
  EXPECT_EQ(u.status, 0) << u.err;
  EXPECT_EQ(ReadFile(t_.Ws("mine.txt")), "mine\n");
}

TEST_F(RecoverableTest, ARunStillGoingIsNotUndone) {
  WriteFile(t_.Ws("mine.txt"), "mine\n");
  const std::string flag = t_.Ws("removed");
  std::vector<std::string> args = {"run", "--profile", "workspace-write", "--workspace", t_.ws(),
                                   "--", "sh", "-c", "rm mine.txt && touch removed && sleep 3"};
  std::string cmd = CordonShellCommand();
  for (const auto& a : args) cmd += " '" + a + "'";
  std::string env;
  for (const auto& e : env_) env += " '" + e + "'";
  ASSERT_EQ(std::system(("env" + env + " " + cmd + " >/dev/null 2>&1 &").c_str()), 0);
  for (int i = 0; i < 200 && !Exists(flag); ++i) ::usleep(20000);
  ASSERT_TRUE(Exists(flag));
  RunResult u = Cordon({"undo"});
  EXPECT_EQ(u.status, 125);
  EXPECT_THAT(u.err, HasSubstr("still going"));
  EXPECT_FALSE(Exists(t_.Ws("mine.txt")));
  for (int i = 0; i < 300; ++i) {
    u = Cordon({"undo"});
    if (u.status != 125) break;
    ::usleep(20000);
  }
  EXPECT_EQ(u.status, 0) << u.err;
  EXPECT_EQ(ReadFile(t_.Ws("mine.txt")), "mine\n");
}

TEST_F(RecoverableTest, AnInPlaceWriteAndATruncateAreTakenBack) {
  WriteFile(t_.Ws("log.txt"), "line 1\n");
  WriteFile(t_.Ws("t.txt"), "a longer text\n");
  WriteFile(t_.Ws("o.txt"), "overwritten\n");
  RunResult r = Run("echo line 2 >> log.txt && truncate -s 3 t.txt && echo x > o.txt");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(ReadFile(t_.Ws("log.txt")), "line 1\nline 2\n");
  EXPECT_EQ(ReadFile(t_.Ws("t.txt")), "a l");
  EXPECT_EQ(ReadFile(t_.Ws("o.txt")), "x\n");
  EXPECT_EQ(Cordon({"undo"}).status, 0);
  EXPECT_EQ(ReadFile(t_.Ws("log.txt")), "line 1\n");
  EXPECT_EQ(ReadFile(t_.Ws("t.txt")), "a longer text\n");
  EXPECT_EQ(ReadFile(t_.Ws("o.txt")), "overwritten\n");
}

TEST_F(RecoverableTest, OldJournalsAreRemovedAtTheAgeBoundEachNamed) {
  // The last run's start moved `days` into the past, in its meta.json and
  // in its name (which says when it began: the sweep opens no run whose
  // name is younger than the bound); its new id.
  auto age_last_run = [&](int days) {
    RunResult list = Cordon({"runs", "list"});
    std::string last = list.out.substr(0, list.out.size() - 1);
    last = last.substr(last.rfind('\n') + 1);
    const std::string id = last.substr(0, last.find(' '));
    const time_t then = ::time(nullptr) - days * 86400;
    struct tm tm {};
    ::gmtime_r(&then, &tm);
    char stamp[32];
    std::strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &tm);
    const std::string aged = stamp + id.substr(id.find('-'));
    const std::string meta = Journals() + "/runs/" + id + "/meta.json";
    std::string text = ReadFile(meta);
    const size_t at = text.find("\"started\": ");
    EXPECT_NE(at, std::string::npos) << text;
    const size_t end = text.find_first_of(",\n", at);
    text.replace(at, end - at, "\"started\": " + std::to_string(then));
    const size_t id_at = text.find("\"" + id + "\"");
    EXPECT_NE(id_at, std::string::npos) << text;
    text.replace(id_at + 1, id.size(), aged);
    WriteFile(meta, text);
    EXPECT_EQ(::rename((Journals() + "/runs/" + id).c_str(), (Journals() + "/runs/" + aged).c_str()),
              0);
    return aged;
  };
  WriteFile(t_.Ws("mine.txt"), "mine\n");
  ASSERT_EQ(Run("rm mine.txt").status, 0);
  const std::string old = age_last_run(40);  // past the default bound of 30 days
  RunResult r = Run("echo x > new.txt");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("removed the journal of run " + old));
  EXPECT_FALSE(Exists(Journals() + "/runs/" + old));
  // Under a bound of 60 days a 40-day-old run is kept.
  WriteFile(t_.root() + "/p.json", R"({"limits": {"journalDays": 60}})");
  ASSERT_EQ(Run("rm new.txt").status, 0);
  const std::string kept = age_last_run(40);
  r = Run("echo y > other.txt", {"--policy", t_.root() + "/p.json"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(Exists(Journals() + "/runs/" + kept)) << r.err;
}

TEST_F(RecoverableTest, ExplainSaysWhereTheJournalIsAndHowInPlaceWritesAreKept) {
  RunResult r = Cordon({"policy", "explain", "--profile", "workspace-write"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("recoverable: kept in the run's journal"));
  EXPECT_THAT(r.out, HasSubstr(Journals()));
  EXPECT_THAT(r.out, ::testing::AnyOf(HasSubstr("a reflink copy, any size"),
                                      HasSubstr("a copy up to 67108864 bytes")));
  EXPECT_THAT(r.out, HasSubstr("larger ones an approval"));
  r = Cordon({"policy", "explain", "--profile", "workspace-write", "--sensitive-delete", "ask"});
  EXPECT_THAT(r.out, ::testing::Not(HasSubstr("Journal ")));
}

// A workspace that is a mount of its own has no place for a journal on its
// mount outside it: the run says so and falls back to asking.
TEST_F(RecoverableTest, NoPlaceForTheJournalFallsBackToAskAndSaysSo) {
  if (::mount("tmpfs", t_.ws().c_str(), "tmpfs", 0, "size=4m") != 0) {
    GTEST_SKIP() << "cannot mount a tmpfs on the workspace (needs root): " << std::strerror(errno);
  }
  WriteFile(t_.Ws("mine.txt"), "mine\n");
  RunResult r = Run("rm mine.txt");
  EXPECT_NE(r.status, 0);
  EXPECT_THAT(r.err, HasSubstr("this run is not recoverable"));
  EXPECT_EQ(ReadFile(t_.Ws("mine.txt")), "mine\n") << "ask, with no approver: refused";
  // The run's own files still come and go freely.
  r = Run("echo x > f && rm f");
  EXPECT_EQ(r.status, 0) << r.err;
  ASSERT_EQ(::umount2(t_.ws().c_str(), MNT_DETACH), 0);
}

}  // namespace
}  // namespace cordon::testing
