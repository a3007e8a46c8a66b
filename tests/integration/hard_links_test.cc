// Issue 27 item 8, hard-linked and special files refused for reads too: a
// regular file in the workspace that is a hard link to a file outside it,
// made before the run, is read by neither a dynamic tool (cat, through the
// preload) nor the static probe (raw syscalls), on both rungs and under
// both profiles; an ordinary file beside it is. `hardLinks:
// "inside-workspace"` keeps a link whose every name is in the workspace and
// still refuses the one that reaches outside. A FIFO in the workspace (a
// chroot's dev/) is refused without being waited on. Real cordon binary,
// real Landlock; ground truth is what the tool read, what is on disk and
// what the audit log says afterwards.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/test_env.h"

namespace cordon::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

std::string Quote(const std::string& s) { return "'" + s + "'"; }

struct Rung {
  bool notify_all;
  bool write;
};

class HardLinksTest : public ::testing::TestWithParam<Rung> {
 protected:
  void SetUp() override {
    // The outside file the policy does not grant, and its second name in
    // the workspace; an ordinary file beside it; a pair of names both in
    // the workspace.
    WriteFile(t_.Out("secret"), "OUTSIDE-SECRET\n");
    ASSERT_EQ(::mkdir(t_.Ws("src").c_str(), 0755), 0);
    ASSERT_EQ(::link(t_.Out("secret").c_str(), t_.Ws("src/linked.txt").c_str()), 0);
    WriteFile(t_.Ws("src/plain.txt"), "PLAIN-OK\n");
    WriteFile(t_.Ws("src/pair-a.txt"), "PAIR-OK\n");
    ASSERT_EQ(::link(t_.Ws("src/pair-a.txt").c_str(), t_.Ws("pair-b.txt").c_str()), 0);
  }

  RunResult Run(const std::vector<std::string>& extra, const std::string& script) {
    std::vector<std::string> args = {"run", "--workspace", t_.ws(), "--ro", ProbeDir(),
                                     "--profile", GetParam().write ? "workspace-write" : "read-only"};
    args.insert(args.end(), extra.begin(), extra.end());
    if (GetParam().notify_all) args.push_back("--test-force-notify-all");
    args.insert(args.end(), {"--", "sh", "-c", script});
    return RunCordon(args, t_.ws());
  }

  // cat, then the static probe's read, which prints "static:REL:STATUS".
  static std::string Reads(const std::vector<std::string>& rels) {
    std::string s;
    for (const std::string& r : rels) {
      s += "cat " + Quote(r) + " 2>/dev/null; " + PROBE_STATIC + " read " + Quote(r) +
           "; echo \"static:" + r + ":$?\"; ";
    }
    return s;
  }

  std::string Policy(const std::string& json) {
    const std::string path = t_.root() + "/policy.json";
    WriteFile(path, json);
    return path;
  }

  ScratchTree t_;
};

TEST_P(HardLinksTest, ALinkToAnOutsideFileIsNotReadAndTheFileBesideItIs) {
  const std::string audit = t_.root() + "/audit.jsonl";
  RunResult r = Run({"--audit", audit}, Reads({"src/linked.txt", "src/plain.txt"}) + "echo done");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("done"));
  EXPECT_THAT(r.out, Not(HasSubstr("OUTSIDE-SECRET")));
  EXPECT_THAT(r.out, HasSubstr("static:src/linked.txt:13\n"));  // EACCES
  // The honest neighbour: the ordinary file in the same directory reads.
  EXPECT_THAT(r.out, HasSubstr("PLAIN-OK"));
  EXPECT_THAT(r.out, HasSubstr("static:src/plain.txt:0\n"));
  // The disk: both names still there, the outside file unchanged.
  EXPECT_EQ(ReadFile(t_.Out("secret")), "OUTSIDE-SECRET\n");
  EXPECT_EQ(ReadFile(t_.Ws("src/linked.txt")), "OUTSIDE-SECRET\n");
  // The audit log: its header names what the grant left out, and why (the
  // ordinary file is not listed); a later record says the read was refused.
  const std::string log = ReadFile(audit);
  std::istringstream lines(log);
  std::string header, line, refusals;
  std::getline(lines, header);
  const std::size_t at = header.find("\"refused_entries\":[");
  ASSERT_NE(at, std::string::npos) << header;
  const std::string listed = header.substr(at, header.find(']', at) - at);
  EXPECT_THAT(listed, HasSubstr("{\"path\":\"" + t_.ws() +
                                "/src/linked.txt\",\"why\":\"hard link: 2 names, 1 found in "
                                "the workspace\"}"));
  EXPECT_THAT(listed, Not(HasSubstr("plain.txt")));
  while (std::getline(lines, line)) {
    if (line.find("/src/linked.txt") != std::string::npos) refusals += line + "\n";
  }
  EXPECT_THAT(refusals, HasSubstr("refused")) << log;
  EXPECT_THAT(refusals, Not(HasSubstr("\"allowed\""))) << log;
  EXPECT_EQ(RunCordon({"audit", "verify", audit}).status, 0);
}

TEST_P(HardLinksTest, WritesThroughTheLinkAreRefusedAndTheOutsideFileIsUnchanged) {
  RunResult r = Run({}, std::string(PROBE_STATIC) + " overwrite src/linked.txt; echo \"w:$?\"; " +
                            PROBE_STATIC + " chmod src/linked.txt; echo \"chmod:$?\"; " +
                            PROBE_STATIC + " truncate src/linked.txt; echo \"trunc:$?\"; echo done");
  ASSERT_EQ(r.status, 0) << r.err;
  for (const char* op : {"w:", "chmod:", "trunc:"}) {
    EXPECT_THAT(r.out, HasSubstr(op)) << op;
    EXPECT_THAT(r.out, Not(HasSubstr(std::string(op) + "0\n"))) << op;
  }
  EXPECT_EQ(ReadFile(t_.Out("secret")), "OUTSIDE-SECRET\n");
  struct stat st;
  ASSERT_EQ(::stat(t_.Out("secret").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0644u);
}

TEST_P(HardLinksTest, InsideWorkspaceKeepsAPairWhoseNamesAreAllInside) {
  const std::string script = Reads({"src/linked.txt", "src/pair-a.txt", "pair-b.txt"}) + "echo done";
  // The default refuses the pair too: each name is a hard link.
  RunResult def = Run({}, script);
  ASSERT_EQ(def.status, 0) << def.err;
  EXPECT_THAT(def.out, Not(HasSubstr("PAIR-OK")));
  EXPECT_THAT(def.out, HasSubstr("static:pair-b.txt:13\n"));
  // inside-workspace: the pair reads, the link to the outside still does not.
  RunResult in = Run({"--policy", Policy(R"({"hardLinks":"inside-workspace"})")}, script);
  ASSERT_EQ(in.status, 0) << in.err;
  EXPECT_THAT(in.out, HasSubstr("PAIR-OK"));
  EXPECT_THAT(in.out, HasSubstr("static:src/pair-a.txt:0\n"));
  EXPECT_THAT(in.out, HasSubstr("static:pair-b.txt:0\n"));
  EXPECT_THAT(in.out, Not(HasSubstr("OUTSIDE-SECRET")));
  EXPECT_THAT(in.out, HasSubstr("static:src/linked.txt:13\n"));
}

// A pair whose every name is in the workspace (cargo's target/debug/NAME
// and deps/NAME-HASH) is refused by default with a hint that, followed,
// reads it (--hard-links inside-workspace, this run only); the link to the
// outside file is refused with no such hint, and stays refused with it.
TEST_P(HardLinksTest, TheRefusalOfAPairAllInsideNamesTheFlagThatKeepsIt) {
  RunResult def = Run({}, "cat pair-b.txt; cat src/linked.txt; echo done");
  ASSERT_EQ(def.status, 0) << def.err;
  EXPECT_THAT(def.out, Not(HasSubstr("PAIR-OK")));
  const std::string pair_line =
      "read " + t_.Ws("pair-b.txt") + " (hard link, every name in the workspace)";
  EXPECT_THAT(def.err, HasSubstr(pair_line)) << def.err;
  EXPECT_THAT(def.err, HasSubstr("to allow it: --hard-links inside-workspace")) << def.err;
  const size_t outside =
      def.err.find("read " + t_.Ws("src/linked.txt") + " (hard-linked or special file)");
  ASSERT_NE(outside, std::string::npos) << def.err;
  const std::string outside_line = def.err.substr(outside, def.err.find('\n', outside) - outside);
  EXPECT_THAT(outside_line, Not(HasSubstr("--hard-links"))) << outside_line;
  RunResult in = Run({"--hard-links", "inside-workspace"},
                     Reads({"pair-b.txt", "src/linked.txt"}) + "echo done");
  ASSERT_EQ(in.status, 0) << in.err;
  EXPECT_THAT(in.out, HasSubstr("PAIR-OK"));
  EXPECT_THAT(in.out, HasSubstr("static:pair-b.txt:0\n"));
  EXPECT_THAT(in.out, Not(HasSubstr("OUTSIDE-SECRET")));
  EXPECT_THAT(in.out, HasSubstr("static:src/linked.txt:13\n"));
}

// A command that is a refused hard link says so, with the hint that keeps
// it, not a grant of its directory (which would not).
TEST_P(HardLinksTest, ACommandThatIsARefusedPairSaysWhatKeepsIt) {
  ASSERT_EQ(std::system(("cp /bin/true " + t_.Ws("tool") + " && ln " + t_.Ws("tool") + " " +
                         t_.Ws("src/tool-copy"))
                            .c_str()),
            0);
  std::vector<std::string> args = {"run", "--workspace", t_.ws(), "--profile",
                                   GetParam().write ? "workspace-write" : "read-only"};
  if (GetParam().notify_all) args.push_back("--test-force-notify-all");
  std::vector<std::string> with = args;
  args.insert(args.end(), {"--", "./tool"});
  RunResult r = RunCordon(args, t_.ws());
  EXPECT_EQ(r.status, 126) << r.err;
  EXPECT_THAT(r.err, HasSubstr("(hard link, every name in the workspace)")) << r.err;
  EXPECT_THAT(r.err, HasSubstr("to allow it: --hard-links inside-workspace")) << r.err;
  EXPECT_THAT(r.err, Not(HasSubstr("would grant it"))) << r.err;
  with.insert(with.end(), {"--hard-links", "inside-workspace", "--", "./tool"});
  RunResult ok = RunCordon(with, t_.ws());
  EXPECT_EQ(ok.status, 0) << ok.err;
}

// A program made in the run beside a refused entry cannot run on the
// Landlock rung (exec needs READ_FILE, which the carve-out takes from the
// directories on the way to it): the refusal names the entry and how to be
// rid of it, not only a shell's way in, which an ELF binary has not. A
// program beside it that existed at launch runs, and the link stays unread.
TEST_P(HardLinksTest, AProgramMadeBesideARefusedEntrySaysWhyItCannotRun) {
  ASSERT_EQ(std::system(("cp /bin/true " + t_.Ws("src/old")).c_str()), 0);
  RunResult r = Run({},
                    "src/old && echo old-ran; cp /bin/true made && ./made && echo made-ran; "
                    "cat src/linked.txt; true");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("old-ran")) << r.err;
  EXPECT_THAT(r.out, Not(HasSubstr("OUTSIDE-SECRET")));
  if (!GetParam().write || GetParam().notify_all) return;  // nothing made; no Landlock
  EXPECT_THAT(r.out, Not(HasSubstr("made-ran")));
  // The first of the three refused (sorted): the pair's outer name.
  EXPECT_THAT(r.err, HasSubstr(t_.Ws("pair-b.txt") + " and 2 more: hard-linked or special file"))
      << r.err;
  EXPECT_THAT(r.err, HasSubstr("git repack -a -d")) << r.err;
}

TEST_P(HardLinksTest, AFifoInTheWorkspaceIsRefusedNotWaitedOn) {
  // A chroot's dev/ inside the workspace: the FIFO is out of the grant, so
  // the open fails at once rather than waiting for a writer (the probe's
  // alarm would end it with SIGALRM, status 142).
  ASSERT_EQ(::mkdir(t_.Ws("chroot").c_str(), 0755), 0);
  ASSERT_EQ(::mkdir(t_.Ws("chroot/dev").c_str(), 0755), 0);
  ASSERT_EQ(::mkfifo(t_.Ws("chroot/dev/fifo").c_str(), 0644), 0);
  WriteFile(t_.Ws("chroot/dev/README"), "README-OK\n");
  RunResult r = Run({}, std::string(PROBE_STATIC) + " open-nohang chroot/dev/fifo r; echo \"fifo:$?\"; " +
                            Reads({"chroot/dev/README"}) + "echo done");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("fifo:13\n"));
  EXPECT_THAT(r.out, HasSubstr("README-OK"));
  EXPECT_THAT(r.out, HasSubstr("static:chroot/dev/README:0\n"));
}

INSTANTIATE_TEST_SUITE_P(Rungs, HardLinksTest,
                         ::testing::Values(Rung{false, true}, Rung{true, true}, Rung{false, false},
                                           Rung{true, false}),
                         [](const ::testing::TestParamInfo<Rung>& i) {
                           return std::string(i.param.notify_all ? "notify_all" : "landlock") +
                                  (i.param.write ? "_write" : "_readonly");
                         });

// explain, bad input and the scan's bound.
class HardLinksPolicyTest : public ::testing::Test {
 protected:
  ScratchTree t_;
};

TEST_F(HardLinksPolicyTest, ExplainListsWhatIsLeftOutAndWhy) {
  WriteFile(t_.Out("secret"), "x");
  ASSERT_EQ(::link(t_.Out("secret").c_str(), t_.Ws("linked.txt").c_str()), 0);
  ASSERT_EQ(::mkfifo(t_.Ws("fifo").c_str(), 0644), 0);
  WriteFile(t_.Ws("plain.txt"), "x");
  RunResult r = RunCordon({"policy", "explain", "--workspace", t_.ws()});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("Hard-linked and special files"));
  EXPECT_THAT(r.out, HasSubstr("hardLinks: refuse"));
  EXPECT_THAT(r.out, HasSubstr("found now: " + t_.ws() + "/linked.txt (hard link: 2 names, 1 found"));
  EXPECT_THAT(r.out, HasSubstr("found now: " + t_.ws() + "/fifo (special file: a FIFO)"));
  EXPECT_THAT(r.out, Not(HasSubstr("plain.txt")));
}

TEST_F(HardLinksPolicyTest, ABadSettingIsAClearErrorAndNothingRuns) {
  const std::string policy = t_.root() + "/policy.json";
  WriteFile(policy, R"({"hardLinks":"allow"})");
  RunResult r = RunCordon({"run", "--workspace", t_.ws(), "--policy", policy, "--profile",
                           "workspace-write", "--", "sh", "-c", "echo ran > made.txt"},
                          t_.ws());
  EXPECT_EQ(r.status, 125);
  EXPECT_THAT(r.err, HasSubstr("/hardLinks: must be \"refuse\" or \"inside-workspace\""));
  EXPECT_FALSE(Exists(t_.Ws("made.txt")));
}

TEST_F(HardLinksPolicyTest, AWorkspacePastTheScanBoundIsRefusedWhole) {
  for (int i = 0; i < 10; ++i) WriteFile(t_.Ws("f" + std::to_string(i)), "x");
  const std::string policy = t_.root() + "/policy.json";
  WriteFile(policy, R"({"limits":{"scanEntries":5}})");
  RunResult r = RunCordon({"run", "--workspace", t_.ws(), "--policy", policy, "--profile",
                           "workspace-write", "--", "sh", "-c", "echo ran > made.txt"},
                          t_.ws());
  EXPECT_EQ(r.status, 125);
  EXPECT_THAT(r.err, HasSubstr("more than 5 entries; raise limits.scanEntries"));
  EXPECT_FALSE(Exists(t_.Ws("made.txt")));
}

// Runs `cmd` with sh outside the sandbox, with no user or system git
// config; its stdout and stderr.
std::string Sh(const std::string& cmd) {
  return ShOutput(cmd, {"HOME=/nonexistent", "GIT_CONFIG_NOSYSTEM=1"});
}

// The launch scan's cache across real runs (policy/scan_cache.h): the
// second run of an unchanged workspace lists no directory (its debug line
// says so), and a link planted in a directory the cache holds is refused
// on the run after, as on the first.
TEST_F(HardLinksPolicyTest, ALinkPlantedBetweenCachedRunsIsRefusedOnTheNextRun) {
  for (const char* d : {"src", "src/deep", "docs"}) ASSERT_EQ(::mkdir(t_.Ws(d).c_str(), 0755), 0);
  WriteFile(t_.Ws("src/deep/plain.txt"), "PLAIN-OK\n");
  WriteFile(t_.Out("secret"), "OUTSIDE-SECRET\n");
  // Directories changed in the second before a scan are listed again the
  // next time (policy::SettledBefore): let these settle.
  std::this_thread::sleep_for(std::chrono::milliseconds(2200));
  auto run = [&] {
    return RunCordon({"run", "--workspace", t_.ws(), "--log-level", "debug", "--", "sh", "-c",
                      "cat src/deep/plain.txt; cat src/deep/planted 2>/dev/null; echo done"},
                     t_.ws());
  };
  RunResult first = run();
  ASSERT_EQ(first.status, 0) << first.err;
  EXPECT_THAT(first.err, HasSubstr("launch scan: 4 directories listed, 0 unchanged"));
  RunResult second = run();
  EXPECT_THAT(second.err, HasSubstr("launch scan: 0 directories listed, 4 unchanged"));
  ASSERT_EQ(::link(t_.Out("secret").c_str(), t_.Ws("src/deep/planted").c_str()), 0);
  RunResult third = run();
  EXPECT_EQ(third.status, 0) << third.err;
  EXPECT_THAT(third.err, HasSubstr("launch scan: 1 directories listed, 3 unchanged"));
  EXPECT_EQ(third.out, "PLAIN-OK\ndone\n");
  EXPECT_THAT(third.err, HasSubstr("src/deep/planted (hard-linked or special file)"));
  EXPECT_EQ(ReadFile(t_.Out("secret")), "OUTSIDE-SECRET\n");
}

// A local `git clone` hard-links .git/objects to the source outside the
// workspace: git cannot read them, and the refusal line says what to do;
// a clone made with --no-hardlinks works end to end.
TEST_F(HardLinksPolicyTest, GitWorksInANoHardlinksCloneAndTheRefusalOfALinkedOneSaysWhy) {
  const std::string src = t_.Out("src");
  ASSERT_EQ(Sh("git init -q -b main " + src + " && cd " + src + " && echo one > a.txt && git add a.txt "
               "&& git -c user.name=t -c user.email=t@t commit -qm first && echo ok"), "ok");
  ASSERT_EQ(Sh("cd " + t_.ws() + " && git clone -q " + src + " linked && git clone -q --no-hardlinks " +
               src + " copied && echo ok"), "ok");
  const std::string git = "git -c user.name=t -c user.email=t@t ";
  RunResult r = RunCordon({"run", "--workspace", t_.ws(), "--profile", "workspace-write", "--",
                           "sh", "-c",
                           "cd copied && echo two > b.txt && " + git + "add b.txt && " + git +
                               "commit -qm second && " + git + "log --format=%s && cd ../linked && " +
                               git + "log --format=%s"},
                          t_.ws());
  EXPECT_NE(r.status, 0);  // the linked clone's log fails
  EXPECT_THAT(r.out, HasSubstr("second\nfirst\n"));
  EXPECT_THAT(r.err, HasSubstr("(hard-linked or special file)"));
  EXPECT_THAT(r.err, HasSubstr("clone with --no-hardlinks"));
  EXPECT_EQ(Sh("git -C " + t_.Ws("copied") + " log --format=%s"), "second\nfirst");
  EXPECT_EQ(Sh("git -C " + t_.Ws("copied") + " status --porcelain"), "");
}

// The cache decides what a later run leaves readable: the tool may not
// write it, even where the policy grants the state home around it.
TEST_F(HardLinksPolicyTest, TheToolCannotWriteTheScanCacheEvenUnderAGrantOfTheStateHome) {
  const std::string state = t_.root() + "/state";
  ASSERT_EQ(::mkdir(state.c_str(), 0700), 0);
  const std::vector<std::string> env = {"XDG_STATE_HOME=" + state};
  RunResult made = RunCordon({"run", "--workspace", t_.ws(), "--", "true"}, t_.ws(), env);
  ASSERT_EQ(made.status, 0) << made.err;
  const std::string scans = state + "/cordon/scans";
  const std::string file = scans + "/" + Sh("printf %s " + t_.ws() + " | sha256sum | cut -c1-64");
  ASSERT_NE(ReadFile(file), "<missing>");
  const std::string before = ReadFile(file);
  RunResult r = RunCordon({"run", "--workspace", t_.ws(), "--profile", "workspace-write", "--rw",
                           state, "--", "sh", "-c",
                           "echo forged > " + file + "; echo x > " + scans + "/new; ls " + scans +
                               "; echo neighbour > " + state + "/mine; echo done"},
                          t_.ws(), env);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("done"));
  EXPECT_EQ(ReadFile(file), before);
  EXPECT_EQ(ReadFile(scans + "/new"), "<missing>");
  EXPECT_EQ(ReadFile(state + "/mine"), "neighbour\n");  // the grant around it holds
}

}  // namespace
}  // namespace cordon::testing
