// Issue 26: a hostile tool cannot reach or poison the run journals. A run
// keeps a file of the user's; later runs, granted read-write a directory
// above the journal (the strongest grant a user may give), try every way
// in: read a kept file, list names, write or truncate a kept file, create
// a file there, rename or link a workspace file into it, a symlink planted
// in the workspace, /proc/self/fd, chmod. Once per journal place (the state
// home's, and .cordon-journal-UID at the top of the workspace's mount),
// profile (workspace-write, read-only) and probe (dynamic, and static: it
// skips the preload, so the kernel layer and the supervisor must hold).
// Ground truth is read from disk afterwards, and `cordon undo` of the
// first run must still bring the file back whole.
#include <dirent.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <tuple>
#include <vector>

#include "tests/support/test_env.h"

namespace cordon::testing {
namespace {

using ::testing::HasSubstr;

// (probe, mount-top place)
class JournalReachTest : public ::testing::TestWithParam<std::tuple<const char*, bool>> {
 protected:
  void SetUp() override {
    ASSERT_EQ(::mkdir((t_.root() + "/home").c_str(), 0700), 0);
    ASSERT_EQ(::mkdir((t_.root() + "/state").c_str(), 0700), 0);
    env_ = {"HOME=" + t_.root() + "/home", "XDG_STATE_HOME=" + t_.root() + "/state"};
    if (mount_top()) {
      // The workspace on a mount of its own, beneath the scratch tree: the
      // state home is on another mount, so the journal goes to the top of
      // the workspace's mount.
      const std::string mnt = t_.root() + "/mnt";
      ASSERT_EQ(::mkdir(mnt.c_str(), 0755), 0);
      if (::mount("tmpfs", mnt.c_str(), "tmpfs", 0, "size=8m") != 0) {
        GTEST_SKIP() << "cannot mount a tmpfs (needs root): " << std::strerror(errno);
      }
      mounted_ = mnt;
      ws_ = mnt + "/ws";
      ASSERT_EQ(::mkdir(ws_.c_str(), 0755), 0);
      journal_ = mnt + "/.cordon-journal-" + std::to_string(::geteuid());
    } else {
      ws_ = t_.ws();
      journal_ = t_.root() + "/state/cordon/journal";
    }
    WriteFile(ws_ + "/mine.txt", "mine\n");
    WriteFile(ws_ + "/other.txt", "other\n");
    RunResult first = Run("workspace-write", {"unlink", "mine.txt"}, {});
    ASSERT_EQ(first.status, 0) << first.err;
    ASSERT_FALSE(Exists(ws_ + "/mine.txt"));
    std::vector<std::string> runs = ListDir(journal_ + "/runs");
    ASSERT_EQ(runs.size(), 1u) << "the first run's journal at " << journal_;
    run_ = journal_ + "/runs/" + runs[0];
    slot_ = run_ + "/slots/1";
    ASSERT_EQ(ReadFile(slot_), "mine\n");
    changes_ = ReadFile(run_ + "/changes.jsonl");
  }
  void TearDown() override {
    if (!mounted_.empty()) ::umount2(mounted_.c_str(), MNT_DETACH);
  }
  bool mount_top() const { return std::get<1>(GetParam()); }
  const char* probe() const { return std::get<0>(GetParam()); }

  RunResult Run(const std::string& profile, const std::vector<std::string>& op,
                const std::vector<std::string>& extra) {
    std::vector<std::string> args = {"run",         "--profile", profile,     "--workspace",
                                     ws_,           "--ro",      ProbeDir(),  "--approvals",
                                     "deny"};
    args.insert(args.end(), extra.begin(), extra.end());
    args.push_back("--");
    args.push_back(probe());
    args.insert(args.end(), op.begin(), op.end());
    return RunCordon(args, ws_, env_);
  }
  // The attack `op` under `profile`, granted the whole scratch tree (an
  // ancestor of the journal) read-write; the errno it got.
  int Attack(const std::string& profile, const std::vector<std::string>& op) {
    last_ = Run(profile, op, {"--rw", t_.root()});
    return last_.status;
  }
  // The journal as the first run left it, and undo takes it back.
  void ExpectJournalWholeAndUndoWorks() {
    EXPECT_EQ(ReadFile(slot_), "mine\n");
    EXPECT_EQ(ReadFile(run_ + "/changes.jsonl"), changes_);
    EXPECT_EQ(ListDir(run_ + "/slots"), std::vector<std::string>{"1"});
    const std::string id = run_.substr(run_.rfind('/') + 1);
    RunResult undo = RunCordon({"undo", "--workspace", ws_, id}, ws_, env_);
    EXPECT_EQ(undo.status, 0) << undo.out << undo.err;
    EXPECT_EQ(ReadFile(ws_ + "/mine.txt"), "mine\n");
  }

  ScratchTree t_;
  std::vector<std::string> env_;
  std::string mounted_, ws_, journal_, run_, slot_, changes_;
  RunResult last_;
};

const char* const kProfiles[] = {"workspace-write", "read-only"};

TEST_P(JournalReachTest, AKeptFileCannotBeRead) {
  for (const char* profile : kProfiles) {
    EXPECT_EQ(Attack(profile, {"read", slot_}), EACCES) << profile << last_.err;
    EXPECT_EQ(Attack(profile, {"read", run_ + "/changes.jsonl"}), EACCES) << profile;
    EXPECT_EQ(Attack(profile, {"reopen", slot_, "/proc/self/fd/", "r"}), EACCES) << profile;
    EXPECT_EQ(Attack(profile, {"opath-reopen", slot_, "r"}), EACCES) << profile;
    EXPECT_NE(Attack(profile, {"opath-reopen", slot_, "w"}), 0) << profile;
  }
  ExpectJournalWholeAndUndoWorks();
}

TEST_P(JournalReachTest, NoNameInTheJournalCanBeListed) {
  for (const char* profile : kProfiles) {
    for (const std::string& dir : {journal_, journal_ + "/runs", run_, run_ + "/slots"}) {
      EXPECT_EQ(Attack(profile, {"list", dir}), EACCES) << profile << " " << dir << last_.err;
    }
  }
  // No journal entry carries a name of the workspace's: slots are numbers.
  for (const std::string& name : ListDir(run_ + "/slots")) EXPECT_EQ(name.find("mine"), std::string::npos);
  ExpectJournalWholeAndUndoWorks();
}

TEST_P(JournalReachTest, AKeptFileCannotBeWrittenOrTruncated) {
  for (const char* profile : kProfiles) {
    for (const char* op : {"append", "write", "trunc", "truncate", "chmod", "setxattr"}) {
      EXPECT_NE(Attack(profile, {op, slot_}), 0) << profile << " " << op;
    }
    EXPECT_NE(Attack(profile, {"append", run_ + "/changes.jsonl"}), 0) << profile;
    EXPECT_NE(Attack(profile, {"chmod", run_ + "/slots"}), 0) << profile;
  }
  struct stat st;
  ASSERT_EQ(::stat((run_ + "/slots").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0700u);
  ExpectJournalWholeAndUndoWorks();
}

TEST_P(JournalReachTest, NothingCanBeCreatedRenamedOrLinkedIntoIt) {
  for (const char* profile : kProfiles) {
    EXPECT_NE(Attack(profile, {"create", run_ + "/slots/2"}), 0) << profile;
    EXPECT_NE(Attack(profile, {"create", journal_ + "/evil"}), 0) << profile;
    EXPECT_NE(Attack(profile, {"mkdir", journal_ + "/runs/evil"}), 0) << profile;
    EXPECT_NE(Attack(profile, {"rename", ws_ + "/other.txt", run_ + "/slots/2"}), 0) << profile;
    EXPECT_NE(Attack(profile, {"rename", ws_ + "/other.txt", journal_ + "/runs/evil"}), 0);
    EXPECT_NE(Attack(profile, {"link", ws_ + "/other.txt", run_ + "/slots/2"}), 0) << profile;
    EXPECT_NE(Attack(profile, {"symlink", ws_ + "/other.txt", run_ + "/slots/2"}), 0) << profile;
    // Nor taken out of it: moved away, removed.
    EXPECT_NE(Attack(profile, {"rename", slot_, ws_ + "/stolen"}), 0) << profile;
    EXPECT_NE(Attack(profile, {"rename", journal_, t_.root() + "/moved"}), 0) << profile;
    EXPECT_NE(Attack(profile, {"unlink", slot_}), 0) << profile;
  }
  EXPECT_FALSE(Exists(journal_ + "/evil"));
  EXPECT_FALSE(Exists(journal_ + "/runs/evil"));
  EXPECT_FALSE(Exists(ws_ + "/stolen"));
  EXPECT_FALSE(Exists(t_.root() + "/moved"));
  EXPECT_EQ(ReadFile(ws_ + "/other.txt"), "other\n");
  ExpectJournalWholeAndUndoWorks();
}

// A symlink in the workspace that leads into the journal (planted by an
// earlier run, or by the tool itself): following it reaches nothing.
TEST_P(JournalReachTest, ASymlinkInTheWorkspaceLeadsNowhere) {
  ASSERT_EQ(::symlink(slot_.c_str(), (ws_ + "/lnk").c_str()), 0);
  ASSERT_EQ(::symlink((run_ + "/slots").c_str(), (ws_ + "/dir").c_str()), 0);
  for (const char* profile : kProfiles) {
    EXPECT_EQ(Attack(profile, {"read", ws_ + "/lnk"}), EACCES) << profile;
    EXPECT_NE(Attack(profile, {"append", ws_ + "/lnk"}), 0) << profile;
    EXPECT_NE(Attack(profile, {"truncate", ws_ + "/lnk"}), 0) << profile;
    EXPECT_NE(Attack(profile, {"create", ws_ + "/dir/2"}), 0) << profile;
    EXPECT_EQ(Attack(profile, {"list", ws_ + "/dir"}), EACCES) << profile;
  }
  // The tool's own link, made in the run, is no better.
  EXPECT_EQ(Attack("workspace-write", {"symlink", slot_, ws_ + "/own"}), 0) << last_.err;
  EXPECT_NE(Attack("workspace-write", {"append", ws_ + "/own"}), 0);
  ::unlink((ws_ + "/lnk").c_str());
  ::unlink((ws_ + "/dir").c_str());
  ::unlink((ws_ + "/own").c_str());
  ExpectJournalWholeAndUndoWorks();
}

// A file the tool holds open for writing and then removes is kept in the
// journal; writing on through the descriptor changes the kept inode, but
// undo still brings back what the user had (the copy taken at the open).
TEST_P(JournalReachTest, WritingThroughAHeldDescriptorDoesNotPoisonWhatUndoRestores) {
  WriteFile(ws_ + "/held.txt", "held\n");
  RunResult r = Run("workspace-write", {"rm-then-write", "held.txt"}, {});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_FALSE(Exists(ws_ + "/held.txt"));
  RunResult undo = RunCordon({"undo", "--workspace", ws_}, ws_, env_);
  EXPECT_EQ(undo.status, 0) << undo.out << undo.err;
  EXPECT_EQ(ReadFile(ws_ + "/held.txt"), "held\n");
}

// The honest neighbour: the same grant still reads and writes what is
// beside the journal.
TEST_P(JournalReachTest, WhatIsBesideTheJournalStaysGranted) {
  WriteFile(t_.root() + "/home/notes.txt", "notes\n");
  EXPECT_EQ(Attack("workspace-write", {"read", t_.root() + "/home/notes.txt"}), 0) << last_.err;
  EXPECT_EQ(Attack("workspace-write", {"append", t_.root() + "/home/notes.txt"}), 0) << last_.err;
  EXPECT_EQ(Attack("read-only", {"read", t_.root() + "/home/notes.txt"}), 0) << last_.err;
  EXPECT_EQ(Attack("workspace-write", {"list", t_.root() + "/home"}), 0) << last_.err;
  EXPECT_EQ(ReadFile(t_.root() + "/home/notes.txt"), "notes\nprobe\n");
}

// Before any run has kept a journal, its place does not exist: a tool
// granted the directory above it cannot make it (it would hold what a
// later run keeps there).
TEST(JournalPlaceTest, AToolCannotMakeTheJournalPlaceBeforeARunDoes) {
  ScratchTree t;
  const std::string state = t.root() + "/state";
  ASSERT_EQ(::mkdir(state.c_str(), 0700), 0);
  ASSERT_EQ(::mkdir((state + "/cordon").c_str(), 0700), 0);
  const std::vector<std::string> env = {"XDG_STATE_HOME=" + state};
  for (const std::vector<std::string>& mode :
       {std::vector<std::string>{"--profile", "workspace-write", "--sensitive-delete", "ask"},
        std::vector<std::string>{"--profile", "read-only"}}) {
    for (const char* probe : {PROBE_DYNAMIC, PROBE_STATIC}) {
      std::vector<std::string> args = {"run", "--workspace", t.ws(), "--ro", ProbeDir(),
                                       "--rw", t.root()};
      args.insert(args.end(), mode.begin(), mode.end());
      args.insert(args.end(), {"--", probe, "mkdir", state + "/cordon/journal"});
      RunResult r = RunCordon(args, t.ws(), env);
      EXPECT_NE(r.status, 0) << mode[1] << " " << probe;
      EXPECT_FALSE(Exists(state + "/cordon/journal")) << mode[1] << " " << probe;
      // The honest neighbour: a sibling is made.
      args.back() = state + "/cordon/other";
      r = RunCordon(args, t.ws(), env);
      EXPECT_EQ(r.status, 0) << mode[1] << " " << probe << r.err;
      ::rmdir((state + "/cordon/other").c_str());
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Places, JournalReachTest,
    ::testing::Combine(::testing::Values(PROBE_DYNAMIC, PROBE_STATIC), ::testing::Bool()),
    [](const ::testing::TestParamInfo<JournalReachTest::ParamType>& info) {
      std::string probe = std::get<0>(info.param);
      return std::string(probe.find("static") != std::string::npos ? "static" : "dynamic") +
             (std::get<1>(info.param) ? "_mount_top" : "_state_home");
    });

}  // namespace
}  // namespace cordon::testing
