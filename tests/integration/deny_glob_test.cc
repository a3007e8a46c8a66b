// Issue 24 item 9, "deny globs that hold": `--deny-glob '**/.env'` on a
// workspace with .env files at depths 1, 4 and 12 and one the run tries to
// make: none is readable by a dynamic tool (cat, through the preload) nor by
// the static probe (raw syscalls, no preload), on both rungs and under both
// profiles; .envrc and env.txt beside them are. A match cannot be made by
// create, mkdir, rename or link; a glob that looks at directory names makes
// directory renames EXDEV; a scan that cannot see the whole workspace
// refuses the run. Real cordon binary, real Landlock; ground truth is what
// the tool read and what is on disk afterwards.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "tests/support/test_env.h"

namespace cordon::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

void MakeDirs(const std::string& path) {
  for (size_t i = 1; (i = path.find('/', i)) != std::string::npos; ++i) {
    ::mkdir(path.substr(0, i).c_str(), 0755);
  }
}

void Plant(const std::string& path, const std::string& content) {
  MakeDirs(path);
  WriteFile(path, content);
}

std::string Quote(const std::string& s) { return "'" + s + "'"; }

// The workspace-relative .env at depth `n` (1: at the root).
std::string EnvAtDepth(int n) {
  std::string rel;
  for (int i = 1; i < n; ++i) rel += "d" + std::to_string(i) + "/";
  return rel + ".env";
}

struct Rung {
  bool notify_all;
  bool write;
};

class DenyGlobTest : public ::testing::TestWithParam<Rung> {
 protected:
  void SetUp() override {
    for (int depth : {1, 4, 12}) Plant(t_.Ws(EnvAtDepth(depth)), "SECRET-" + std::to_string(depth) + "\n");
    Plant(t_.Ws("d1/d2/d3/.envrc"), "ENVRC-OK\n");
    Plant(t_.Ws("d1/env.txt"), "ENVTXT-OK\n");
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

  ScratchTree t_;
};

TEST_P(DenyGlobTest, NoMatchAtAnyDepthIsReadableAndTheNamesBesideThemAre) {
  const std::vector<std::string> matches = {EnvAtDepth(1), EnvAtDepth(4), EnvAtDepth(12)};
  RunResult r = Run({"--deny-glob", "**/.env"},
                    Reads(matches) + Reads({"d1/d2/d3/.envrc", "d1/env.txt"}) + "echo done");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("done"));
  for (const std::string& m : matches) {
    EXPECT_THAT(r.out, Not(HasSubstr("SECRET-"))) << r.out;
    EXPECT_THAT(r.out, HasSubstr("static:" + m + ":")) << m;
    EXPECT_THAT(r.out, Not(HasSubstr("static:" + m + ":0\n"))) << "the static probe read " << m;
  }
  EXPECT_THAT(r.out, HasSubstr("ENVRC-OK"));
  EXPECT_THAT(r.out, HasSubstr("ENVTXT-OK"));
  EXPECT_THAT(r.out, HasSubstr("static:d1/d2/d3/.envrc:0\n"));
  EXPECT_THAT(r.out, HasSubstr("static:d1/env.txt:0\n"));
}

TEST_P(DenyGlobTest, AnotherNameOfAMatchIsDeniedWithIt) {
  // A hard link made before the run reads the same file by a name no glob
  // matches: the scan finds it by its inode.
  MakeDirs(t_.Ws("notes/"));
  ASSERT_EQ(::link(t_.Ws(EnvAtDepth(4)).c_str(), t_.Ws("notes/innocent.txt").c_str()), 0);
  Plant(t_.Ws("notes/other.txt"), "OTHER-OK\n");
  RunResult r = Run({"--deny-glob", "**/.env"},
                    Reads({"notes/innocent.txt", "notes/other.txt"}) + "echo done");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, Not(HasSubstr("SECRET-4")));
  EXPECT_THAT(r.out, Not(HasSubstr("static:notes/innocent.txt:0\n")));
  EXPECT_THAT(r.out, HasSubstr("OTHER-OK"));
  EXPECT_THAT(r.out, HasSubstr("static:notes/other.txt:0\n"));
}

TEST_P(DenyGlobTest, WithoutTheGlobTheSameFilesAreRead) {
  // The control: what the test above refuses is readable without the glob.
  RunResult r = Run({}, Reads({EnvAtDepth(12)}) + "echo done");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("SECRET-12"));
  EXPECT_THAT(r.out, HasSubstr("static:" + EnvAtDepth(12) + ":0\n"));
}

INSTANTIATE_TEST_SUITE_P(Rungs, DenyGlobTest,
                         ::testing::Values(Rung{false, true}, Rung{true, true}, Rung{false, false},
                                           Rung{true, false}),
                         [](const ::testing::TestParamInfo<Rung>& i) {
                           return std::string(i.param.notify_all ? "notify_all" : "landlock") +
                                  (i.param.write ? "_write" : "_readonly");
                         });

// Under workspace-write: what the run makes, renames and links.
class DenyGlobWriteTest : public DenyGlobTest {};

TEST_P(DenyGlobWriteTest, AMatchMadeDuringTheRunIsRefusedByEveryWay) {
  // Each way to bring a new .env into being, by the static probe (no
  // preload) and by the shell; then a read of each name.
  const std::string script =
      "mkdir -p new/dir && echo plain > new/dir/plain.txt; " + std::string(PROBE_STATIC) +
      " write new/dir/.env; echo \"create:$?\"; "
      "echo SECRET-NEW > new/.env 2>/dev/null; echo \"shell:$?\"; "
      "mv new/dir/plain.txt new/dir/.env 2>/dev/null; echo \"mv:$?\"; "
      "ln new/dir/plain.txt new/.env 2>/dev/null; echo \"ln:$?\"; "
      "ln -s plain.txt new/dir/.env 2>/dev/null; echo \"symlink:$?\"; "
      "mkdir new/.env 2>/dev/null; echo \"mkdir:$?\"; "
      "ln -s .env new/lnk && echo SECRET-NEW > new/lnk 2>/dev/null; echo \"through-link:$?\"; " +
      Reads({"new/dir/.env", "new/.env"}) + "echo done";
  RunResult r = Run({"--deny-glob", "**/.env"}, script);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("done"));
  for (const char* way : {"create", "shell", "mv", "ln", "symlink", "mkdir", "through-link"}) {
    EXPECT_THAT(r.out, HasSubstr(std::string(way) + ":")) << way;
    EXPECT_THAT(r.out, Not(HasSubstr(std::string(way) + ":0\n"))) << way << " made a match";
  }
  EXPECT_THAT(r.out, Not(HasSubstr("SECRET-NEW")));
  EXPECT_FALSE(Exists(t_.Ws("new/dir/.env")));
  EXPECT_FALSE(Exists(t_.Ws("new/.env")));
  // The honest neighbour: the file beside it was made, and is still there.
  EXPECT_EQ(ReadFile(t_.Ws("new/dir/plain.txt")), "plain\n");
}

TEST_P(DenyGlobWriteTest, LinksKernelStillSendsTheCreatingOpenToTheSupervisor) {
  // links: kernel leaves write opens to Landlock, which sees no names: with
  // a deny glob they are notified all the same.
  const std::string policy = t_.Out("links-kernel.json");
  WriteFile(policy, R"({"links":"kernel"})");
  RunResult r = Run({"--policy", policy, "--deny-glob", "**/.env"},
                    std::string(PROBE_STATIC) + " write sub.env; echo \"honest:$?\"; " +
                        PROBE_STATIC + " write d1/.env.new; " + PROBE_STATIC +
                        " write d1/d2/.env; echo \"create:$?\"");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("honest:0\n"));
  EXPECT_THAT(r.out, HasSubstr("create:13\n"));  // EACCES
  EXPECT_FALSE(Exists(t_.Ws("d1/d2/.env")));
  EXPECT_TRUE(Exists(t_.Ws("sub.env")));
}

TEST_P(DenyGlobWriteTest, AGlobOnDirectoryNamesMakesDirectoryRenamesCopy) {
  Plant(t_.Ws("keys/a.pem"), "PEM\n");
  Plant(t_.Ws("logs/x.txt"), "LOG\n");
  const std::string rename =
      "python3 -c 'import os,sys\ntry: os.rename(sys.argv[1], sys.argv[2]); print(\"ok\")\n"
      "except OSError as e: print(e.errno)' ";
  // Every directory rename, keys -> secrets and logs -> logs2 alike, is
  // EXDEV; a file's rename is decided by its new name.
  RunResult r = Run({"--deny-glob", "secrets/*.pem"}, rename + "keys secrets; " + rename +
                                                          "logs logs2; " + rename +
                                                          "logs/x.txt logs/y.txt; echo done");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("18\n18\nok\ndone"));
  EXPECT_TRUE(Exists(t_.Ws("keys/a.pem")));
  EXPECT_FALSE(Exists(t_.Ws("secrets")));
  EXPECT_TRUE(Exists(t_.Ws("logs/y.txt")));
  // A glob on last names only keeps directory renames.
  RunResult k = Run({"--deny-glob", "**/.env"}, rename + "keys keys2; echo done");
  ASSERT_EQ(k.status, 0) << k.err;
  EXPECT_THAT(k.out, HasSubstr("ok\ndone"));
}

INSTANTIATE_TEST_SUITE_P(Rungs, DenyGlobWriteTest,
                         ::testing::Values(Rung{false, true}, Rung{true, true}),
                         [](const ::testing::TestParamInfo<Rung>& i) {
                           return std::string(i.param.notify_all ? "notify_all" : "landlock");
                         });

// The launch scan's bounds: past them the run is refused whole (125), never
// a glob applied to part of the tree.
class DenyGlobScanTest : public ::testing::Test {
 protected:
  RunResult Run(const std::vector<std::string>& extra) {
    std::vector<std::string> args = {"run", "--workspace", t_.ws(), "--profile", "workspace-write"};
    args.insert(args.end(), extra.begin(), extra.end());
    args.insert(args.end(), {"--", "true"});
    return RunCordon(args, t_.ws());
  }
  ScratchTree t_;
};

TEST_F(DenyGlobScanTest, MoreEntriesThanTheBoundRefusesTheRun) {
  for (int i = 0; i < 10; ++i) WriteFile(t_.Ws("f" + std::to_string(i)), "x");
  const std::string policy = t_.Out("policy.json");
  WriteFile(policy, R"({"limits":{"scanEntries":5}})");
  RunResult r = Run({"--policy", policy, "--deny-glob", "**/.env"});
  EXPECT_EQ(r.status, 125);
  EXPECT_THAT(r.err, HasSubstr("more than 5 entries; raise limits.scanEntries"));
  // The bound is the launch scan's, which every run makes (it looks for
  // hard-linked and special files too: hard_links_test.cc): a larger one runs.
  WriteFile(policy, R"({"limits":{"scanEntries":20}})");
  EXPECT_EQ(Run({"--policy", policy, "--deny-glob", "**/.env"}).status, 0);
}

TEST_F(DenyGlobScanTest, DeeperThanTheBoundRefusesTheRun) {
  std::string deep = t_.ws();
  for (int i = 0; i < 70; ++i) deep += "/d";
  MakeDirs(deep + "/");
  RunResult r = Run({"--deny-glob", "**/.env"});
  EXPECT_EQ(r.status, 125);
  EXPECT_THAT(r.err, HasSubstr("deeper than 64 levels"));
}

TEST_F(DenyGlobScanTest, BadPatternsGetAClearError) {
  RunResult abs = Run({"--deny-glob", "/etc/**/.env"});
  EXPECT_EQ(abs.status, 125);
  EXPECT_THAT(abs.err, HasSubstr("relative to the workspace"));
  RunResult all = Run({"--deny-glob", "**"});
  EXPECT_EQ(all.status, 125);
  EXPECT_THAT(all.err, HasSubstr("whole workspace"));
  RunResult deny = Run({"--deny", "*.pem"});
  EXPECT_EQ(deny.status, 125);
  EXPECT_THAT(deny.err, HasSubstr("--deny-glob"));
  // A relative --deny is the caller's: from its current directory (once an
  // abort in the loader).
  RunResult rel = Run({"--deny", "missing-file"});
  EXPECT_EQ(rel.status, 0) << rel.err;
}

TEST_F(DenyGlobScanTest, ExplainListsTheGlobsAndWhatTheyMatchNow) {
  Plant(t_.Ws("a/.env"), "x");
  const std::string policy = t_.Out("policy.json");
  WriteFile(policy, R"({"sandbox":{"filesystem":{"deniedPaths":["**/.env"]}}})");
  RunResult r = RunCordon({"policy", "explain", policy, "--workspace", t_.ws()});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("Deny globs"));
  EXPECT_THAT(r.out, HasSubstr("patterns: **/.env"));
  EXPECT_THAT(r.out, HasSubstr("/a/.env"));
}

}  // namespace
}  // namespace cordon::testing
