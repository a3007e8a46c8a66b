#include "policy/private_cache.h"

#include <string_view>

#include "policy/digest.h"

namespace cordon::policy {
namespace {

constexpr CacheVar kVars[] = {
    {"XDG_CACHE_HOME", "xdg"},    {"PIP_CACHE_DIR", "pip"}, {"npm_config_cache", "npm"},
    {"YARN_CACHE_FOLDER", "yarn"}, {"GOCACHE", "go-build"}, {"GOMODCACHE", "go-mod"},
    {"CCACHE_DIR", "ccache"},
};

std::string Get(const std::vector<std::string>& env, std::string_view name) {
  std::string out;
  for (const std::string& e : env) {
    if (e.size() > name.size() && e.compare(0, name.size(), name) == 0 && e[name.size()] == '=') {
      out = e.substr(name.size() + 1);  // the last one wins, as getenv's caller sees it
    }
  }
  return out;
}

// Where the tool caches when its variable is unset: under the user's
// ${XDG_CACHE_HOME:-~/.cache}, ~/.npm, ${GOPATH:-~/go}/pkg/mod. Empty when
// there is no such place (no home).
std::string ToolDefault(std::string_view name, const std::vector<std::string>& env,
                        const std::string& home) {
  std::string xdg = Get(env, "XDG_CACHE_HOME");
  if (xdg.empty() || xdg[0] != '/') xdg = home.empty() ? "" : home + "/.cache";
  if (name == "XDG_CACHE_HOME") return xdg;
  if (name == "npm_config_cache") return home.empty() ? "" : home + "/.npm";
  if (name == "GOMODCACHE") {
    std::string gopath = Get(env, "GOPATH");
    gopath = gopath.substr(0, gopath.find(':'));
    if (gopath.empty() || gopath[0] != '/') gopath = home.empty() ? "" : home + "/go";
    return gopath.empty() ? "" : gopath + "/pkg/mod";
  }
  if (xdg.empty()) return "";
  if (name == "PIP_CACHE_DIR") return xdg + "/pip";
  if (name == "YARN_CACHE_FOLDER") return xdg + "/yarn";
  if (name == "GOCACHE") return xdg + "/go-build";
  if (name == "CCACHE_DIR") return xdg + "/ccache";
  return "";
}

bool Writable(const std::vector<PathRule>& rules, const std::string& canonical) {
  if (canonical.empty()) return false;
  const PathRule* r = CoveringRule(rules, canonical);
  return r != nullptr && r->access == Access::kReadWrite;
}

}  // namespace

std::string PrivateCacheDir(const std::string& state_home, const std::string& workspace) {
  return state_home + "/cordon/caches/" + Sha256Hex(workspace);
}

PathRule PrivateCacheRule(const std::string& dir) {
  PathRule r = PathRule::ReadWrite(dir);
  r.executable = false;
  r.source = kPrivateCacheSource;
  r.disposable = true;
  return r;
}

std::span<const CacheVar> CacheVars() { return kVars; }

std::vector<CacheSetting> PlanCacheEnv(const std::vector<std::string>& env,
                                       const std::string& home,
                                       const std::vector<PathRule>& rules,
                                       const std::string& cache_dir,
                                       const Canonicalise& canonical) {
  std::vector<CacheSetting> out;
  for (const CacheVar& v : kVars) {
    CacheSetting s{v.name, cache_dir + "/" + v.subdir, ""};
    const std::string user = Get(env, v.name);
    if (!user.empty()) {
      if (Writable(rules, canonical(user))) s.value = user;
      else s.replaced = user;
    } else if (const std::string d = ToolDefault(v.name, env, home);
               !d.empty() && Writable(rules, canonical(d))) {
      s.value = d;  // the user granted their own cache: it is used
    }
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace cordon::policy
