// A private cache per workspace (issue 24 item 3; seed 004's base policy:
// "per-workspace caches are writable"). Under workspace-write a tool that
// needs a writable cache (pip, npm, yarn, go, ccache, ~/.cache) gets one
// that persists between runs of that workspace, outside it:
// ${XDG_STATE_HOME:-~/.local/state}/cordon/caches/<SHA-256 of the
// workspace's canonical path>. The user's own caches, which unconfined runs
// trust, are not written unless granted.
//
// The rule is read-write and disposable (PathRule::disposable): what an
// earlier run left there is the tool's own, deleted or replaced without an
// approval (policy/decide.h). CARGO_HOME is not redirected: it holds the
// toolchain and its configuration, not only a cache.
//
// Pure: which variables, and which paths. supervisor/load/private_cache.h
// makes the directory; supervisor/tool_env.cc sets the variables.
#pragma once

#include <functional>
#include <span>
#include <string>
#include <vector>

#include "policy/policy.h"

namespace cordon::policy {

// The source of the cache rule, for explain and the log.
inline constexpr const char* kPrivateCacheSource = "private cache of this workspace";

// `state_home` (absolute: ${XDG_STATE_HOME:-~/.local/state}) + the cache of
// `workspace` (its canonical path).
std::string PrivateCacheDir(const std::string& state_home, const std::string& workspace);

// The read-write, disposable rule of the cache directory `dir`.
PathRule PrivateCacheRule(const std::string& dir);

// A variable that names a tool's cache, and the subdirectory of the private
// cache it is pointed at.
struct CacheVar {
  const char* name;
  const char* subdir;
};
// XDG_CACHE_HOME, PIP_CACHE_DIR, npm_config_cache, YARN_CACHE_FOLDER,
// GOCACHE, GOMODCACHE, CCACHE_DIR.
std::span<const CacheVar> CacheVars();

// One cache variable as the tool gets it.
struct CacheSetting {
  std::string name;
  std::string value;
  // The user's own value when it is replaced (not writable under the run's
  // policy), for the log; empty when the user set none or it is kept.
  std::string replaced;
};

// Makes a path canonical (realpath of its longest existing prefix, the rest
// appended); empty when it cannot (relative, a "..", unreadable).
using Canonicalise = std::function<std::string(const std::string&)>;

// The value of every cache variable under `rules` (the run's effective
// rules), given the caller's environment `env` ("NAME=VALUE"), the caller's
// canonical `home` (may be empty) and the private cache `cache_dir`:
// - a value the user set is kept when the path it names is writable under
//   `rules`, else replaced by cache_dir/<subdir>;
// - an unset variable names the tool's default place in the user's own
//   cache (~/.cache/pip, ~/.npm, ~/go/pkg/mod, ...) when the user granted
//   it read-write (`--rw ~/.cache/pip`), else cache_dir/<subdir>.
std::vector<CacheSetting> PlanCacheEnv(const std::vector<std::string>& env,
                                       const std::string& home,
                                       const std::vector<PathRule>& rules,
                                       const std::string& cache_dir,
                                       const Canonicalise& canonical);

}  // namespace cordon::policy
