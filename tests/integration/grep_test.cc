// cordon grep / glob and the exec allowlist end to end: the real cordon, the
// real ripgrep, the real kernel. Ground truth is bare rg on the same tree
// and marker files a hostile preprocessor would leave.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <regex>
#include <sstream>

#include "tests/support/child_process.h"
#include "tests/support/test_env.h"

namespace cordon::testing {
namespace {

constexpr const char* kRg = "/usr/bin/rg";

std::vector<std::string> SortedLines(const std::string& s) {
  std::vector<std::string> v;
  std::stringstream ss(s);
  for (std::string l; std::getline(ss, l);) v.push_back(l);
  std::sort(v.begin(), v.end());
  return v;
}

// ripgrep's JSON output less the elapsed times, which differ run to run.
std::string WithoutTimings(const std::string& s) {
  static const std::regex kElapsed(R"("elapsed(_total)?":\{[^}]*\},?)");
  return std::regex_replace(s, kElapsed, "");
}

// Bare ripgrep in `cwd`, for comparison.
std::string BareRg(const std::string& cwd, const std::string& args) {
  std::string cmd = "cd '" + cwd + "' && " + kRg + " " + args;
  std::string out;
  FILE* f = ::popen(cmd.c_str(), "r");
  if (f == nullptr) return out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, f)) > 0) out.append(buf, n);
  ::pclose(f);
  return out;
}

class GrepTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::access(kRg, X_OK) != 0) GTEST_SKIP() << "ripgrep not installed at " << kRg;
    ::mkdir(t_.Ws("src").c_str(), 0755);
    ::mkdir(t_.Ws("src/deep").c_str(), 0755);
    WriteFile(t_.Ws("src/a.c"), "int needle_1;\nint other;\n");
    WriteFile(t_.Ws("src/deep/b.h"), "// needle_22 here\n// and --pre=sh too\n");
    WriteFile(t_.Ws("notes.txt"), "no match\nneedle_333\n");
    // A preprocessor that would leave a marker outside if ripgrep ran it.
    marker_ = t_.Out("pre-ran");
    hostile_ = t_.Out("pre.sh");
    WriteFile(hostile_, "#!/bin/sh\ntouch '" + marker_ + "'\ncat \"$1\"\n");
    ::chmod(hostile_.c_str(), 0755);
  }
  RunResult Cordon(std::vector<std::string> args, const std::vector<std::string>& env = {}) {
    return RunCordon(args, t_.ws(), env);
  }
  ScratchTree t_;
  std::string marker_, hostile_;
};

TEST_F(GrepTest, SearchReturnsTheSameMatchesAsBareRipgrep) {
  RunResult r = Cordon({"grep", "--", "needle_[0-9]+"});
  ASSERT_EQ(r.status, 0) << r.err;
  std::string bare = BareRg(t_.ws(), "--no-config -e 'needle_[0-9]+' --");
  EXPECT_EQ(SortedLines(r.out), SortedLines(bare));
  EXPECT_EQ(SortedLines(r.out).size(), 3u);

  RunResult sub = Cordon({"grep", "--", "needle", "src/deep", "notes.txt"});
  ASSERT_EQ(sub.status, 0) << sub.err;
  EXPECT_EQ(SortedLines(sub.out),
            SortedLines(BareRg(t_.ws(), "--no-config -e needle -- src/deep notes.txt")));

  RunResult none = Cordon({"grep", "--", "absent_word"});
  EXPECT_EQ(none.status, 1) << "ripgrep's own status passes through";
}

// A workspace below a repository's root: ripgrep reads the repository's
// ignore files above it (.gitignore up to the root, .git/info/exclude, an
// .ignore), so the file tools print what rg prints there, with no refusal
// line; the rest of the repository stays out of reach.
TEST_F(GrepTest, AWorkspaceInsideARepositoryTakesItsIgnoreFiles) {
  const std::string repo = t_.Out("repo"), sub = repo + "/sub";
  ASSERT_EQ(::mkdir(repo.c_str(), 0755), 0);
  ASSERT_EQ(::mkdir(sub.c_str(), 0755), 0);
  ASSERT_EQ(std::system(("git init -q '" + repo + "'").c_str()), 0);
  WriteFile(repo + "/.gitignore", "by-gitignore.txt\n");
  WriteFile(repo + "/.git/info/exclude", "*.by-exclude\n");
  WriteFile(repo + "/.ignore", "by-ignore.txt\n");
  WriteFile(repo + "/secret.txt", "hello SECRET-CANARY\n");
  for (const char* f : {"kept.txt", "by-gitignore.txt", "x.by-exclude", "by-ignore.txt"}) {
    WriteFile(sub + "/" + f, "hello\n");
  }
  RunResult r = RunCordon({"grep", "--workspace", sub, "--", "hello"}, sub);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(SortedLines(r.out), SortedLines(BareRg(sub, "--no-config -e hello --")));
  EXPECT_EQ(SortedLines(r.out), std::vector<std::string>{"kept.txt:hello"});
  EXPECT_THAT(r.err, ::testing::Not(::testing::HasSubstr("refused")));
  // Only the ignore files: the repository's other files are not the tool's.
  RunResult outside =
      RunCordon({"grep", "--workspace", sub, "--", "hello", repo + "/secret.txt"}, sub);
  EXPECT_NE(outside.status, 0);
  EXPECT_THAT(outside.out, ::testing::Not(::testing::HasSubstr("SECRET-CANARY")));
}

TEST_F(GrepTest, CountGivesBareRipgrepsOutputForAnAbsoluteTree) {
  // The bench's rg-read line, `rg --no-config -c PATTERN TREE`, through
  // bench/rg_as_cordon_grep.sh: byte for byte what bare ripgrep prints.
  RunResult r = Cordon({"grep", "--count", "--", "needle_[0-9]+", t_.Ws("src")});
  ASSERT_EQ(r.status, 0) << r.err;
  std::string bare = BareRg(t_.ws(), "--no-config -c 'needle_[0-9]+' '" + t_.Ws("src") + "'");
  EXPECT_EQ(SortedLines(r.out), SortedLines(bare));
  EXPECT_EQ(SortedLines(r.out), (std::vector<std::string>{t_.Ws("src/a.c") + ":1",
                                                          t_.Ws("src/deep/b.h") + ":1"}));
  RunResult rel = Cordon({"grep", "--count", "--", "needle", "src"});
  EXPECT_EQ(SortedLines(rel.out), SortedLines(BareRg(t_.ws(), "--no-config -c needle src")));
  RunResult both = Cordon({"grep", "--count", "--json", "--", "needle"});
  EXPECT_NE(both.status, 0) << "--count and --json exclude each other";
  EXPECT_EQ(both.out, "");
}

TEST_F(GrepTest, AuditLogRecordsTheTemplateAndRipgrepVersion) {
  std::string log = t_.Out("audit.jsonl");
  RunResult r = Cordon({"grep", "--audit", log, "--", "needle_1", "src"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "src/a.c:int needle_1;\n");
  std::string version = BareRg(t_.ws(), "--version");
  version = version.substr(0, version.find('\n'));
  ASSERT_NE(version.find("ripgrep"), std::string::npos) << version;

  std::string header;
  std::stringstream lines(ReadFile(log));
  std::getline(lines, header);
  // Records are canonical JSON: keys sorted, no spaces.
  EXPECT_NE(header.find("\"kind\":\"header\""), std::string::npos) << header;
  EXPECT_NE(header.find("\"ripgrep_version\":\"" + version + "\""), std::string::npos) << header;
  EXPECT_NE(header.find("\"ripgrep_template\":[\"/usr/bin/rg\",\"--no-config\",\"--no-follow\","
                        "\"--no-pre\",\"-e\",\"{PATTERN}\",\"--\",\"{PATH}...\"]"),
            std::string::npos)
      << header;
  EXPECT_NE(header.find("\"argv\":[\"/usr/bin/rg\",\"--no-config\",\"--no-follow\",\"--no-pre\","
                        "\"-e\",\"needle_1\",\"--\",\"src\"]"),
            std::string::npos)
      << "and the argv it was filled in to: " << header;

  RunResult glob = Cordon({"glob", "--audit", log, "--", "*.h"});
  ASSERT_EQ(glob.status, 0) << glob.err;
  std::string all = ReadFile(log);
  EXPECT_NE(all.find("\"--files\",\"--glob\",\"{PATTERN}\""), std::string::npos) << all;
  RunResult verify = RunCordon({"audit", "verify", log});
  EXPECT_EQ(verify.status, 0) << verify.out << verify.err;
  EXPECT_NE(verify.out.find("intact"), std::string::npos) << verify.out;
}

TEST_F(GrepTest, RipgrepsVersionIsAskedInsideTheFence) {
  // The version probe runs the pinned binary like the search does: confined.
  // A stand-in for ripgrep, bind-mounted over /usr/bin/rg in a mount
  // namespace of this test's own, says whether it could write to /tmp.
  std::string log = t_.Out("audit.jsonl");
  const int status = InPrivateMountNamespace([&] {
    if (::mount(FAKE_RG, kRg, nullptr, MS_BIND, nullptr) != 0) return kChildSetupFailed;
    return Cordon({"grep", "--audit", log, "--", "needle"}).status;
  });
  if (status == kChildSetupFailed) GTEST_SKIP() << "cannot bind-mount over " << kRg << " here";
  EXPECT_EQ(status, 1) << "the stand-in finds nothing";
  std::string header;
  std::stringstream lines(ReadFile(log));
  std::getline(lines, header);
  EXPECT_NE(header.find("\"ripgrep_version\":\"ripgrep 0.0.0-fake (outside write refused)\""),
            std::string::npos)
      << header;
}

TEST_F(GrepTest, GlobListsTheSameFilesAsBareRipgrep) {
  RunResult r = Cordon({"glob", "--", "*.h"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(SortedLines(r.out), SortedLines(BareRg(t_.ws(), "--no-config --files --glob '*.h'")));
  EXPECT_EQ(SortedLines(r.out), std::vector<std::string>{"src/deep/b.h"});
}

TEST_F(GrepTest, JsonOnlyWhenAsked) {
  RunResult plain = Cordon({"grep", "--", "needle_1"});
  EXPECT_EQ(plain.out, "src/a.c:int needle_1;\n");
  RunResult json = Cordon({"grep", "--json", "--", "needle_1"});
  ASSERT_EQ(json.status, 0) << json.err;
  EXPECT_NE(json.out.find("\"type\":\"match\""), std::string::npos) << json.out;
}

TEST_F(GrepTest, OptionLikePatternsAndPathsStayLiteral) {
  RunResult r = Cordon({"grep", "--", "--pre=sh"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "src/deep/b.h:// and --pre=sh too\n");

  RunResult pre = Cordon({"grep", "--", "--pre=" + hostile_});
  EXPECT_EQ(pre.status, 1) << "a pattern, matched nowhere: " << pre.err;
  RunResult files = Cordon({"grep", "--", "needle", "--pre=" + hostile_});
  EXPECT_EQ(files.status, 125) << "a path, and no such path in the workspace";
  EXPECT_FALSE(Exists(marker_)) << "no preprocessor ran";

  WriteFile(t_.Ws("-L"), "needle in a dash file\n");
  RunResult dash = Cordon({"grep", "--", "needle", "-L"});
  ASSERT_EQ(dash.status, 0) << dash.err;
  EXPECT_EQ(dash.out, "needle in a dash file\n") << "'-L' is a file name, not --follow";
}

TEST_F(GrepTest, CallersRipgrepConfigHasNoEffect) {
  std::string cfg = t_.Out("rgrc");
  WriteFile(cfg, "--ignore-case\n--pre=" + hostile_ + "\n");
  std::string env = "RIPGREP_CONFIG_PATH=" + cfg;
  // Control: the config is effective for a bare ripgrep that reads it.
  std::string cmd = "cd '" + t_.ws() + "' && " + env + " " + kRg + " -c NEEDLE_1 src/a.c";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << "the config should make bare rg case-insensitive";
  ASSERT_TRUE(Exists(marker_)) << "and run the preprocessor";
  ASSERT_EQ(::unlink(marker_.c_str()), 0);

  RunResult r = Cordon({"grep", "--", "NEEDLE_1"}, {env});
  EXPECT_EQ(r.status, 1) << "case-sensitive: no match; " << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_FALSE(Exists(marker_));
}

TEST_F(GrepTest, SymlinkPointingOutsideIsRefusedByTheTreeCheck) {
  WriteFile(t_.Out("secret.txt"), "needle_secret\n");
  ASSERT_EQ(::symlink(t_.Out("secret.txt").c_str(), t_.Ws("src/leak.txt").c_str()), 0);
  RunResult r = Cordon({"grep", "--", "needle"});
  EXPECT_EQ(r.status, 125);
  EXPECT_EQ(r.out, "") << "nothing searched, not even the honest files";
  EXPECT_NE(r.err.find("src/leak.txt"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("symbolic link"), std::string::npos) << r.err;
  RunResult other = Cordon({"grep", "--", "needle", "notes.txt"});
  EXPECT_EQ(other.status, 0) << "a root without the link is fine: " << other.err;
}

TEST_F(GrepTest, RipgrepsExecWaitsForTheTreeChecksVerdict) {
  // The check runs while the sandbox is built; the supervisor holds
  // ripgrep's exec until it is done, so a refused tree is never opened by
  // ripgrep: its exec is the refused decision in the audit log.
  ASSERT_EQ(::mkfifo(t_.Ws("src/pipe").c_str(), 0600), 0);
  std::string log = t_.Out("audit.jsonl");
  RunResult r = Cordon({"grep", "--audit", log, "--", "needle"});
  EXPECT_EQ(r.status, 125);
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("a fifo is not searched"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("cannot execute"), std::string::npos) << "rg is not to blame: " << r.err;
  std::string all = ReadFile(log);
  std::string refused;
  std::stringstream lines(all);
  for (std::string l; std::getline(lines, l);) {
    if (l.find("\"syscall\":\"execve\"") != std::string::npos) refused += l + "\n";
  }
  EXPECT_NE(refused.find("\"result\":\"refused\""), std::string::npos) << all;
  EXPECT_NE(refused.find("tree check refused the search at 'src/pipe'"), std::string::npos) << all;
  EXPECT_EQ(all.find("\"result\":\"allowed\""), std::string::npos) << "nothing ran: " << all;

  ASSERT_EQ(::unlink(t_.Ws("src/pipe").c_str()), 0);
  RunResult ok = Cordon({"grep", "--audit", log, "--", "needle_1"});
  EXPECT_EQ(ok.status, 0) << ok.err;
  EXPECT_EQ(ok.out, "src/a.c:int needle_1;\n");
}

TEST_F(GrepTest, ABypassedSearchStillWaitsForTheTreeCheck) {
  // No sandbox, so no supervisor to hold the exec: the verdict is awaited
  // before ripgrep is started at all.
  std::string policy = t_.Out("bypass.json");
  WriteFile(policy, R"({"sandbox":{"allowBypass":true}})");
  ASSERT_EQ(::symlink("a.c", t_.Ws("src/link.c").c_str()), 0);
  RunResult r = Cordon({"grep", "--policy", policy, "--no-sandbox", "--", "needle"});
  EXPECT_EQ(r.status, 125);
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("symbolic links are not searched"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("cannot execute"), std::string::npos) << r.err;
  ASSERT_EQ(::unlink(t_.Ws("src/link.c").c_str()), 0);
  RunResult ok = Cordon({"grep", "--policy", policy, "--no-sandbox", "--", "needle_1"});
  EXPECT_EQ(ok.status, 0) << ok.err;
  EXPECT_EQ(ok.out, "src/a.c:int needle_1;\n");
}

// With an audit log or at info level the version of ripgrep is recorded;
// a bypassed search has no fence to ask it in, and still searches.
TEST_F(GrepTest, ABypassedSearchWithAnAuditLogStillSearches) {
  std::string policy = t_.Out("bypass.json");
  WriteFile(policy, R"({"sandbox":{"allowBypass":true}})");
  std::string log = t_.Out("audit.jsonl");
  RunResult r =
      Cordon({"grep", "--policy", policy, "--no-sandbox", "--audit", log, "--", "needle_1"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "src/a.c:int needle_1;\n");
  std::string text = ReadFile(log);
  EXPECT_NE(text.find(R"("rung":"bypassed")"), std::string::npos) << text;
  EXPECT_NE(text.find(R"("ripgrep_template":[)"), std::string::npos) << text;
  EXPECT_NE(text.find(R"("ripgrep_version":"not asked: sandbox bypassed")"), std::string::npos)
      << text;
  RunResult info =
      Cordon({"--log-level", "info", "grep", "--policy", policy, "--no-sandbox", "--", "needle_1"});
  EXPECT_EQ(info.status, 0) << info.err;
  EXPECT_EQ(info.out, "src/a.c:int needle_1;\n");
}

TEST_F(GrepTest, OversizedTreeIsRefusedWholeAndRipgrepNeverRuns) {
  // 4 existing entries (src, src/a.c, src/deep, src/deep/b.h, notes.txt = 5)
  // + 99 dirs * 100 files + 99 dirs = 10,004; trim to exactly 10,000.
  ::mkdir(t_.Ws("bulk").c_str(), 0755);  // 6
  int made = 6;
  for (int d = 0; made < 10000; ++d) {
    std::string dir = t_.Ws("bulk/d" + std::to_string(d));
    ASSERT_EQ(::mkdir(dir.c_str(), 0755), 0);
    ++made;
    for (int f = 0; f < 100 && made < 10000; ++f, ++made) {
      WriteFile(dir + "/f" + std::to_string(f), "");
    }
  }
  RunResult ok = Cordon({"grep", "--", "needle_1"});
  EXPECT_EQ(ok.status, 0) << "exactly 10,000 entries: " << ok.err;
  EXPECT_EQ(ok.out, "src/a.c:int needle_1;\n");

  WriteFile(t_.Ws("bulk/one-more"), "");
  RunResult r = Cordon({"grep", "--", "needle_1"});
  EXPECT_EQ(r.status, 125);
  EXPECT_EQ(r.out, "") << "no partial search presented as complete";
  EXPECT_NE(r.err.find("more than 10000 entries"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("cannot execute"), std::string::npos) << r.err;
  RunResult g = Cordon({"glob", "--", "*.c"});
  EXPECT_EQ(g.status, 125);
  EXPECT_EQ(g.out, "");
}

TEST_F(GrepTest, SixtyFiveLevelsAreRefusedWhole) {
  std::string p = t_.Ws("src");
  for (int i = 2; i <= 64; ++i) {  // src is level 1
    p += "/l";
    ASSERT_EQ(::mkdir(p.c_str(), 0755), 0);
  }
  RunResult ok = Cordon({"grep", "--", "needle_1"});
  EXPECT_EQ(ok.status, 0) << "64 levels: " << ok.err;
  ASSERT_EQ(::mkdir((p + "/l").c_str(), 0755), 0);
  RunResult r = Cordon({"grep", "--", "needle_1"});
  EXPECT_EQ(r.status, 125);
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("deeper than 64 levels"), std::string::npos) << r.err;
}

TEST_F(GrepTest, PathsOutsideOrWithDotDotAreRefusedBeforeRipgrepStarts) {
  WriteFile(t_.Out("secret.txt"), "needle_secret\n");
  for (const std::string& path : {t_.outside(), t_.Out("secret.txt"), std::string("../outside"),
                                  std::string("src/../notes.txt"), std::string("/etc")}) {
    SCOPED_TRACE(path);
    RunResult r = Cordon({"grep", "--", "needle", path});
    EXPECT_EQ(r.status, 125);
    EXPECT_EQ(r.out, "");
    EXPECT_NE(r.err.find("refused"), std::string::npos) << r.err;
  }
  RunResult inside = Cordon({"grep", "--", "needle", t_.Ws("notes.txt")});
  EXPECT_EQ(inside.status, 0) << "an absolute path inside the workspace: " << inside.err;
  EXPECT_EQ(inside.out, "needle_333\n");
  // A search path is a tool argument (seed 002): no ".." at all, not even
  // a leading one that a tool's own open could climb with.
  RunResult up =
      RunCordon({"grep", "--workspace", t_.ws(), "--", "needle", "../notes.txt"}, t_.Ws("src"));
  EXPECT_EQ(up.status, 125);
  EXPECT_EQ(up.out, "");
  EXPECT_NE(up.err.find("raw '..' segment"), std::string::npos) << up.err;
  RunResult here =
      RunCordon({"grep", "--workspace", t_.ws(), "--", "needle", "src/deep"}, t_.Ws("src"));
  EXPECT_EQ(here.status, 0) << "relative to the workspace, not to a cwd inside it: " << here.err;
  EXPECT_EQ(here.out, "src/deep/b.h:// needle_22 here\n");
}

// A search path is a tool argument, read where the tool runs (the
// workspace) whatever cordon's caller's cwd, and ripgrep gets it as spelt:
// what `cd WS && rg ARGS` prints, path for path, byte for byte.
TEST_F(GrepTest, SearchPathsAreTheWorkspacesWhateverTheCallersCwd) {
  const std::vector<std::vector<std::string>> shapes = {
      {}, {"src"}, {"./src"}, {"src/a.c"}, {"src/deep", "notes.txt"}, {"."}, {"src//deep/"},
      {t_.Ws("src")}, {t_.ws() + "//src/./deep"}};
  const std::vector<std::vector<std::string>> modes = {{}, {"--count"}, {"--json"}};
  for (const std::string& cwd : {t_.ws(), std::string("/"), t_.Ws("src/deep")}) {
    for (const auto& mode : modes) {
      for (const auto& paths : shapes) {
        std::string bare_args = "--no-config";
        std::vector<std::string> args = {"grep", "--workspace", t_.ws()};
        for (const std::string& m : mode) {
          args.push_back(m);
          bare_args += " " + m;
        }
        args.insert(args.end(), {"--", "needle"});
        bare_args += " -e needle --";
        for (const std::string& path : paths) {
          args.push_back(path);
          bare_args += " '" + path + "'";
        }
        SCOPED_TRACE("cd " + cwd + "; rg " + bare_args);
        RunResult r = RunCordon(args, cwd);
        ASSERT_EQ(r.status, 0) << r.err;
        std::string bare = BareRg(t_.ws(), bare_args);
        EXPECT_EQ(SortedLines(WithoutTimings(r.out)), SortedLines(WithoutTimings(bare)));
        EXPECT_FALSE(bare.empty());
      }
    }
  }
}

TEST_F(GrepTest, GlobPathsAreTheWorkspacesWhateverTheCallersCwd) {
  WriteFile(t_.Ws("top.h"), "");
  const std::vector<std::vector<std::string>> shapes = {
      {}, {"src"}, {"./src"}, {"src/deep/b.h"}, {"src/deep", "."}, {t_.Ws("src")}};
  for (const std::string& cwd : {t_.ws(), std::string("/"), t_.Ws("src")}) {
    for (const auto& paths : shapes) {
      std::vector<std::string> args = {"glob", "--workspace", t_.ws(), "--", "*.h"};
      std::string bare_args = "--no-config --files --glob '*.h' --";
      for (const std::string& path : paths) {
        args.push_back(path);
        bare_args += " '" + path + "'";
      }
      SCOPED_TRACE("cd " + cwd + "; rg " + bare_args);
      RunResult r = RunCordon(args, cwd);
      ASSERT_EQ(r.status, 0) << r.err;
      std::string bare = BareRg(t_.ws(), bare_args);
      EXPECT_EQ(SortedLines(r.out), SortedLines(bare));
      EXPECT_FALSE(bare.empty());
    }
  }
}

// Resolving in the workspace must not open a way out: what is outside it
// stays refused from any cwd, in one line and before ripgrep starts, and a
// relative name that exists only next to the caller is not searched.
TEST_F(GrepTest, PathsOutsideStayRefusedFromAnyCwd) {
  WriteFile(t_.Out("secret.txt"), "needle_secret\n");
  for (const std::string& cwd : {std::string("/"), t_.outside(), t_.Ws("src")}) {
    for (const std::string& path : {t_.Out("secret.txt"), std::string("../outside/secret.txt"),
                                    std::string("/etc"), std::string("secret.txt")}) {
      for (const char* verb : {"grep", "glob"}) {
        SCOPED_TRACE(std::string("cd ") + cwd + "; cordon " + verb + " " + path);
        std::string pattern = verb == std::string("grep") ? "needle" : "*";
        RunResult r = RunCordon({verb, "--workspace", t_.ws(), "--", pattern, path}, cwd);
        EXPECT_EQ(r.status, 125);
        EXPECT_EQ(r.out, "");
        EXPECT_NE(r.err.find(path), std::string::npos) << r.err;
        EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
        if (path == "secret.txt") {
          EXPECT_NE(r.err.find("no such file or directory in the workspace " + t_.ws()),
                    std::string::npos)
              << "says where a relative path was looked for: " << r.err;
        }
      }
    }
  }
}

}  // namespace
}  // namespace cordon::testing
