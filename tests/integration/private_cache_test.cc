// Issue 24 item 3: under workspace-write a tool gets a private cache per
// workspace, outside it, that persists between runs of that workspace
// (policy/private_cache.h); the user's own caches are not written unless
// granted. Real ccache and the real cordon binary, with a temporary HOME.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <dirent.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <functional>
#include <set>
#include <string>
#include <vector>

#include "policy/private_cache.h"
#include "tests/support/test_env.h"

namespace cordon::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

std::string Real(const std::string& p) {
  char buf[PATH_MAX];
  return ::realpath(p.c_str(), buf) != nullptr ? buf : "";
}

// Every path beneath `dir` (relative), recursively.
void Walk(const std::string& dir, const std::string& rel, std::set<std::string>& out) {
  DIR* d = ::opendir((dir + rel).c_str());
  if (d == nullptr) return;
  while (dirent* e = ::readdir(d)) {
    std::string n = e->d_name;
    if (n == "." || n == "..") continue;
    out.insert(rel + "/" + n);
    if (e->d_type == DT_DIR) Walk(dir, rel + "/" + n, out);
  }
  ::closedir(d);
}
std::set<std::string> Tree(const std::string& dir) {
  std::set<std::string> out;
  Walk(dir, "", out);
  return out;
}

// The files of a ccache cache but its bookkeeping: results and manifests
// (<hash>R, <hash>M), also as `ccache -C` renames them before it unlinks
// them (<hash>R.ccache.tmp.unlink).
int CachedEntries(const std::string& ccache_dir) {
  int n = 0;
  for (const std::string& p : Tree(ccache_dir)) {
    const std::string name = p.substr(p.rfind('/') + 1);
    struct stat st;
    if (::stat((ccache_dir + p).c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
    if (name != "stats" && name != "CACHEDIR.TAG" && name != ".cleaned" && name != "ccache.conf") ++n;
  }
  return n;
}

class PrivateCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    home_ = t_.Out("home");
    ASSERT_EQ(::mkdir(home_.c_str(), 0755), 0);
    ASSERT_EQ(::mkdir((home_ + "/.cache").c_str(), 0755), 0);
    WriteFile(home_ + "/.cache/canary.txt", "USER-CACHE\n");
  }
  // The environment of every run: this HOME, and no cache variable or
  // state directory of the test's own caller.
  std::vector<std::string> Env(std::vector<std::string> extra = {}) const {
    std::vector<std::string> env = {"HOME=" + home_, "XDG_STATE_HOME"};
    for (const policy::CacheVar& v : policy::CacheVars()) env.push_back(v.name);
    env.insert(env.end(), extra.begin(), extra.end());
    return env;
  }
  // The private cache cordon should give `ws`.
  std::string CacheOf(const std::string& ws) const {
    return policy::PrivateCacheDir(Real(home_) + "/.local/state", Real(ws));
  }
  RunResult Run(const std::string& ws, const std::string& script,
                std::vector<std::string> flags = {}, std::vector<std::string> env = {}) {
    std::vector<std::string> args = {"--log-level", "info", "run", "--profile", "workspace-write",
                                     "--workspace", ws, "--approvals", "deny"};
    args.insert(args.end(), flags.begin(), flags.end());
    args.insert(args.end(), {"--", "sh", "-c", script});
    return RunCordon(args, "", Env(std::move(env)));
  }
  ScratchTree t_;
  std::string home_;
};

TEST_F(PrivateCacheTest, CcacheMissesThenHitsAcrossRunsAndClearsWithoutApproval) {
  if (std::system("command -v ccache >/dev/null && command -v cc >/dev/null") != 0) {
    GTEST_SKIP() << "ccache or cc missing (tools/bootstrap.sh installs them)";
  }
  WriteFile(t_.Ws("hello.c"), "int hello(void) { return 42; }\n");
  const std::string compile =
      "ccache -z >/dev/null && ccache cc -c hello.c -o hello.o && "
      "ccache --print-stats | grep -E '^(cache_miss|direct_cache_hit)\t'";
  const std::set<std::string> user_cache = Tree(home_ + "/.cache");

  RunResult first = Run(t_.ws(), compile);
  ASSERT_EQ(first.status, 0) << first.err;
  EXPECT_THAT(first.out, HasSubstr("cache_miss\t1"));
  EXPECT_THAT(first.out, HasSubstr("direct_cache_hit\t0"));
  const std::string ccache_dir = CacheOf(t_.ws()) + "/ccache";
  EXPECT_GT(CachedEntries(ccache_dir), 0) << "the cache is kept outside the run";

  RunResult second = Run(t_.ws(), compile);
  ASSERT_EQ(second.status, 0) << second.err;
  EXPECT_THAT(second.out, HasSubstr("direct_cache_hit\t1"));
  EXPECT_THAT(second.out, HasSubstr("cache_miss\t0"));

  // The entries an earlier run left are the tool's own: `ccache -C`
  // removes them under --approvals deny.
  RunResult clear = Run(t_.ws(), "ccache -C && echo cleared");
  ASSERT_EQ(clear.status, 0) << clear.err;
  EXPECT_THAT(clear.out, HasSubstr("cleared"));
  EXPECT_EQ(CachedEntries(ccache_dir), 0) << clear.err;
  EXPECT_THAT(clear.err, Not(HasSubstr("refused unlink")));

  RunResult third = Run(t_.ws(), compile);
  ASSERT_EQ(third.status, 0) << third.err;
  EXPECT_THAT(third.out, HasSubstr("cache_miss\t1"));

  EXPECT_EQ(Tree(home_ + "/.cache"), user_cache) << "the user's ~/.cache gained files";
  EXPECT_EQ(ReadFile(home_ + "/.cache/canary.txt"), "USER-CACHE\n");
}

TEST_F(PrivateCacheTest, EachWorkspaceHasItsOwnAndTheUsersCacheStaysUnwritten) {
  const std::string ws2 = t_.Out("ws2");
  ASSERT_EQ(::mkdir(ws2.c_str(), 0755), 0);
  const std::set<std::string> user_cache = Tree(home_ + "/.cache");
  auto script = [&](const std::string& tag) {
    return "printf '%s\\n' \"$XDG_CACHE_HOME\"; mkdir -p \"$XDG_CACHE_HOME\" && echo " + tag +
           " > \"$XDG_CACHE_HOME/mine\"; echo evil > " + home_ +
           "/.cache/canary.txt; echo evil > " + home_ + "/.cache/new.txt; echo done";
  };
  RunResult a = Run(t_.ws(), script("a"));
  RunResult b = Run(ws2, script("b"));
  ASSERT_EQ(a.status, 0) << a.err;
  ASSERT_EQ(b.status, 0) << b.err;
  EXPECT_EQ(a.out, CacheOf(t_.ws()) + "/xdg\ndone\n");
  EXPECT_EQ(b.out, CacheOf(ws2) + "/xdg\ndone\n");
  EXPECT_NE(CacheOf(t_.ws()), CacheOf(ws2));
  EXPECT_EQ(ReadFile(CacheOf(t_.ws()) + "/xdg/mine"), "a\n");
  EXPECT_EQ(ReadFile(CacheOf(ws2) + "/xdg/mine"), "b\n");
  struct stat st;
  ASSERT_EQ(::stat(CacheOf(t_.ws()).c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0700u);
  // The first workspace's cache is out of the second's reach.
  RunResult peek = Run(ws2, "cat " + CacheOf(t_.ws()) + "/xdg/mine; echo x > " +
                                CacheOf(t_.ws()) + "/xdg/mine; echo done");
  EXPECT_THAT(peek.out, Not(HasSubstr("a\n")));
  EXPECT_EQ(ReadFile(CacheOf(t_.ws()) + "/xdg/mine"), "a\n");
  EXPECT_EQ(Tree(home_ + "/.cache"), user_cache);
  EXPECT_EQ(ReadFile(home_ + "/.cache/canary.txt"), "USER-CACHE\n");
}

TEST_F(PrivateCacheTest, AnEarlierRunsEntriesAreDeletedFreelyButNotTheCacheItself) {
  WriteFile(t_.Ws("users.txt"), "keep\n");
  RunResult make = Run(t_.ws(), "mkdir -p \"$XDG_CACHE_HOME/d\" && echo 1 > \"$XDG_CACHE_HOME/d/old\""
                                " && echo 2 > \"$XDG_CACHE_HOME/over\"");
  ASSERT_EQ(make.status, 0) << make.err;
  const std::string cache = CacheOf(t_.ws());
  ASSERT_EQ(ReadFile(cache + "/xdg/d/old"), "1\n");
  RunResult del = Run(t_.ws(),
                      "rm \"$XDG_CACHE_HOME/d/old\"; rmdir \"$XDG_CACHE_HOME/d\"; "
                      "echo 3 > \"$XDG_CACHE_HOME/new\" && mv \"$XDG_CACHE_HOME/new\" "
                      "\"$XDG_CACHE_HOME/over\"; rm \"$XDG_CACHE_HOME/over\"; "
                      "rmdir \"$XDG_CACHE_HOME\"; rmdir \"" + cache + "\"; rm users.txt; echo done",
                      {"--sensitive-delete", "ask"});
  EXPECT_THAT(del.out, HasSubstr("done"));
  EXPECT_FALSE(Exists(cache + "/xdg/d/old")) << del.err;
  EXPECT_FALSE(Exists(cache + "/xdg/d")) << del.err;
  EXPECT_FALSE(Exists(cache + "/xdg/over")) << del.err;
  EXPECT_FALSE(Exists(cache + "/xdg")) << del.err;
  EXPECT_TRUE(Exists(cache)) << "the cache directory itself stays";
  EXPECT_EQ(ReadFile(t_.Ws("users.txt")), "keep\n") << "a workspace file still needs approval";
}

TEST_F(PrivateCacheTest, NoPrivateCacheAndReadOnlyLeaveTheVariablesAsTheyAre) {
  const std::string print = "echo \"x=${XDG_CACHE_HOME-unset} c=${CCACHE_DIR-unset} p=${PIP_CACHE_DIR-unset}\"";
  RunResult off = Run(t_.ws(), print, {"--no-private-cache"}, {"PIP_CACHE_DIR=/nowhere/pip"});
  ASSERT_EQ(off.status, 0) << off.err;
  EXPECT_EQ(off.out, "x=unset c=unset p=/nowhere/pip\n");
  RunResult ro = RunCordon({"run", "--profile", "read-only", "--workspace", t_.ws(), "--", "sh",
                            "-c", print},
                           "", Env());
  ASSERT_EQ(ro.status, 0) << ro.err;
  EXPECT_EQ(ro.out, "x=unset c=unset p=unset\n");
  EXPECT_FALSE(Exists(home_ + "/.local/state/cordon/caches")) << "no cache made for either";
  RunResult on = Run(t_.ws(), print);
  ASSERT_EQ(on.status, 0) << on.err;
  const std::string cache = CacheOf(t_.ws());
  EXPECT_EQ(on.out, "x=" + cache + "/xdg c=" + cache + "/ccache p=" + cache + "/pip\n");
}

TEST_F(PrivateCacheTest, AUsersWritableCacheVariableIsKeptAndAnUnwritableOneReplaced) {
  ASSERT_EQ(::mkdir((home_ + "/.cache/pip").c_str(), 0755), 0);
  const std::string print = "echo \"c=$CCACHE_DIR p=$PIP_CACHE_DIR g=$GOCACHE\"";
  const std::string mine = Real(t_.ws()) + "/.my-ccache";
  RunResult r = Run(t_.ws(), print, {},
                    {"CCACHE_DIR=" + mine, "PIP_CACHE_DIR=" + home_ + "/.cache/pip"});
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string cache = CacheOf(t_.ws());
  EXPECT_EQ(r.out, "c=" + mine + " p=" + cache + "/pip g=" + cache + "/go-build\n");
  EXPECT_THAT(r.err, HasSubstr("PIP_CACHE_DIR=" + home_ + "/.cache/pip is not writable"));
  EXPECT_THAT(r.err, Not(HasSubstr("CCACHE_DIR=")));

  // The user's grant of their own cache is honoured, set or not.
  const std::string pip = Real(home_ + "/.cache/pip");
  RunResult granted = Run(t_.ws(), print + "; echo ok > \"$PIP_CACHE_DIR/f\"",
                          {"--rw", home_ + "/.cache/pip"});
  ASSERT_EQ(granted.status, 0) << granted.err;
  EXPECT_EQ(granted.out, "c=" + cache + "/ccache p=" + pip + " g=" + cache + "/go-build\n");
  EXPECT_EQ(ReadFile(pip + "/f"), "ok\n");
  RunResult set = Run(t_.ws(), print, {"--rw", home_ + "/.cache/pip"},
                      {"PIP_CACHE_DIR=" + home_ + "/.cache/pip"});
  ASSERT_EQ(set.status, 0) << set.err;
  EXPECT_THAT(set.out, HasSubstr(" p=" + home_ + "/.cache/pip "));
}

TEST_F(PrivateCacheTest, ARelativeStateHomeIsIgnoredWithAWarning) {
  RunResult r = Run(t_.ws(), "echo \"$XDG_CACHE_HOME\"", {}, {"XDG_STATE_HOME=rel/state"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, CacheOf(t_.ws()) + "/xdg\n");
  EXPECT_THAT(r.err, HasSubstr("XDG_STATE_HOME=rel/state is relative and ignored"));
}

// A cache others may write (or a link, another's directory) is not the
// tool's alone: the run goes on without one, and says so.
TEST_F(PrivateCacheTest, ACacheOthersMayWriteIsNotUsed) {
  const std::string cache = CacheOf(t_.ws());
  ASSERT_EQ(std::system(("mkdir -p " + cache + " && chmod 0777 " + cache).c_str()), 0);
  RunResult r = Run(t_.ws(), "echo \"x=${XDG_CACHE_HOME-unset}\"");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "x=unset\n");
  EXPECT_THAT(r.err, HasSubstr("no private cache: " + cache + " is not a directory of this user's"));
  ASSERT_EQ(::chmod(cache.c_str(), 0700), 0);
  RunResult ok = Run(t_.ws(), "echo \"x=${XDG_CACHE_HOME-unset}\"");
  EXPECT_EQ(ok.out, "x=" + cache + "/xdg\n") << ok.err;
}

TEST_F(PrivateCacheTest, ExplainListsTheCacheRule) {
  const std::string policy = t_.root() + "/p.json";
  WriteFile(policy, "{}");
  RunResult r = RunCordon({"policy", "explain", policy, "--workspace", t_.ws(), "--profile",
                           "workspace-write"},
                          "", Env());
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr(CacheOf(t_.ws()) + "\n"));
  EXPECT_THAT(r.out, HasSubstr("(private cache of this workspace)"));
  EXPECT_FALSE(Exists(CacheOf(t_.ws()))) << "explain makes nothing";
  for (const char* off : {"--no-private-cache", "read-only"}) {
    const bool ro = std::string(off) == "read-only";
    RunResult n = RunCordon({"policy", "explain", policy, "--workspace", t_.ws(), "--profile",
                             ro ? "read-only" : "workspace-write", ro ? "--json" : off},
                            "", Env());
    ASSERT_EQ(n.status, 0) << off << ": " << n.err;
    EXPECT_THAT(n.out, Not(HasSubstr("private cache of this workspace"))) << off;
  }
}

}  // namespace
}  // namespace cordon::testing
