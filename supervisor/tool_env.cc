#include "supervisor/tool_env.h"

#include <limits.h>
#include <spdlog/spdlog.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include "policy/env_scrub.h"
#include "policy/private_cache.h"
#include "supervisor/load/normalise.h"
#include "supervisor/write_roots.h"

namespace cordon::supervisor {
namespace {

std::string Value(const std::string& entry) { return entry.substr(entry.find('=') + 1); }

// The granted paths strictly inside `home`, as links from the private home;
// one beneath another granted path is reached through that one's link.
// Not the run's private cache: the tool is given it by its real path (the
// cache variables), and linking it cost four directories made and removed
// every run.
std::vector<HomeLink> LinksInto(const std::vector<policy::PathRule>& rules, const std::string& home,
                                const std::string& private_home, const std::string& private_cache) {
  std::vector<std::string> granted;
  for (const policy::PathRule& r : rules) {
    if (!private_cache.empty() && policy::IsWithin(r.path, private_cache)) continue;
    if (r.path != home && policy::IsWithin(r.path, home) && policy::ReadableUnder(rules, r.path)) {
      granted.push_back(r.path);
    }
  }
  std::sort(granted.begin(), granted.end(),
            [](const std::string& a, const std::string& b) { return a.size() < b.size(); });
  std::vector<HomeLink> links;
  for (const std::string& g : granted) {
    bool beneath = std::any_of(links.begin(), links.end(),
                               [&](const HomeLink& l) { return policy::IsWithin(g, l.target); });
    if (!beneath) links.push_back({private_home + g.substr(home.size()), g});
  }
  return links;
}

// The cache variables the tool gets (none without a private cache).
std::vector<policy::CacheSetting> CacheSettings(const std::vector<std::string>& caller_env,
                                                const policy::Policy& p,
                                                const std::string& caller_home) {
  if (p.private_cache.empty()) return {};
  auto canonical = [](const std::string& v) -> std::string {
    std::string norm;
    if (v.empty() || !NormaliseNoDotDot(v, norm)) return {};
    auto real = RealPathOfMissing(norm);
    return real ? real.value() : std::string();
  };
  return policy::PlanCacheEnv(caller_env, caller_home, policy::EffectiveRules(p, ""),
                              p.private_cache, canonical);
}

bool Named(const std::string& entry, const std::vector<policy::CacheSetting>& caches) {
  return std::any_of(caches.begin(), caches.end(), [&](const policy::CacheSetting& c) {
    return entry.size() > c.name.size() && entry.compare(0, c.name.size(), c.name) == 0 &&
           entry[c.name.size()] == '=';
  });
}

void SetCaches(const std::vector<policy::CacheSetting>& caches, ToolEnv& out) {
  for (const policy::CacheSetting& c : caches) {
    out.env.push_back(c.name + "=" + c.value);
    if (!c.replaced.empty()) {
      out.cache_notes.push_back(c.name + "=" + c.replaced +
                                " is not writable under this run's policy: the tool gets " +
                                c.value + " (its private cache; --rw grants yours)");
    }
  }
}

ToolEnv MakeToolEnvWithoutProxy(const std::vector<std::string>& all_env, const policy::Policy& p,
                                const std::string& private_tmp) {
  ToolEnv out;
  const std::vector<std::string> caller_env = policy::ScrubEnv(all_env, p.env_keep, &out.removed);
  std::string home;
  for (const std::string& e : caller_env) {
    if (e.rfind("HOME=", 0) == 0) home = Value(e);
  }
  char real[PATH_MAX];
  std::string caller_home;
  if (!home.empty() && home[0] == '/' && ::realpath(home.c_str(), real) != nullptr) {
    caller_home = real;
  }
  const std::vector<policy::CacheSetting> caches = CacheSettings(caller_env, p, caller_home);
  if (private_tmp.empty()) {
    for (const std::string& e : caller_env) {
      if (!Named(e, caches)) out.env.push_back(e);
    }
    SetCaches(caches, out);
    return out;
  }
  const std::vector<policy::PathRule> rules = policy::EffectiveRules(p, "");
  const bool move_home = !caller_home.empty() && !policy::ReadableUnder(rules, caller_home);
  if (move_home) {
    out.private_home = private_tmp + "/home";
    out.home_links = LinksInto(rules, caller_home, out.private_home, p.private_cache);
  }
  for (const std::string& e : caller_env) {
    if (Named(e, caches)) continue;
    if (e.rfind("TMPDIR=", 0) == 0) continue;
    if (move_home && e.rfind("HOME=", 0) == 0) continue;
    if (move_home && e.rfind("XDG_", 0) == 0) {
      std::string_view name = std::string_view(e).substr(0, e.find('='));
      std::string value = Value(e);
      // One that pointed into the real home points to the same place in
      // the private one, where what the policy grants there is linked
      // (git's $XDG_CONFIG_HOME/git/config) and nothing else is.
      if (name.ends_with("_HOME")) {
        const std::string& from = policy::IsWithin(value, home)          ? home
                                  : policy::IsWithin(value, caller_home) ? caller_home
                                                                         : value;
        if (&from != &value) {
          out.env.push_back(std::string(name) + "=" + out.private_home +
                            value.substr(std::min(from.size(), value.size())));
          continue;
        }
      }
    }
    out.env.push_back(e);
  }
  out.env.push_back("TMPDIR=" + private_tmp);
  if (move_home) out.env.push_back("HOME=" + out.private_home);
  SetCaches(caches, out);
  return out;
}

}  // namespace

void SetWebProxyEnv(std::vector<std::string>& env, const std::string& url) {
  static constexpr std::string_view kNames[] = {
      "HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy",
      "npm_config_proxy", "npm_config_https_proxy", "NO_PROXY", "no_proxy"};
  auto name_of = [](const std::string& e) { return std::string_view(e).substr(0, e.find('=')); };
  long count = 0;
  for (const std::string& e : env) {
    if (name_of(e) != "GIT_CONFIG_COUNT") continue;
    char* end = nullptr;
    count = std::strtol(e.c_str() + sizeof "GIT_CONFIG_COUNT", &end, 10);
    if (end == nullptr || *end != '\0' || count < 0 || count > 100000) count = 0;
  }
  std::erase_if(env, [&](const std::string& e) {
    std::string_view n = name_of(e);
    return n == "GIT_CONFIG_COUNT" ||
           std::find(std::begin(kNames), std::end(kNames), n) != std::end(kNames);
  });
  for (std::string_view n : kNames) {
    const bool no = n == "NO_PROXY" || n == "no_proxy";
    env.push_back(std::string(n) + "=" + (no ? "localhost,127.0.0.1,::1" : url));
  }
  const std::string i = std::to_string(count);
  std::erase_if(env, [&](const std::string& e) {
    return e.starts_with("GIT_CONFIG_KEY_" + i + "=") || e.starts_with("GIT_CONFIG_VALUE_" + i + "=");
  });
  env.push_back("GIT_CONFIG_KEY_" + i + "=http.proxy");
  env.push_back("GIT_CONFIG_VALUE_" + i + "=" + url);
  env.push_back("GIT_CONFIG_COUNT=" + std::to_string(count + 1));
}

ToolEnv MakeToolEnv(const std::vector<std::string>& all_env, const policy::Policy& p,
                    const std::string& private_tmp, const std::string& web_proxy) {
  ToolEnv out = MakeToolEnvWithoutProxy(all_env, p, private_tmp);
  if (!web_proxy.empty()) SetWebProxyEnv(out.env, web_proxy);
  return out;
}

Status MakePrivateHome(const ToolEnv& e) {
  if (e.private_home.empty()) return Ok();
  if (::mkdir(e.private_home.c_str(), 0700) != 0) return Errno("mkdir", e.private_home);
  for (const HomeLink& l : e.home_links) {
    // The parents are the private home's own directories: no link is
    // beneath another, so nothing here is made through one.
    bool ok = true;
    for (size_t slash = l.link.find('/', e.private_home.size() + 1);
         ok && slash != std::string::npos; slash = l.link.find('/', slash + 1)) {
      ok = ::mkdir(l.link.substr(0, slash).c_str(), 0700) == 0 || errno == EEXIST;
    }
    if (!ok || ::symlink(l.target.c_str(), l.link.c_str()) != 0) {
      spdlog::warn("private HOME: cannot link {} to {}: {}", l.link, l.target,
                   std::strerror(errno));
    }
  }
  return Ok();
}

}  // namespace cordon::supervisor
