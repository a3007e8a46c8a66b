// policy/refusal_hint: which grant each refusal names, spelt so that adding
// it to the command line gets past that refusal. The integration test
// (tests/integration/refusal_hint_test.cc) follows the hints for real.
#include "policy/refusal_hint.h"

#include <gtest/gtest.h>

#include "policy/decide.h"
#include "policy/policy.h"

namespace cordon::policy {
namespace {

TEST(RefusalHint, NamesTheGrantForEachRefusal) {
  struct Row {
    Refusal r;
    const char* path;
    const char* hint;
  } rows[] = {
      {Refusal::kReadOutside, "/opt/x/lib.so", "to allow it: --ro /opt/x/lib.so"},
      {Refusal::kWriteOutside, "/srv/out.txt", "to allow it: --rw /srv/out.txt"},
      {Refusal::kWriteOutside, "/srv/a b/it's", "to allow it: --rw '/srv/a b/it'\\''s'"},
      {Refusal::kReadOnlyProfile, "/w/ws/f", "to allow it: --profile workspace-write"},
      {Refusal::kNone, "/w/ws/.git/config", ""},
      // A shared temporary directory: the name may be mktemp's, new each time.
      {Refusal::kWriteOutside, "/tmp/x.AbC123",
       "the run's own temporary directory is $TMPDIR; a name made anew each time (mktemp) needs "
       "--rw /tmp; to allow it: --rw /tmp/x.AbC123"},
      {Refusal::kWriteOutside, "/var/tmp/y",
       "the run's own temporary directory is $TMPDIR; a name made anew each time (mktemp) needs "
       "--rw /var/tmp; to allow it: --rw /var/tmp/y"},
      {Refusal::kWriteOutside, "/tmp/sub/z", "to allow it: --rw /tmp/sub/z"},
      // What no grant opens gets no grant to follow.
      {Refusal::kWriteOutside, "/proc/self/coredump_filter",
       "a kernel control filesystem (/proc, /sys): no grant makes it writable"},
      {Refusal::kWriteOutside, "/sys/kernel/mm/ksm/run",
       "a kernel control filesystem (/proc, /sys): no grant makes it writable"},
      {Refusal::kReadOutside, "/sys/kernel/mm/ksm/run", "to allow it: --ro /sys/kernel/mm/ksm/run"},
      {Refusal::kReadOutside, "/dev/kmsg",
       "a device node: no grant opens one (every run has /dev/null, /dev/zero, /dev/full, "
       "/dev/random and /dev/urandom, and its own terminal)"},
      {Refusal::kWriteOutside, "/proctor/x", "to allow it: --rw /proctor/x"},
  };
  for (const Row& row : rows) {
    EXPECT_EQ(RefusalHint(row.r, row.path), row.hint) << row.path;
  }
  // Not a grant: a deny rule is the user's word, an old file's delete asks.
  EXPECT_NE(RefusalHint(Refusal::kDenied, "/w/.env").find("deny rule"), std::string::npos);
  EXPECT_NE(RefusalHint(Refusal::kNeedsApproval, "/w/old").find("--approvals tty"),
            std::string::npos);
  EXPECT_TRUE(RefusalHint(Refusal::kNeedsApproval, "/w/old")
                  .ends_with("; to allow it: --sensitive-delete recoverable"));
}

// What a runtime probes and does without (said only when the tool fails),
// and its neighbours, which are said.
TEST(RefusalHint, ARuntimesProbesAreKnownByPath) {
  for (const char* p :
       {"/tmp/hsperfdata_root", "/tmp/hsperfdata_dev/4242", "/proc/self/coredump_filter",
        "/proc/thread-self/coredump_filter", "/proc/123/coredump_filter"}) {
    EXPECT_TRUE(IsRuntimeProbe(p)) << p;
  }
  for (const char* p : {"/tmp/hsperfdata_", "/tmp/other", "/proc/self/oom_score_adj",
                        "/proc/x1/coredump_filter", "/proc//coredump_filter",
                        "/proc/self/task/1/coredump_filter", "/var/tmp/hsperfdata_root"}) {
    EXPECT_FALSE(IsRuntimeProbe(p)) << p;
  }
}

// A name's change is granted by its directory: a grant of one file lets it
// be written, never removed or renamed.
TEST(RefusalHint, ANameChangeNamesItsDirectory) {
  EXPECT_EQ(NameChangeHint(Refusal::kWriteOutside, "/srv/d/f"), "to allow it: --rw /srv/d");
  EXPECT_EQ(NameChangeHint(Refusal::kWriteOutside, "/tmp/x"), "to allow it: --rw /tmp");
  EXPECT_EQ(NameChangeHint(Refusal::kReadOnlyProfile, "/w/ws/f"),
            "to allow it: --profile workspace-write");
  EXPECT_EQ(FromRule("a single-file grant: the file's name cannot change"), Refusal::kWriteOutside);
}

TEST(RefusalHint, ReadsTheRefusalOfAnAdmissionAndOfARule) {
  EXPECT_EQ(FromAdmission(PathClass::kOutside, false), Refusal::kReadOutside);
  EXPECT_EQ(FromAdmission(PathClass::kOutside, true), Refusal::kWriteOutside);
  EXPECT_EQ(FromAdmission(PathClass::kReadOnly, true), Refusal::kWriteOutside);
  EXPECT_EQ(FromAdmission(PathClass::kWorkspace, true), Refusal::kReadOnlyProfile);
  EXPECT_EQ(FromAdmission(PathClass::kDenied, false), Refusal::kDenied);
  EXPECT_EQ(FromAdmission(PathClass::kMalformed, true), Refusal::kNone);
  EXPECT_EQ(FromAdmission(PathClass::kHeldFd, true), Refusal::kNone);

  EXPECT_EQ(FromRule("outside every allowed path"), Refusal::kWriteOutside);
  EXPECT_EQ(FromRule("read-only path"), Refusal::kWriteOutside);
  // The read-only profile's workspace: the profile is what would allow it
  // (--rw of a directory that does not exist yet grants a file only).
  EXPECT_EQ(FromRule(kReadOnlyWorkspace), Refusal::kReadOnlyProfile);
  EXPECT_EQ(FromRule("denied path"), Refusal::kDenied);
  EXPECT_EQ(FromRule("the file existed before the run and needs approval"),
            Refusal::kNeedsApproval);
  EXPECT_EQ(FromRule(kNoJournalApprovalRule), Refusal::kNeedsApprovalUnkept);
  EXPECT_TRUE(RefusalHint(Refusal::kNeedsApprovalUnkept, "/srv/old")
                  .ends_with("; to allow it: --sensitive-delete allow"));
  EXPECT_EQ(FromRule("protected path"), Refusal::kProtected);
  EXPECT_EQ(FromRule("malformed path"), Refusal::kNone);
}

// A protected path needs no grant but a policy file's edit, and the hint
// names the one default pattern that covers it (a pattern matches at any
// depth: a nested repository's too).
TEST(RefusalHint, AProtectedPathNamesThePatternToRemove) {
  struct Row {
    const char* path;
    const char* pattern;
  } rows[] = {
      {"/w/ws/.git/config", ".git/config"},
      {"/w/ws/.git/info/exclude", ".git/info/exclude"},
      {"/w/ws/.git/modules/m/info/attributes", ".git/modules/**/info/attributes"},
      {"/w/ws/.git/hooks/pre-commit", ".git/hooks"},
      {"/w/ws/vendor/lib/.git/hooks/post-checkout", ".git/hooks"},
      {"/w/ws/.gitmodules", ".gitmodules"},
      {"/w/ws/sub/.envrc", ".envrc"},
      {"/w/ws/.git/modules/third/zlib/config", ".git/modules/**/config"},
  };
  for (const Row& row : rows) {
    const std::string h = RefusalHint(Refusal::kProtected, row.path);
    EXPECT_NE(h.find("run later, outside the sandbox"), std::string::npos) << h;
    EXPECT_NE(h.find(std::string("\"protectedPaths\": [\"-") + row.pattern + "\"]"),
              std::string::npos)
        << row.path << ": " << h;
  }
  // Covered by no default pattern (one of the user's own): the list is named.
  const std::string own = RefusalHint(Refusal::kProtected, "/w/ws/Makefile.local");
  EXPECT_NE(own.find("cordon policy explain"), std::string::npos) << own;
  EXPECT_EQ(own.find("[\"-"), std::string::npos) << own;
}

// A refused hard-linked or special file needs no grant but a copy: the
// line says how to make one for the stores that link.
TEST(RefusalHint, AHardLinkedFileSaysHowToGetACopy) {
  EXPECT_EQ(FromRule(kRefusedEntrySource), Refusal::kRefusedEntry);
  const std::string h = RefusalHint(Refusal::kRefusedEntry, "/ws/.git/objects/ab/cd");
  EXPECT_NE(h.find("--no-hardlinks"), std::string::npos) << h;
  EXPECT_NE(h.find("pnpm"), std::string::npos) << h;
  EXPECT_NE(h.find("Hard links and special files"), std::string::npos) << h;
}

// A hard link whose every name is in the workspace: the one-run flag that
// keeps it, last on the line so that it is followed literally.
TEST(RefusalHint, AHardLinkAllInsideNamesTheFlagThatKeepsIt) {
  EXPECT_EQ(FromRule(kInsideLinkSource), Refusal::kInsideLink);
  const std::string h = RefusalHint(Refusal::kInsideLink, "/ws/target/debug/app");
  EXPECT_TRUE(h.ends_with("to allow it: --hard-links inside-workspace")) << h;
  EXPECT_EQ(RefusalHint(Refusal::kRefusedEntry, "/ws/x").find("--hard-links"), std::string::npos);
}

TEST(RefusalHint, QuotesOnlyWhatTheShellWouldSplit) {
  EXPECT_EQ(ShellWord("/usr/lib/x86_64-linux-gnu/libc.so.6"), "/usr/lib/x86_64-linux-gnu/libc.so.6");
  EXPECT_EQ(ShellWord("/a b"), "'/a b'");
  EXPECT_EQ(ShellWord("/a$HOME"), "'/a$HOME'");
  EXPECT_EQ(ShellWord(""), "''");
}

}  // namespace
// An exec refused beside a carve-out: with refused entries in the run the
// hint names them and the way to be rid of a local clone's links; without,
// a script's interpreter only.
TEST(RefusalHint, AnExecBesideRefusedEntriesNamesThem) {
  const std::string bare = ExecuteHint("/w/ws/app", {});
  EXPECT_EQ(bare, RefusalHint(Refusal::kExecute, "/w/ws/app"));
  const std::string one = ExecuteHint("/w/ws/app", {{"/w/ws/.git/objects/ab/cd", "hard link"}});
  EXPECT_NE(one.find("(/w/ws/.git/objects/ab/cd: hard-linked or special file)"), std::string::npos)
      << one;
  EXPECT_NE(one.find("git repack -a -d"), std::string::npos) << one;
  EXPECT_NE(one.find("(sh /w/ws/app)"), std::string::npos) << one;
  const std::string three =
      ExecuteHint("/w/ws/app", {{"/w/ws/a", "x"}, {"/w/ws/b", "x"}, {"/w/ws/c", "x"}});
  EXPECT_NE(three.find("(/w/ws/a and 2 more: "), std::string::npos) << three;
}

}  // namespace cordon::policy
