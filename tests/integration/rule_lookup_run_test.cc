// The one rule lookup, end to end: `policy explain --path`, the preload
// (the dynamic probe, refused early) and the kernel and supervisor (the
// static probe) give the same answer for every path, on both rungs; the
// tie-break of one path holds wherever the rules come from; a read-write
// file grant makes that file writable and nothing beside it.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cerrno>
#include <map>
#include <nlohmann/json.hpp>

#include "tests/support/probe_test.h"
#include "tests/support/test_env.h"

namespace cordon::testing {
namespace {

class RuleLookupRunTest : public ProbeTest {
 protected:
  void Mkdirs(std::initializer_list<std::string> dirs) {
    for (const std::string& d : dirs) ASSERT_EQ(::mkdir(d.c_str(), 0755), 0) << d;
  }
  std::string D() const { return t_.Out("d"); }
  std::string E() const { return t_.Out("e"); }
};

TEST_P(RuleLookupRunTest, ARwFileGrantMakesThatFileWritableAndNothingBesideIt) {
  const std::string out = t_.Out("out.txt"), other = t_.Out("other.txt");
  WriteFile(out, "x=0\n");
  WriteFile(other, "other\n");
  const std::vector<std::string> rw = {"--rw", out};
  EXPECT_EQ(Probe("workspace-write", {"append", out}, rw), 0) << last_.err;
  EXPECT_EQ(ReadFile(out), "x=0\nprobe\n");
  EXPECT_EQ(Probe("workspace-write", {"read", out}, rw), 0) << last_.err;
  EXPECT_EQ(Probe("workspace-write", {"trunc", out}, rw), 0) << last_.err;
  EXPECT_EQ(ReadFile(out), "probe\n");
  // Its siblings and its name stay as they are.
  EXPECT_EQ(Probe("workspace-write", {"append", other}, rw), EACCES);
  EXPECT_EQ(Probe("workspace-write", {"create", t_.Out("new.txt")}, rw), EACCES);
  EXPECT_EQ(Probe("workspace-write", {"unlink", out}, rw), EACCES);
  EXPECT_EQ(Probe("workspace-write", {"rename", out, t_.Out("moved.txt")}, rw), EACCES);
  EXPECT_EQ(Probe("workspace-write", {"link", out, t_.Out("linked.txt")}, rw), EACCES);
  EXPECT_EQ(ReadFile(other), "other\n");
  EXPECT_EQ(ReadFile(out), "probe\n");
  EXPECT_FALSE(Exists(t_.Out("new.txt")));
  EXPECT_FALSE(Exists(t_.Out("moved.txt")));
  EXPECT_FALSE(Exists(t_.Out("linked.txt")));
  // Without the grant the file is out of reach.
  EXPECT_EQ(Probe("workspace-write", {"append", out}), EACCES);
  EXPECT_EQ(ReadFile(out), "probe\n");
}

// `--rw FILE` of a file that does not exist yet: the run may create it by
// writing it (a CI step's output), and nothing beside it.
TEST_P(RuleLookupRunTest, ARwFileThatDoesNotExistYetIsCreatedOnFirstWrite) {
  const std::string out = t_.Out("summary.md");
  const std::vector<std::string> rw = {"--rw", out};
  EXPECT_EQ(Probe("workspace-write", {"write", out}, rw), 0) << last_.err;
  EXPECT_EQ(ReadFile(out), "probe\n");
  EXPECT_EQ(Probe("workspace-write", {"append", out}, rw), 0) << last_.err;
  EXPECT_EQ(ReadFile(out), "probe\nprobe\n");
  EXPECT_EQ(Probe("workspace-write", {"create", t_.Out("other.md")}, rw), EACCES);
  EXPECT_EQ(Probe("workspace-write", {"mkdir", out + ".d"}, rw), EACCES);
  EXPECT_FALSE(Exists(t_.Out("other.md")));
  EXPECT_FALSE(Exists(out + ".d"));
  // A grant in a directory that does not exist grants nothing.
  const std::string deep = t_.Out("no/such/out.txt");
  EXPECT_EQ(Probe("workspace-write", {"write", deep}, {"--rw", deep}), EACCES);
  EXPECT_FALSE(Exists(t_.Out("no")));
}

// `--deny PATH` of a path that does not exist at launch fails closed: the
// run cannot bring it into being, by any call; the files it makes beside it
// stay readable and writable.
TEST_P(RuleLookupRunTest, ADenialOfAPathThatDoesNotExistYetHolds) {
  WriteFile(t_.Ws("draft.txt"), "draft\n");
  const std::vector<std::string> deny = {"--deny", t_.Ws(".env"), "--deny", t_.Ws("new/secret")};
  EXPECT_EQ(Probe("workspace-write", {"write", t_.Ws(".env")}, deny), EACCES);
  EXPECT_EQ(Probe("workspace-write", {"mkdir", t_.Ws(".env")}, deny), EACCES);
  EXPECT_EQ(Probe("workspace-write", {"symlink", "/etc/passwd", t_.Ws(".env")}, deny), EACCES);
  EXPECT_EQ(Probe("workspace-write", {"rename", t_.Ws("draft.txt"), t_.Ws(".env")}, deny), EACCES);
  EXPECT_EQ(Probe("workspace-write", {"link", t_.Ws("draft.txt"), t_.Ws(".env")}, deny), EACCES);
  EXPECT_FALSE(Exists(t_.Ws(".env")));
  EXPECT_EQ(ReadFile(t_.Ws("draft.txt")), "draft\n");
  // Deeper: the directory on the way may be made, the denied name not.
  EXPECT_EQ(Probe("workspace-write", {"mkdir", t_.Ws("new")}, deny), 0) << last_.err;
  EXPECT_EQ(Probe("workspace-write", {"write", t_.Ws("new/secret")}, deny), EACCES);
  EXPECT_FALSE(Exists(t_.Ws("new/secret")));
  // The honest neighbours: a file made beside the denied name is the run's.
  EXPECT_EQ(Probe("workspace-write", {"write", t_.Ws("env.txt")}, deny), 0) << last_.err;
  EXPECT_EQ(Probe("workspace-write", {"read", t_.Ws("env.txt")}, deny), 0) << last_.err;
  EXPECT_EQ(Probe("workspace-write", {"write", t_.Ws("new/public")}, deny), 0) << last_.err;
  EXPECT_EQ(Probe("workspace-write", {"read", t_.Ws("new/public")}, deny), 0) << last_.err;
}

// A denial and a grant of one path deny, in either order, on the command
// line, in a policy file (seed 004's settings shape), and split between
// the two. The honest neighbour: a grant of another path still reads.
TEST_P(RuleLookupRunTest, ADenyAndAnAllowOfOnePathDenyWhereverTheyComeFrom) {
  Mkdirs({D(), E()});
  WriteFile(D() + "/f", "secret\n");
  WriteFile(E() + "/f", "fine\n");
  // A policy file listing D() under `first` then `second` (seed 004's
  // settings shape); an empty `second` lists it once.
  int files = 0;
  auto file = [&](const std::string& first, const std::string& second) {
    const std::string path = t_.root() + "/policy" + std::to_string(++files) + ".json";
    // nlohmann sorts keys: write the text by hand so `first` comes first.
    std::string text = R"({"sandbox":{"filesystem":{")" + first + R"(":[")" + D() + R"("])";
    if (!second.empty()) text += R"(,")" + second + R"(":[")" + D() + R"("])";
    WriteFile(path, text + "}}}");
    return path;
  };
  struct Case {
    std::vector<std::string> args;
    const char* what;
  } cases[] = {
      {{"--ro", D(), "--deny", D()}, "command line, --ro first"},
      {{"--deny", D(), "--ro", D()}, "command line, --deny first"},
      {{"--rw", D(), "--deny", D()}, "command line, --rw first"},
      {{"--deny", D(), "--rw", D()}, "command line, --deny first, then --rw"},
      {{"--policy", file("readwritePaths", "deniedPaths")}, "policy file, grant first"},
      {{"--policy", file("deniedPaths", "readonlyPaths")}, "policy file, denial first"},
      {{"--policy", file("readwritePaths", ""), "--deny", D()}, "file grant, flag denial"},
      {{"--policy", file("deniedPaths", ""), "--rw", D()}, "file denial, flag grant"},
  };
  for (const Case& c : cases) {
    std::vector<std::string> args = c.args;
    args.insert(args.end(), {"--ro", E()});
    EXPECT_EQ(Probe("", {"read", D() + "/f"}, args), EACCES) << c.what << "\n" << last_.err;
    EXPECT_EQ(Probe("", {"append", D() + "/f"}, args), EACCES) << c.what;
    EXPECT_EQ(Probe("", {"read", E() + "/f"}, args), 0) << c.what << "\n" << last_.err;
  }
  EXPECT_EQ(ReadFile(D() + "/f"), "secret\n");
}

// For every path of a policy with files, directories, nested denials and
// read-write file grants, `policy explain --path` says what the tool may
// do, and the tool (refused early by the preload, or by the kernel and the
// supervisor for the static probe) finds exactly that.
TEST_P(RuleLookupRunTest, ExplainThePreloadAndTheSupervisorAgreeOnEveryPath) {
  const std::string ro = t_.Out("ro"), rw = t_.Out("rw");
  Mkdirs({ro, rw, rw + "/secret", rw + "/secret/pub", ro + "/sub", t_.Ws("private")});
  std::vector<std::string> files = {
      ro + "/a.txt",           ro + "/out.txt",     ro + "/sub/b.txt",
      rw + "/c.txt",           rw + "/secret/s.txt", rw + "/secret/pub/p.txt",
      t_.Ws("w.txt"),          t_.Ws("private/k"),   t_.Out("elsewhere.txt"),
      rw + "/both.txt",
  };
  for (const std::string& f : files) WriteFile(f, "content\n");
  const std::string policy = t_.root() + "/policy.json";
  nlohmann::json fs = {
      {"readonlyPaths", {ro, ProbeDir(), rw + "/secret/pub"}},
      {"readwritePaths", {rw, ro + "/out.txt", rw + "/both.txt"}},
      {"deniedPaths", {rw + "/secret", t_.Ws("private"), rw + "/both.txt"}},
  };
  WriteFile(policy, nlohmann::json{{"sandbox", {{"filesystem", fs}}}}.dump());

  std::vector<std::string> explain = {"policy", "explain", policy, "--workspace", t_.ws(), "--json"};
  for (const std::string& f : files) explain.insert(explain.end(), {"--path", f});
  RunResult ex = RunCordon(explain);
  ASSERT_EQ(ex.status, 0) << ex.err;
  nlohmann::json decisions = nlohmann::json::parse(ex.out)["decisions"];
  ASSERT_EQ(decisions.size(), files.size());
  std::map<std::string, std::string> said;
  for (const auto& d : decisions) said[d["path"]] = d["access"];
  // What the rules say, written out so that a lookup that changed would be
  // caught here too, not only as a disagreement.
  const std::map<std::string, std::string> want = {
      {ro + "/a.txt", "read-only"},          {ro + "/out.txt", "read-write"},
      {ro + "/sub/b.txt", "read-only"},      {rw + "/c.txt", "read-write"},
      {rw + "/secret/s.txt", "denied"},      {rw + "/secret/pub/p.txt", "read-only"},
      {t_.Ws("w.txt"), "read-write"},        {t_.Ws("private/k"), "denied"},
      {t_.Out("elsewhere.txt"), "outside"},  {rw + "/both.txt", "denied"},
  };
  EXPECT_EQ(said, want);

  for (const std::string& f : files) {
    const std::string& access = said[f];
    const int read = Probe("", {"read", f}, {"--policy", policy});
    EXPECT_EQ(read, access == "read-only" || access == "read-write" ? 0 : EACCES)
        << f << " is " << access << "\n" << last_.err;
    const int append = Probe("", {"append", f}, {"--policy", policy});
    EXPECT_EQ(append, access == "read-write" ? 0 : EACCES) << f << " is " << access << "\n"
                                                           << last_.err;
    EXPECT_EQ(ReadFile(f), access == "read-write" ? "content\nprobe\n" : "content\n") << f;
  }
}

INSTANTIATE_TEST_SUITE_P(Probes, RuleLookupRunTest, ProbeParams(), ProbeParamName);

}  // namespace
}  // namespace cordon::testing
