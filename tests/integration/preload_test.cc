// The preload under the real `cordon run` with real tools: refusals carry
// one line naming the call, the path and the rule; stress from threads,
// fork+exec and signal handlers finishes; the report stream accounts for
// every call; and taking the preload away changes nothing the kernel holds.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cerrno>
#include <regex>
#include <string>

#include "tests/support/test_env.h"

namespace cordon::testing {
namespace {

class PreloadRun : public ::testing::Test {
 protected:
  void SetUp() override {
    WriteFile(t_.Ws("inside.txt"), "needle inside\n");
    ::mkdir(t_.Ws("a").c_str(), 0755);
    WriteFile(t_.Out("secret.txt"), "needle secret\n");
  }
  // cordon [--log-level LEVEL] run --workspace ws --ro probes -- CMD...
  RunResult Run(std::vector<std::string> cmd, const std::string& level = "info",
                const std::vector<std::string>& env = {},
                const std::string& profile = "workspace-write") {
    std::vector<std::string> args;
    if (!level.empty()) args.insert(args.end(), {"--log-level", level});
    args.insert(args.end(), {"run", "--workspace", t_.ws(), "--ro", ProbeDir(), "--profile",
                             profile, "--"});
    args.insert(args.end(), cmd.begin(), cmd.end());
    return RunCordon(args, "", env);
  }
  static bool Has(const std::string& hay, const std::string& needle) {
    return hay.find(needle) != std::string::npos;
  }
  ScratchTree t_;
};

// A write through "a/.." is refused as written with one line; a read is
// the kernel's to judge, by the physical path: through a real directory it
// works (git's "sub/../.git/modules/sub/HEAD", "gcc -I src/../include"),
// through a symlink to outside it reaches what the link's parent is, and
// Landlock refuses that.
TEST_F(PreloadRun, DotDotWriteRefusedWithOneLineReasonReadLeftToTheKernel) {
  RunResult r = Run({"/bin/sh", "-c", "echo x > a/../inside.txt"});
  EXPECT_NE(r.status, 0);
  EXPECT_TRUE(Has(r.err, "(\"a/../inside.txt\") for writing: raw '..' segment [EACCES]"))
      << r.err;
  EXPECT_TRUE(Has(r.err, "preload applied")) << r.err;
  EXPECT_EQ(ReadFile(t_.Ws("inside.txt")), "needle inside\n");
  r = Run({"/bin/sh", "-c", "cat a/../inside.txt"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "needle inside\n");
  ASSERT_EQ(::mkdir(t_.Out("deep").c_str(), 0755), 0);
  ASSERT_EQ(::symlink(t_.Out("deep").c_str(), t_.Ws("hop").c_str()), 0);
  r = Run({"/bin/sh", "-c", "cat hop/../secret.txt"});
  EXPECT_NE(r.status, 0) << "the link's parent is outside: " << r.out;
  EXPECT_FALSE(Has(r.out, "secret")) << r.out;
}

TEST_F(PreloadRun, ReasonLinesFollowCordonLogOrInfoLevel) {
  std::string line = "refused open(\"" + t_.Out("secret.txt") + "\")";
  RunResult r = Run({"/bin/cat", t_.Out("secret.txt")}, "", {});
  EXPECT_NE(r.status, 0);
  EXPECT_FALSE(Has(r.err, line)) << "quiet by default: " << r.err;
  r = Run({"/bin/cat", t_.Out("secret.txt")}, "", {"CORDON_LOG=1"});
  EXPECT_NE(r.status, 0);
  EXPECT_TRUE(Has(r.err, line)) << r.err;
}

// An empty path is the kernel's to answer (ENOENT), as a null one is
// (EFAULT): not a refusal, and nothing is said of it at the default level
// (git gc unlinks "" and printed "refused unlink: change  (malformed path)").
TEST_F(PreloadRun, AnEmptyPathIsTheKernelsENOENTNotARefusal) {
  for (const char* op : {"unlink", "mkdir", "rmdir"}) {
    RunResult r = Run({ProbeDir() + "/probe", op, ""}, "");
    EXPECT_EQ(r.status, ENOENT) << op << ": " << r.err;
    EXPECT_FALSE(Has(r.err, "refused")) << op << ": " << r.err;
  }
  // The honest neighbour: a refused unlink outside still speaks.
  RunResult r = Run({ProbeDir() + "/probe", "unlink", t_.Out("secret.txt")}, "");
  EXPECT_EQ(r.status, EACCES) << r.err;
  EXPECT_TRUE(Has(r.err, "refused")) << r.err;
  EXPECT_EQ(ReadFile(t_.Out("secret.txt")), "needle secret\n");
}

// A read of a path outside the grant that does not exist is the kernel's
// ENOENT (ENOTDIR through a file), as under Landlock alone, and nothing is
// said of it: git probes $XDG_CONFIG_HOME/git/attributes and warned
// "unable to access ...: Permission denied" on every diff.
TEST_F(PreloadRun, AnAbsentPathOutsideIsENOENTNotARefusal) {
  const std::string absent = t_.Out("no-such-dir/attributes");
  RunResult r = Run({ProbeDir() + "/probe", "read", absent}, "");
  EXPECT_EQ(r.status, ENOENT) << r.err;
  EXPECT_FALSE(Has(r.err, "refused")) << r.err;
  r = Run({ProbeDir() + "/probe", "read", t_.Out("secret.txt") + "/x"}, "");
  EXPECT_EQ(r.status, ENOTDIR) << r.err;
  // git itself: no warning for the absent attributes file.
  r = Run({"sh", "-c",
           "cd " + t_.ws() + " && git init -q && git check-attr -a inside.txt && echo attr-ok"},
          "", {"XDG_CONFIG_HOME=" + t_.Out("no-such-dir")});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(Has(r.out, "attr-ok")) << r.out;
  EXPECT_FALSE(Has(r.err, "unable to access")) << r.err;
  EXPECT_FALSE(Has(r.err, "refused")) << r.err;
  // The honest neighbour: what exists outside stays refused, and says so.
  r = Run({ProbeDir() + "/probe", "read", t_.Out("secret.txt")}, "");
  EXPECT_EQ(r.status, EACCES) << r.err;
  EXPECT_TRUE(Has(r.err, "refused")) << r.err;
}

// A listing the kernel refuses (ls, os.listdir: glibc's opendir opens the
// directory where no hook admits it) is reported at the default level with
// its rule and the grant that would allow it; a listing inside works and
// says nothing.
TEST_F(PreloadRun, ARefusedListingSaysWhy) {
  ASSERT_EQ(::mkdir(t_.Out("dir").c_str(), 0755), 0);
  WriteFile(t_.Out("dir/f"), "x\n");
  RunResult r = Run({"ls", t_.Out("dir")}, "");
  EXPECT_NE(r.status, 0);
  EXPECT_TRUE(Has(r.err, "refused opendir: read " + t_.Out("dir"))) << r.err;
  EXPECT_TRUE(Has(r.err, "to allow it: --ro " + t_.Out("dir"))) << r.err;
  r = Run({"python3", "-c", "import os; print(os.listdir('" + t_.Out("dir") + "'))"}, "");
  EXPECT_NE(r.status, 0);
  EXPECT_TRUE(Has(r.err, "refused opendir: read " + t_.Out("dir"))) << r.err;
  r = Run({"ls", t_.ws()}, "");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(Has(r.out, "inside.txt")) << r.out;
  EXPECT_FALSE(Has(r.err, "refused")) << r.err;
}

TEST_F(PreloadRun, RipgrepReadsInsideAndIsRefusedOutside) {
  RunResult r = Run({"rg", "--no-config", "-n", "needle", "."});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(Has(r.out, "inside.txt:1:needle inside")) << r.out;
  r = Run({"rg", "--no-config", "-n", "needle", t_.Out("secret.txt")});
  EXPECT_NE(r.status, 0);
  EXPECT_FALSE(Has(r.out, "secret")) << r.out;
  EXPECT_TRUE(Has(r.err, "(\"" + t_.Out("secret.txt") +
                             "\") for reading: outside the workspace and the read-only set"))
      << r.err;
}

// The tool's account goes to the audit log beside the supervisor's own
// records, marked untrusted.
TEST_F(PreloadRun, ReportsReachTheAuditLogAsUntrustedHints) {
  std::string log = t_.Out("audit.jsonl");
  RunResult r = RunCordon({"run", "--workspace", t_.ws(), "--audit", log, "--", "/bin/sh", "-c",
                           "cat inside.txt; cat " + t_.Out("secret.txt") + "; true"});
  EXPECT_EQ(r.status, 0) << r.err;
  std::string text = ReadFile(log);
  EXPECT_TRUE(Has(text, R"("kind":"hint")")) << text;
  EXPECT_TRUE(Has(text, R"("trusted":false)")) << text;
  EXPECT_TRUE(Has(text, R"("path":"inside.txt")")) << text;
  EXPECT_TRUE(Has(text, "\"path\":\"" + t_.Out("secret.txt") + "\"")) << text;
  EXPECT_TRUE(Has(text, R"("verdict":"refused")")) << text;
  EXPECT_TRUE(Has(text, R"("summary":")")) << text;
  EXPECT_EQ(RunCordon({"audit", "verify", log}).status, 0);
}

// Reports cost the tool a record per call: every call is reported only when
// someone tallies them (the audit log, --log-level info). A quiet run gets
// a channel for refusals alone, which the supervisor says to the user.
TEST_F(PreloadRun, RefusalsAloneAreReportedWithoutATally) {
  const std::vector<std::string> env_cmd = {"/bin/sh", "-c", "env; cat " + t_.Out("secret.txt")};
  RunResult quiet = Run(env_cmd, "");
  EXPECT_NE(quiet.status, 0) << "the preload still refuses";
  EXPECT_TRUE(Has(quiet.out, "LD_PRELOAD=")) << quiet.out;
  EXPECT_TRUE(Has(quiet.out, "CORDON_REPORT_MODE=refused")) << quiet.out;
  EXPECT_TRUE(Has(quiet.err, "refused open: read " + t_.Out("secret.txt"))) << quiet.err;
  EXPECT_FALSE(Has(quiet.err, "preload reports: ")) << "no tally: " << quiet.err;
  RunResult info = Run(env_cmd, "info");
  EXPECT_TRUE(Has(info.out, "CORDON_REPORT_FD=")) << info.out;
  EXPECT_FALSE(Has(info.out, "CORDON_REPORT_MODE=")) << info.out;
  EXPECT_TRUE(Has(info.err, "preload reports: ")) << "the summary: " << info.err;
  RunResult audited = RunCordon({"run", "--workspace", t_.ws(), "--audit", t_.Out("audit.jsonl"),
                                 "--", "/bin/sh", "-c", "env"});
  EXPECT_EQ(audited.status, 0) << audited.err;
  EXPECT_TRUE(Has(audited.out, "CORDON_REPORT_FD=")) << audited.out;
}

TEST_F(PreloadRun, CopyMoveRemoveOutsideRefusedInsideWork) {
  RunResult r = Run({"cp", "inside.txt", t_.Out("copy.txt")});
  EXPECT_NE(r.status, 0);
  EXPECT_TRUE(Has(r.err, "\") for writing: mutation outside the workspace [EACCES]")) << r.err;
  EXPECT_FALSE(Exists(t_.Out("copy.txt")));
  r = Run({"mv", "inside.txt", t_.Out("moved.txt")});
  EXPECT_NE(r.status, 0);
  EXPECT_TRUE(Has(r.err, "refused renameat")) << r.err;
  EXPECT_FALSE(Exists(t_.Out("moved.txt")));
  EXPECT_TRUE(Exists(t_.Ws("inside.txt")));
  r = Run({"rm", "-f", t_.Out("secret.txt")});
  EXPECT_NE(r.status, 0);
  EXPECT_TRUE(Has(r.err, "refused unlinkat(\"" + t_.Out("secret.txt") + "\") for writing")) << r.err;
  EXPECT_EQ(ReadFile(t_.Out("secret.txt")), "needle secret\n");

  // One run: a file born in it may be deleted freely (an older one would
  // need an approval from the supervisor, which is not the preload's rule).
  r = Run({"/bin/sh", "-c", "cp inside.txt copy.txt && mv copy.txt a/moved.txt && "
                            "cat a/moved.txt && rm a/moved.txt"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "needle inside\n");
  EXPECT_FALSE(Exists(t_.Ws("a/moved.txt")));
}

TEST_F(PreloadRun, PythonIsRefusedOutsideAndWritesInside) {
  if (!HavePython()) GTEST_SKIP() << "no /usr/bin/python3";
  RunResult r = Run({"/usr/bin/python3", "-S", "-c",
                     "open('made.txt','w').write('py\\n')\n"
                     "try:\n  open('" + t_.Out("py.txt") + "','w')\nexcept PermissionError:\n"
                     "  print('refused')\n"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "refused\n");
  EXPECT_EQ(ReadFile(t_.Ws("made.txt")), "py\n");
  EXPECT_FALSE(Exists(t_.Out("py.txt")));
  EXPECT_TRUE(Has(r.err, "refused open64(\"" + t_.Out("py.txt") + "\") for writing") ||
              Has(r.err, "refused open(\"" + t_.Out("py.txt") + "\") for writing"))
      << r.err;
}

// multiprocessing's locks and queues are POSIX semaphores in /dev/shm: a
// process pool works under the strict default, read-only profile included.
TEST_F(PreloadRun, PythonProcessPoolsWork) {
  if (!HavePython()) GTEST_SKIP() << "SKIPPED LOUDLY: no /usr/bin/python3";
  RunResult r = Run({"/usr/bin/python3", "-c",
                     "import multiprocessing as mp, concurrent.futures as cf\n"
                     "def sq(x): return x * x\n"
                     "if __name__ == '__main__':\n"
                     "  with mp.Pool(2) as p: print(p.map(sq, [1, 2, 3]))\n"
                     "  with cf.ProcessPoolExecutor(2) as ex: print(list(ex.map(sq, [4, 5])))\n"},
                    "", {}, "read-only");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "[1, 4, 9]\n[16, 25]\n");
}

// "preload reports: R received (F refused), D dropped by the tool, U unaccounted, ..."
struct Tally {
  long received = -1, dropped = -1, unaccounted = -1, exited = -1;
};
Tally ParseTally(const std::string& err) {
  std::smatch m;
  std::regex re(
      R"(preload reports: (\d+) received \(\d+ refused\), (\d+) dropped by the tool, (\d+) unaccounted, \d+ malformed, \d+ processes \((\d+) reported exit\))");
  Tally t;
  if (std::regex_search(err, m, re)) {
    t.received = std::stol(m[1]);
    t.dropped = std::stol(m[2]);
    t.unaccounted = std::stol(m[3]);
    t.exited = std::stol(m[4]);
  }
  return t;
}

TEST_F(PreloadRun, SixteenThreadsTimesTenThousandOpensAreAllAccountedFor) {
  RunResult r = Run({PRELOAD_STRESS, "threads", "16", "10000", "inside.txt"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "calls 160000\n");
  Tally t = ParseTally(r.err);
  ASSERT_GE(t.received, 0) << r.err;
  EXPECT_EQ(t.exited, 1);
  EXPECT_EQ(t.received + t.dropped, 160000) << r.err;
  EXPECT_EQ(t.unaccounted, 0);
}

TEST_F(PreloadRun, ForkExecAndSignalHandlersFinish) {
  RunResult r = Run({PRELOAD_STRESS, "forkexec", "100", PROBE_DYNAMIC, "read", "inside.txt"});
  EXPECT_EQ(r.status, 0) << r.err;
  Tally t = ParseTally(r.err);
  EXPECT_EQ(t.unaccounted, 0) << r.err;
  EXPECT_EQ(t.exited, 201) << "the parent, every forked child at its exec and every probe "
                              "reported its end: "
                           << r.err;
  r = Run({PRELOAD_STRESS, "signals", "200000", "inside.txt"});
  EXPECT_EQ(r.status, 0) << r.err;
  t = ParseTally(r.err);
  EXPECT_EQ(t.unaccounted, 0) << r.err;
}

// A vfork child's calls are its parent's (shared memory): counted and sent
// once, with no end record of their own; the probe it execs reports its end.
TEST_F(PreloadRun, VforkChildrenAreCountedOnce) {
  RunResult r = Run({PRELOAD_STRESS, "vfork", "50", PROBE_DYNAMIC, "read", "inside.txt"});
  ASSERT_EQ(r.status, 0) << r.err;
  Tally t = ParseTally(r.err);
  EXPECT_EQ(t.unaccounted, 0) << r.err;
  EXPECT_EQ(t.exited, 51) << r.err;
}

// A vfork child that closes the report channel before its exec (Python's
// subprocess closes every fd from 3) leaves the parent's batch, which it
// shares, to the parent: nothing is sent on the closed fd and lost.
TEST_F(PreloadRun, AVforkChildClosingItsDescriptorsLosesNoRecordOfTheParent) {
  RunResult r = Run({PRELOAD_STRESS, "vfork-closefds", "50", "/bin/true"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "calls 100\n");
  Tally t = ParseTally(r.err);
  EXPECT_EQ(t.dropped, 0) << r.err;
  EXPECT_EQ(t.unaccounted, 0) << r.err;
  EXPECT_GE(t.received, 100) << r.err;
}

// _exit skips destructors: the preload's _exit sends the batch first.
TEST_F(PreloadRun, ExitWithoutDestructorsLosesNoRecord) {
  RunResult r = Run({PRELOAD_STRESS, "exit", "1000", "inside.txt"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "calls 1000\n");
  Tally t = ParseTally(r.err);
  EXPECT_EQ(t.exited, 1) << r.err;
  EXPECT_EQ(t.received + t.dropped, 1000) << r.err;
  EXPECT_EQ(t.unaccounted, 0) << r.err;
}

// Shell scripts write to /dev/stderr: a descriptor the tool holds may be
// reopened with the access it has, by the preload's rule and by the
// supervisor's (the static probe skips the preload).
TEST_F(PreloadRun, StdioAliasesWorkAsOutside) {
  RunResult r = Run({"/bin/sh", "-c", "echo to-stderr > /dev/stderr; echo to-stdout > /dev/fd/1"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(Has(r.err, "to-stderr\n")) << r.err;
  EXPECT_EQ(r.out, "to-stdout\n");
  for (const char* probe : {PROBE_DYNAMIC, PROBE_STATIC}) {
    r = Run({probe, "reopen", "-", "/proc/self/fd/", "w"});
    EXPECT_EQ(r.status, 0) << probe << ": " << r.err;
    EXPECT_EQ(r.out, "reopened\n") << probe;
    r = Run({probe, "reopen", "/dev/null", "/dev/fd/", "r"});
    EXPECT_EQ(r.status, 0) << probe << ": " << r.err;
  }
}

// The same aliases are no way to write a file the tool may only read.
TEST_F(PreloadRun, AHeldReadOnlyFileCannotBeReopenedForWriting) {
  for (const char* probe : {PROBE_DYNAMIC, PROBE_STATIC}) {
    for (const char* prefix : {"/dev/fd/", "/proc/self/fd/"}) {
      for (const char* mode : {"w", "rw"}) {
        std::vector<std::string> args = {"--log-level", "info", "run", "--workspace", t_.ws(),
                                         "--ro", ProbeDir(), "--ro", t_.outside(), "--profile",
                                         "workspace-write", "--", probe, "reopen",
                                         t_.Out("secret.txt"), prefix, mode};
        RunResult r = RunCordon(args);
        EXPECT_EQ(r.status, EACCES) << probe << " " << prefix << " " << mode << ": " << r.err;
        EXPECT_EQ(ReadFile(t_.Out("secret.txt")), "needle secret\n");
      }
      // Reading it again is what it already may do.
      RunResult r = RunCordon({"run", "--workspace", t_.ws(), "--ro", ProbeDir(), "--ro",
                               t_.outside(), "--", probe, "reopen", t_.Out("secret.txt"), prefix,
                               "r"});
      EXPECT_EQ(r.status, 0) << probe << " " << prefix << ": " << r.err;
    }
  }
  RunResult r = Run({PROBE_DYNAMIC, "reopen", "/dev/null", "/dev/fd/", "w"});
  EXPECT_EQ(r.status, EACCES) << "/dev/null held read-only: " << r.err;
  EXPECT_TRUE(Has(r.err, "the descriptor it names is not open for that access")) << r.err;
}

TEST_F(PreloadRun, WithoutThePreloadTheKernelStillHolds) {
  // The preload removed inside the tool: writes and reads outside still fail.
  RunResult r = Run({"/usr/bin/env", "-u", "LD_PRELOAD", PROBE_DYNAMIC, "write", t_.Out("secret.txt")});
  EXPECT_EQ(r.status, EACCES) << r.err;
  r = Run({"/usr/bin/env", "-u", "LD_PRELOAD", PROBE_DYNAMIC, "read", t_.Out("secret.txt")});
  EXPECT_EQ(r.status, EACCES) << r.err;
  r = Run({"/usr/bin/env", "-u", "LD_PRELOAD", PROBE_DYNAMIC, "unlink", t_.Out("secret.txt")});
  EXPECT_EQ(r.status, EACCES) << r.err;
  EXPECT_EQ(ReadFile(t_.Out("secret.txt")), "needle secret\n");
  // Honest work inside still goes through without it.
  r = Run({"/usr/bin/env", "-u", "LD_PRELOAD", PROBE_DYNAMIC, "write", t_.Ws("plain.txt")});
  EXPECT_EQ(r.status, 0) << r.err;
  // The static probe never sees the preload: cordon says so, and the kernel holds.
  r = Run({PROBE_STATIC, "write", t_.Out("secret.txt")});
  EXPECT_EQ(r.status, EACCES) << r.err;
  EXPECT_TRUE(Has(r.err, "kernel enforcement only")) << r.err;
  r = Run({PROBE_STATIC, "read", t_.Out("secret.txt")});
  EXPECT_EQ(r.status, EACCES) << r.err;
  EXPECT_EQ(ReadFile(t_.Out("secret.txt")), "needle secret\n");
  // exec'ing the static binary from a preloaded shell: the same.
  r = Run({"/bin/sh", "-c", std::string(PROBE_STATIC) + " write " + t_.Out("secret.txt")});
  EXPECT_EQ(r.status, EACCES) << r.err;
  EXPECT_EQ(ReadFile(t_.Out("secret.txt")), "needle secret\n");
}

}  // namespace
}  // namespace cordon::testing
