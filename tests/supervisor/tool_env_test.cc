#include "supervisor/tool_env.h"

#include <gtest/gtest.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <string>
#include <vector>

#include "tests/support/test_env.h"

namespace cordon::supervisor {
namespace {

using cordon::testing::Exists;
using cordon::testing::ReadFile;
using cordon::testing::ScratchTree;
using cordon::testing::WriteFile;

bool Has(const std::vector<std::string>& env, const std::string& e) {
  return std::find(env.begin(), env.end(), e) != env.end();
}

std::string Get(const std::vector<std::string>& env, const std::string& name) {
  for (const auto& e : env) {
    if (e.rfind(name + "=", 0) == 0) return e.substr(name.size() + 1);
  }
  return "<unset>";
}

class ToolEnvTest : public ::testing::Test {
 protected:
  void SetUp() override {
    p_.workspace = t_.ws();
    home_ = t_.Out("home");
    ASSERT_EQ(::mkdir(home_.c_str(), 0755), 0);
  }
  std::vector<std::string> Caller() {
    return {"PATH=/usr/bin",
            "HOME=" + home_,
            "TMPDIR=/tmp",
            "XDG_CONFIG_HOME=" + home_ + "/.config",
            "XDG_RUNTIME_DIR=/run/user/0",
            "XDG_CACHE_HOME=/var/cache/elsewhere"};
  }
  ScratchTree t_;
  policy::Policy p_;
  std::string home_;
};

// The caller's home is out of the tool's reach: HOME is a private directory
// beneath TMPDIR, and XDG homes inside the caller's follow it: the same
// place in the private home (where the grants in the real one are linked).
TEST_F(ToolEnvTest, AnUnreadableHomeIsReplacedByAPrivateOne) {
  ToolEnv e = MakeToolEnv(Caller(), p_, "/tmp/cordon-runs-0/run-x");
  EXPECT_EQ(e.private_home, "/tmp/cordon-runs-0/run-x/home");
  EXPECT_EQ(Get(e.env, "HOME"), e.private_home);
  EXPECT_EQ(Get(e.env, "TMPDIR"), "/tmp/cordon-runs-0/run-x");
  EXPECT_EQ(Get(e.env, "XDG_CONFIG_HOME"), e.private_home + "/.config");
  EXPECT_TRUE(Has(e.env, "XDG_CACHE_HOME=/var/cache/elsewhere")) << "not in the caller's home";
  EXPECT_TRUE(Has(e.env, "XDG_RUNTIME_DIR=/run/user/0")) << "not a *_HOME";
  EXPECT_TRUE(Has(e.env, "PATH=/usr/bin"));
  EXPECT_EQ(std::count_if(e.env.begin(), e.env.end(),
                          [](const std::string& v) { return v.rfind("HOME=", 0) == 0; }),
            1);
}

// A policy that lets the tool read the caller's home keeps it, unless a
// denial covers the home itself.
TEST_F(ToolEnvTest, AReadableHomeIsKept) {
  p_.paths.push_back(policy::PathRule::ReadOnly(home_));
  ToolEnv kept = MakeToolEnv(Caller(), p_, "/tmp/run");
  EXPECT_TRUE(kept.private_home.empty());
  EXPECT_EQ(Get(kept.env, "HOME"), home_);
  EXPECT_EQ(Get(kept.env, "XDG_CONFIG_HOME"), home_ + "/.config");

  p_.paths.push_back(policy::PathRule::Denied(home_ + "/.ssh"));
  EXPECT_TRUE(MakeToolEnv(Caller(), p_, "/tmp/run").private_home.empty())
      << "a denial inside the home leaves the home readable";
  p_.paths.push_back(policy::PathRule::Denied(home_));
  EXPECT_FALSE(MakeToolEnv(Caller(), p_, "/tmp/run").private_home.empty());
}

TEST_F(ToolEnvTest, AWorkspaceHoldingTheHomeKeepsIt) {
  p_.workspace = t_.root();
  EXPECT_TRUE(MakeToolEnv(Caller(), p_, "/tmp/run").private_home.empty());
}

// What the policy grants inside the caller's home is linked into the
// private one at the same place: `--ro ~/.gitconfig` keeps git's identity.
// A grant beneath another is reached through the shallower link, and what
// is denied or outside the home is not linked.
TEST_F(ToolEnvTest, GrantsInsideTheHomeAreLinkedIntoThePrivateOne) {
  for (const char* d : {"/.config", "/.config/git", "/.cache", "/.cache/pip", "/.ssh"}) {
    ASSERT_EQ(::mkdir((home_ + d).c_str(), 0755), 0) << d;
  }
  WriteFile(home_ + "/.gitconfig", "[user]\n");
  WriteFile(home_ + "/.config-b", "b\n");
  p_.paths.push_back(policy::PathRule::ReadOnly(home_ + "/.config/git"));
  p_.paths.push_back(policy::PathRule::ReadOnly(home_ + "/.config-b"));
  p_.paths.push_back(policy::PathRule::ReadOnly(home_ + "/.gitconfig"));
  p_.paths.push_back(policy::PathRule::ReadWrite(home_ + "/.cache"));
  p_.paths.push_back(policy::PathRule::ReadOnly(home_ + "/.cache/pip"));
  p_.paths.push_back(policy::PathRule::Denied(home_ + "/.ssh"));
  p_.paths.push_back(policy::PathRule::ReadOnly(t_.Out("elsewhere")));
  const std::string run = t_.Out("run");
  ASSERT_EQ(::mkdir(run.c_str(), 0700), 0);
  ToolEnv e = MakeToolEnv(Caller(), p_, run);
  ASSERT_EQ(e.private_home, run + "/home");
  std::vector<std::string> links;
  for (const HomeLink& l : e.home_links) {
    EXPECT_EQ(l.link, e.private_home + l.target.substr(home_.size()));
    links.push_back(l.target.substr(home_.size()));
  }
  std::sort(links.begin(), links.end());
  EXPECT_EQ(links,
            (std::vector<std::string>{"/.cache", "/.config-b", "/.config/git", "/.gitconfig"}));

  ASSERT_TRUE(MakePrivateHome(e));
  char buf[PATH_MAX];
  ssize_t n = ::readlink((e.private_home + "/.config/git").c_str(), buf, sizeof buf);
  ASSERT_GT(n, 0);
  EXPECT_EQ(std::string(buf, n), home_ + "/.config/git");
  struct stat st;
  ASSERT_EQ(::lstat((e.private_home + "/.config").c_str(), &st), 0);
  EXPECT_TRUE(S_ISDIR(st.st_mode)) << "the parent is the private home's own directory";
  EXPECT_EQ(st.st_mode & 07777, 0700);
  EXPECT_EQ(ReadFile(e.private_home + "/.gitconfig"), "[user]\n");
  EXPECT_FALSE(Exists(e.private_home + "/.ssh"));
  EXPECT_FALSE(Exists(home_ + "/.cache/pip/.cache")) << "nothing made through a link";
}

// The run's private cache lies under the home's state directory and is
// granted, but the tool is given it by its real path: it is not linked
// (four directories made and removed every run for nothing), while a
// grant beside it still is.
TEST_F(ToolEnvTest, ThePrivateCacheIsNotLinkedIntoThePrivateHome) {
  const std::string cache = home_ + "/.local/state/cordon/caches/abc";
  for (const char* d : {"/.local", "/.local/state", "/.local/state/cordon",
                        "/.local/state/cordon/caches", "/.local/state/cordon/caches/abc"}) {
    ASSERT_EQ(::mkdir((home_ + d).c_str(), 0755), 0) << d;
  }
  WriteFile(home_ + "/.gitconfig", "[user]\n");
  p_.paths.push_back(policy::PathRule::ReadOnly(home_ + "/.gitconfig"));
  p_.paths.push_back(policy::PathRule::ReadWrite(cache));
  p_.private_cache = cache;
  const std::string run = t_.Out("run");
  ASSERT_EQ(::mkdir(run.c_str(), 0700), 0);
  ToolEnv e = MakeToolEnv(Caller(), p_, run);
  std::vector<std::string> links;
  for (const HomeLink& l : e.home_links) links.push_back(l.target);
  EXPECT_EQ(links, (std::vector<std::string>{home_ + "/.gitconfig"}));
  ASSERT_TRUE(MakePrivateHome(e));
  EXPECT_FALSE(Exists(e.private_home + "/.local"));
}

// Without a private TMPDIR there is nowhere to put a home: nothing changes.
TEST_F(ToolEnvTest, NoPrivateTmpNoChange) {
  ToolEnv e = MakeToolEnv(Caller(), p_, "");
  EXPECT_EQ(e.env, Caller());
  EXPECT_TRUE(e.private_home.empty());
}

// public-web and hosts: every client is pointed at the proxy; the
// caller's proxy settings and NO_PROXY give way; git's pair is appended.
TEST(WebProxyEnv, EveryClientIsPointedAtTheProxy) {
  std::vector<std::string> env = {"PATH=/usr/bin", "HTTPS_PROXY=http://corp:3128",
                                  "no_proxy=*", "NO_PROXY=.corp", "GIT_CONFIG_COUNT=2",
                                  "GIT_CONFIG_KEY_0=a.b", "GIT_CONFIG_VALUE_0=1",
                                  "GIT_CONFIG_KEY_1=c.d", "GIT_CONFIG_VALUE_1=2"};
  SetWebProxyEnv(env, "http://127.0.0.1:4242");
  for (const char* name : {"HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY",
                           "all_proxy", "npm_config_proxy", "npm_config_https_proxy"}) {
    EXPECT_EQ(Get(env, name), "http://127.0.0.1:4242") << name;
  }
  EXPECT_EQ(Get(env, "NO_PROXY"), "localhost,127.0.0.1,::1");
  EXPECT_EQ(Get(env, "no_proxy"), "localhost,127.0.0.1,::1");
  EXPECT_EQ(Get(env, "GIT_CONFIG_COUNT"), "3");
  EXPECT_EQ(Get(env, "GIT_CONFIG_KEY_1"), "c.d") << "the caller's pairs stay";
  EXPECT_EQ(Get(env, "GIT_CONFIG_KEY_2"), "http.proxy");
  EXPECT_EQ(Get(env, "GIT_CONFIG_VALUE_2"), "http://127.0.0.1:4242");
  EXPECT_EQ(std::count_if(env.begin(), env.end(),
                          [](const std::string& e) { return e.rfind("HTTPS_PROXY=", 0) == 0; }),
            1);
  std::vector<std::string> bare = {"PATH=/usr/bin"};
  SetWebProxyEnv(bare, "http://127.0.0.1:1");
  EXPECT_EQ(Get(bare, "GIT_CONFIG_COUNT"), "1");
  EXPECT_EQ(Get(bare, "GIT_CONFIG_KEY_0"), "http.proxy");
}

}  // namespace
}  // namespace cordon::supervisor
