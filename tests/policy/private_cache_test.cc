// policy::PlanCacheEnv and the cache's place, table-tested without a kernel.
#include "policy/private_cache.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

namespace cordon::policy {
namespace {

const std::string kCache = "/state/cordon/caches/c";

std::map<std::string, CacheSetting> Plan(const std::vector<std::string>& env,
                                         const std::vector<PathRule>& extra = {}) {
  std::vector<PathRule> rules = {PathRule::ReadWrite("/ws"), PathRule::ReadOnly("/home/u"),
                                 PrivateCacheRule(kCache)};
  rules.insert(rules.end(), extra.begin(), extra.end());
  // Canonical as written, but for one link: /home/u/link -> /ws/real.
  auto canonical = [](const std::string& v) -> std::string {
    if (v.empty() || v[0] != '/') return {};
    return v.rfind("/home/u/link", 0) == 0 ? "/ws/real" + v.substr(12) : v;
  };
  std::map<std::string, CacheSetting> out;
  for (CacheSetting& s : PlanCacheEnv(env, "/home/u", rules, kCache, canonical)) {
    out[s.name] = std::move(s);
  }
  return out;
}

TEST(PrivateCache, ThePlaceIsTheWorkspacesDigestUnderTheStateHome) {
  const std::string d = PrivateCacheDir("/s", "/w");
  EXPECT_EQ(d.rfind("/s/cordon/caches/", 0), 0u);
  EXPECT_EQ(d.size(), std::string("/s/cordon/caches/").size() + 64);
  EXPECT_NE(d, PrivateCacheDir("/s", "/w2"));
  const PathRule r = PrivateCacheRule(d);
  EXPECT_EQ(r.access, Access::kReadWrite);
  EXPECT_TRUE(r.disposable);
  EXPECT_FALSE(r.executable);
  EXPECT_STREQ(r.source.c_str(), kPrivateCacheSource);
}

TEST(PrivateCache, UnsetVariablesPointIntoThePrivateCache) {
  auto p = Plan({"HOME=/home/u"});
  ASSERT_EQ(p.size(), CacheVars().size());
  EXPECT_EQ(p["XDG_CACHE_HOME"].value, kCache + "/xdg");
  EXPECT_EQ(p["PIP_CACHE_DIR"].value, kCache + "/pip");
  EXPECT_EQ(p["npm_config_cache"].value, kCache + "/npm");
  EXPECT_EQ(p["YARN_CACHE_FOLDER"].value, kCache + "/yarn");
  EXPECT_EQ(p["GOCACHE"].value, kCache + "/go-build");
  EXPECT_EQ(p["GOMODCACHE"].value, kCache + "/go-mod");
  EXPECT_EQ(p["CCACHE_DIR"].value, kCache + "/ccache");
  EXPECT_EQ(p.count("CARGO_HOME"), 0u) << "the toolchain's home is not a cache";
  for (auto& [n, s] : p) EXPECT_EQ(s.replaced, "") << n;
}

TEST(PrivateCache, AUsersValueIsKeptOnlyWhereTheRunMayWrite) {
  auto p = Plan({"CCACHE_DIR=/ws/.ccache", "PIP_CACHE_DIR=/home/u/.cache/pip",
                 "GOCACHE=relative", "GOMODCACHE=/home/u/link/mod", "XDG_CACHE_HOME=/ws/ro"},
                {PathRule::ReadOnly("/ws/ro")});
  EXPECT_EQ(p["CCACHE_DIR"].value, "/ws/.ccache");
  EXPECT_EQ(p["CCACHE_DIR"].replaced, "");
  EXPECT_EQ(p["PIP_CACHE_DIR"].value, kCache + "/pip");
  EXPECT_EQ(p["PIP_CACHE_DIR"].replaced, "/home/u/.cache/pip");
  EXPECT_EQ(p["GOCACHE"].value, kCache + "/go-build") << "a relative value names nothing";
  EXPECT_EQ(p["GOCACHE"].replaced, "relative");
  EXPECT_EQ(p["GOMODCACHE"].value, "/home/u/link/mod") << "judged by where it leads";
  EXPECT_EQ(p["XDG_CACHE_HOME"].value, kCache + "/xdg") << "the most specific rule decides";
}

TEST(PrivateCache, AGrantOfTheUsersOwnCacheIsUsed) {
  auto p = Plan({}, {PathRule::ReadWrite("/home/u/.cache/pip"), PathRule::ReadWrite("/home/u/.npm"),
                     PathRule::ReadWrite("/home/u/go")});
  EXPECT_EQ(p["PIP_CACHE_DIR"].value, "/home/u/.cache/pip");
  EXPECT_EQ(p["npm_config_cache"].value, "/home/u/.npm");
  EXPECT_EQ(p["GOMODCACHE"].value, "/home/u/go/pkg/mod");
  EXPECT_EQ(p["XDG_CACHE_HOME"].value, kCache + "/xdg") << "~/.cache itself is not granted";
  EXPECT_EQ(p["CCACHE_DIR"].value, kCache + "/ccache");
  // The user's XDG_CACHE_HOME moves the tools' defaults with it.
  auto q = Plan({"XDG_CACHE_HOME=/elsewhere"}, {PathRule::ReadWrite("/elsewhere/ccache")});
  EXPECT_EQ(q["CCACHE_DIR"].value, "/elsewhere/ccache");
  EXPECT_EQ(q["XDG_CACHE_HOME"].value, kCache + "/xdg");
  EXPECT_EQ(q["XDG_CACHE_HOME"].replaced, "/elsewhere");
}

}  // namespace
}  // namespace cordon::policy
