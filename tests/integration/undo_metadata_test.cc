// `cordon undo` takes back metadata changes (issue 27): in a recoverable run
// a chmod, chown, utimes or xattr change of a file that existed before the
// run keeps the old value in the run's journal (once per file and
// attribute), allowed by policy or bypassed once, and undo sets it back on
// that same inode only. The real cordon and probe (dynamic and static), the
// disk read after the run and after undo.
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <vector>

#include "tests/integration/bypass_fixture.h"
#include "tests/support/test_env.h"

namespace cordon::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

class UndoMetadataTest : public UndoFixture {
 protected:
  void SetUp() override {
    UndoFixture::SetUp();
    ASSERT_EQ(::chmod(t_.Ws("notes.txt").c_str(), 0644), 0);
  }
  struct stat Stat(const std::string& rel) {
    struct stat st {};
    EXPECT_EQ(::lstat(t_.Ws(rel).c_str(), &st), 0) << rel;
    return st;
  }
  // A run allowed by policy (no bypass), recoverable.
  int Allowed(std::vector<std::string> op) { return Run(kWrite, "deny", std::move(op), Env()); }
  // Every run's changes, as the journal holds them.
  std::string Changes() { return ShOutput("cat '" + Journals() + "'/runs/*/changes.jsonl"); }
  // A user xattr on notes.txt, or why there is none here.
  bool UserXattrs() {
    if (::setxattr(t_.Ws("notes.txt").c_str(), "user.probe", "x", 1, 0) != 0) return false;
    return ::removexattr(t_.Ws("notes.txt").c_str(), "user.probe") == 0;
  }
  std::string Xattr(const std::string& rel, const char* name) {
    char buf[256];
    ssize_t n = ::getxattr(t_.Ws(rel).c_str(), name, buf, sizeof buf);
    return n < 0 ? "<absent>" : std::string(buf, static_cast<size_t>(n));
  }
};

// chmod of the user's file: kept, set back by undo, which says so; a
// second undo does nothing and says why.
TEST_P(UndoMetadataTest, AChmodIsTakenBack) {
  ASSERT_EQ(Allowed({"sys", "chmod", "notes.txt", "600"}), 0) << last_.err;
  EXPECT_EQ(Stat("notes.txt").st_mode & 07777, 0600u);
  EXPECT_THAT(Changes(), HasSubstr(R"("attr":"mode","dev":)"));
  RunResult undo = Undo();
  EXPECT_EQ(undo.status, 0) << undo.out << undo.err;
  EXPECT_THAT(undo.out, HasSubstr("set back: mode 0644 of notes.txt"));
  EXPECT_EQ(Stat("notes.txt").st_mode & 07777, 0644u);
  RunResult again = Undo();
  EXPECT_EQ(again.status, 125);
  EXPECT_THAT(again.err, HasSubstr("not undone already"));
  EXPECT_EQ(Stat("notes.txt").st_mode & 07777, 0644u);
}

// `cordon runs show` names each metadata change (a `change` record in the
// audit log), "(old kept)" where undo can set it back: a chmod by path,
// one through a descriptor (fchmod) and new times through one (futimens).
TEST_P(UndoMetadataTest, RunsShowNamesEachMetadataChange) {
  ASSERT_EQ(Allowed({"sys", "chmod", "notes.txt", "600"}), 0) << last_.err;
  auto line_of = [](const std::string& out, const std::string& verb, const std::string& name) {
    for (size_t at = 0; at < out.size();) {
      const size_t nl = out.find('\n', at);
      const std::string line = out.substr(at, nl == std::string::npos ? nl : nl - at);
      if (line.find(verb) != std::string::npos && line.find("/" + name) != std::string::npos) {
        return true;
      }
      at = nl == std::string::npos ? out.size() : nl + 1;
    }
    return false;
  };
  RunResult show = RunCordon({"runs", "show"}, t_.ws(), Env());
  ASSERT_EQ(show.status, 0) << show.err;
  EXPECT_TRUE(line_of(show.out, "mode changed (old kept)", "notes.txt")) << show.out;
  ASSERT_EQ(Allowed({"sys", "fchmod", "notes.txt", "640"}), 0) << last_.err;
  show = RunCordon({"runs", "show"}, t_.ws(), Env());
  EXPECT_TRUE(line_of(show.out, "mode changed (old kept)", "notes.txt")) << show.out;
  ASSERT_EQ(Allowed({"sys", "futimens", "notes.txt", "2000000000", "2000000000"}), 0) << last_.err;
  show = RunCordon({"runs", "show"}, t_.ws(), Env());
  EXPECT_TRUE(line_of(show.out, "times changed (old kept)", "notes.txt")) << show.out;
}

// chown: as root (capless in the run, so only to a group of its own) the
// group changes and undo gives the old one back; otherwise a chown to the
// same owner is kept and set back all the same.
TEST_P(UndoMetadataTest, AChownIsTakenBack) {
  const bool root = ::geteuid() == 0;
  if (root) ASSERT_EQ(::chown(t_.Ws("notes.txt").c_str(), 0, 4242), 0);
  const struct stat before = Stat("notes.txt");
  const std::string gid = std::to_string(::getegid());
  ASSERT_EQ(Allowed({"sys", "chown", "notes.txt", "-1", gid}), 0) << last_.err;
  EXPECT_EQ(Stat("notes.txt").st_gid, ::getegid());
  RunResult undo = Undo();
  EXPECT_EQ(undo.status, 0) << undo.out << undo.err;
  EXPECT_THAT(undo.out, HasSubstr("set back: owner " + std::to_string(before.st_uid) + ":" +
                                  std::to_string(before.st_gid) + " of notes.txt"));
  EXPECT_EQ(Stat("notes.txt").st_gid, before.st_gid);
  EXPECT_EQ(Stat("notes.txt").st_uid, before.st_uid);
}

// utimes: both timestamps, nanoseconds too.
TEST_P(UndoMetadataTest, TimesAreTakenBack) {
  const struct timespec old[2] = {{1000000000, 123456789}, {1100000000, 987654321}};
  ASSERT_EQ(::utimensat(AT_FDCWD, t_.Ws("notes.txt").c_str(), old, 0), 0);
  ASSERT_EQ(Allowed({"sys", "utimensat", "notes.txt", "2000000000", "2000000000"}), 0) << last_.err;
  EXPECT_EQ(Stat("notes.txt").st_mtim.tv_sec, 2000000000);
  RunResult undo = Undo();
  EXPECT_EQ(undo.status, 0) << undo.out << undo.err;
  EXPECT_THAT(undo.out, HasSubstr("set back: times atime 1000000000.123456789 mtime "
                                  "1100000000.987654321 of notes.txt"));
  const struct stat st = Stat("notes.txt");
  EXPECT_EQ(st.st_atim.tv_sec, 1000000000);
  EXPECT_EQ(st.st_atim.tv_nsec, 123456789);
  EXPECT_EQ(st.st_mtim.tv_sec, 1100000000);
  EXPECT_EQ(st.st_mtim.tv_nsec, 987654321);
}

// xattrs: one that was there gets its old value back, one the run added
// is removed, one the run removed comes back.
TEST_P(UndoMetadataTest, XattrsAreTakenBack) {
  if (!UserXattrs()) GTEST_SKIP() << "the filesystem of " << t_.ws() << " refuses user xattrs";
  const std::string f = t_.Ws("notes.txt");
  ASSERT_EQ(::setxattr(f.c_str(), "user.k", "old", 3, 0), 0);
  ASSERT_EQ(::setxattr(f.c_str(), "user.gone", "g", 1, 0), 0);
  ASSERT_EQ(RunScript(kWrite, "deny",
                      "$P sys setxattr notes.txt user.k new && "
                      "$P sys setxattr notes.txt user.k newer && "
                      "$P sys setxattr notes.txt user.j x && "
                      "$P sys removexattr notes.txt user.gone",
                      Env()),
            0)
      << last_.err;
  EXPECT_EQ(Xattr("notes.txt", "user.k"), "newer");
  EXPECT_EQ(Xattr("notes.txt", "user.j"), "x");
  EXPECT_EQ(Xattr("notes.txt", "user.gone"), "<absent>");
  RunResult undo = Undo();
  EXPECT_EQ(undo.status, 0) << undo.out << undo.err;
  EXPECT_THAT(undo.out, HasSubstr("set back: xattr user.k (3 bytes) of notes.txt"));
  EXPECT_THAT(undo.out, HasSubstr("set back: xattr user.j removed (absent before the run)"));
  EXPECT_EQ(Xattr("notes.txt", "user.k"), "old") << "the first old value";
  EXPECT_EQ(Xattr("notes.txt", "user.j"), "<absent>");
  EXPECT_EQ(Xattr("notes.txt", "user.gone"), "g");
}

// Changed twice: the first old value is the one kept (one record) and set
// back. A file the run made is not kept: undo removes it, nothing else.
TEST_P(UndoMetadataTest, TheFirstOldValueOnlyAndNothingOfTheRunsOwnFiles) {
  ASSERT_EQ(RunScript(kWrite, "deny",
                      "$P sys chmod notes.txt 600 && $P sys chmod notes.txt 640 && "
                      "$P write new.txt && $P sys chmod new.txt 600",
                      Env()),
            0)
      << last_.err;
  EXPECT_EQ(Stat("notes.txt").st_mode & 07777, 0640u);
  EXPECT_EQ(Stat("new.txt").st_mode & 07777, 0600u);
  const std::string changes = Changes();
  // One attr record: notes.txt's mode, 0644 (the first); none for new.txt.
  ASSERT_NE(changes.find(R"("op":"attr")"), std::string::npos) << changes;
  EXPECT_EQ(changes.find(R"("op":"attr")"), changes.rfind(R"("op":"attr")")) << changes;
  EXPECT_THAT(changes, HasSubstr(R"("mode":420,"op":"attr","path":"notes.txt")")) << changes;
  RunResult undo = Undo();
  EXPECT_EQ(undo.status, 0) << undo.out << undo.err;
  EXPECT_EQ(Stat("notes.txt").st_mode & 07777, 0644u);
  EXPECT_FALSE(Exists(t_.Ws("new.txt")));
  EXPECT_THAT(undo.out, Not(HasSubstr("new.txt")));
}

// The workspace directory itself has no name in it a record could hold:
// its mode is not kept, and the journal stays one undo reads.
TEST_P(UndoMetadataTest, TheWorkspaceItselfIsNotKept) {
  const mode_t ws_mode = Stat(".").st_mode & 07777;
  ASSERT_EQ(RunScript(kWrite, "deny", "$P sys chmod . 700 && $P sys chmod notes.txt 600", Env()), 0)
      << last_.err;
  EXPECT_EQ(Stat(".").st_mode & 07777, 0700u);
  RunResult undo = Undo();
  EXPECT_EQ(undo.status, 0) << undo.out << undo.err;
  EXPECT_EQ(Stat("notes.txt").st_mode & 07777, 0644u);
  EXPECT_EQ(Stat(".").st_mode & 07777, 0700u) << "not kept";
  ASSERT_EQ(::chmod(t_.ws().c_str(), ws_mode), 0);
}

// A file put in the name's place after the run is another inode: undo
// leaves it as it is, says so and what it did not set back, and exits 1.
TEST_P(UndoMetadataTest, AFileReplacedAfterTheRunIsLeftAlone) {
  ASSERT_EQ(Allowed({"sys", "chmod", "notes.txt", "600"}), 0) << last_.err;
  WriteFile(t_.Ws("notes.new"), "mine\n");
  ASSERT_EQ(::chmod(t_.Ws("notes.new").c_str(), 0640), 0);
  ASSERT_EQ(::rename(t_.Ws("notes.new").c_str(), t_.Ws("notes.txt").c_str()), 0);
  RunResult undo = Undo();
  EXPECT_EQ(undo.status, 1) << undo.out << undo.err;
  EXPECT_THAT(undo.out, HasSubstr("kept as it is: notes.txt"));
  EXPECT_THAT(undo.out, HasSubstr("mode 0644 not set back"));
  EXPECT_EQ(Stat("notes.txt").st_mode & 07777, 0640u);
  EXPECT_EQ(ReadFile(t_.Ws("notes.txt")), "mine\n");
}

// An old xattr value larger than limits.journalCopyBytes cannot be kept:
// the change is refused, with a line naming the bound, and the value
// stays. One whose old value fits (absent: nothing) goes through.
TEST_P(UndoMetadataTest, AnXattrPastTheCopyBoundIsRefused) {
  if (!UserXattrs()) GTEST_SKIP() << "the filesystem of " << t_.ws() << " refuses user xattrs";
  const std::string big(100, 'a');
  ASSERT_EQ(::setxattr(t_.Ws("notes.txt").c_str(), "user.k", big.data(), big.size(), 0), 0);
  constexpr const char* kSmallCopies =
      R"({"security":{"assistantPermissions":{"profile":"workspace-managed/v1"}},)"
      R"("limits":{"journalCopyBytes":16}})";
  EXPECT_EQ(Run(kSmallCopies, "deny", {"sys", "setxattr", "notes.txt", "user.k", "x"}, Env()),
            EACCES)
      << last_.err;
  EXPECT_THAT(last_.err, HasSubstr("limits.journalCopyBytes"));
  EXPECT_EQ(Xattr("notes.txt", "user.k"), big);
  EXPECT_EQ(Run(kSmallCopies, "deny", {"sys", "setxattr", "notes.txt", "user.n", "x"}, Env()), 0)
      << last_.err;
  EXPECT_EQ(Xattr("notes.txt", "user.n"), "x");
}

// A metadata change bypassed once (a protected path), by path and by
// descriptor: kept as an allowed one is, and taken back.
TEST_P(UndoMetadataTest, ABypassedChangeIsTakenBack) {
  ASSERT_EQ(::chmod(t_.Ws(".gitmodules").c_str(), 0644), 0);
  const std::string allow = Rules(R"([{"glob": ".gitmodules", "op": "bypass-chmod"}])");
  ASSERT_EQ(RunKept(allow, {"sys", "fchmod", ".gitmodules", "600"}), 0) << last_.err;
  EXPECT_EQ(Decisions("bypassed"), 1);
  EXPECT_EQ(Stat(".gitmodules").st_mode & 07777, 0600u);
  RunResult undo = Undo();
  EXPECT_EQ(undo.status, 0) << undo.out << undo.err;
  EXPECT_THAT(undo.out, HasSubstr("set back: mode 0644 of .gitmodules"));
  EXPECT_EQ(Stat(".gitmodules").st_mode & 07777, 0644u);
  ASSERT_EQ(RunKept(allow, {"sys", "chmod", ".gitmodules", "640"}), 0) << last_.err;
  EXPECT_EQ(Decisions("bypassed"), 1);
  undo = Undo();
  EXPECT_EQ(undo.status, 0) << undo.out << undo.err;
  EXPECT_EQ(Stat(".gitmodules").st_mode & 07777, 0644u);
}

INSTANTIATE_TEST_SUITE_P(Probes, UndoMetadataTest, ::testing::Values(PROBE_DYNAMIC, PROBE_STATIC),
                         ProbeKindName);

}  // namespace
}  // namespace cordon::testing
