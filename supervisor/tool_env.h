// The tool's environment: the caller's, with TMPDIR pointing at the run's
// private directory and, when the policy does not let the tool read the
// caller's home, HOME pointing at a private one beneath it.
//
// An unreadable HOME is in an honest tool's way more than an empty one: git
// stops ("unable to access '~/.gitconfig': Permission denied", then fatal
// for `git config`), and every cache under ~/.cache fails to write. The
// private home ($TMPDIR/home, 0700) is writable and removed with TMPDIR;
// XDG_*_HOME variables inside the caller's home are dropped so they follow
// it. A policy that grants the caller's home (`--ro ~`, a workspace that
// holds it) keeps HOME as it is. What the policy grants inside the caller's
// home (`--ro ~/.gitconfig`, `--rw ~/.cache/pip`) is linked into the private
// one at the same relative place, so a tool finds it where it looks.
//
// With a private cache (policy/private_cache.h) the cache variables
// (XDG_CACHE_HOME, PIP_CACHE_DIR, ...) are set as policy::PlanCacheEnv
// decides: the user's value when the run may write it, else a directory of
// the private cache.
#pragma once

#include <string>
#include <vector>

#include "policy/policy.h"
#include "base/result.h"

namespace cordon::supervisor {

struct HomeLink {
  std::string link;    // inside private_home
  std::string target;  // the granted path in the caller's home
};

struct ToolEnv {
  std::vector<std::string> env;
  // The caller's variables left out as secrets (policy/env_scrub.h).
  std::vector<std::string> removed;
  std::string private_home;  // to make (0700) before the tool starts; empty: none
  // Symlinks to make in private_home, shallowest first; none is beneath
  // another, so their parents are plain directories of the private home.
  std::vector<HomeLink> home_links;
  // One line per cache variable of the user's that was replaced (not
  // writable under the run's policy), for the log.
  std::vector<std::string> cache_notes;
};

// `private_tmp` empty: no private TMPDIR, so the environment is the caller's.
// Either way the variables that carry secrets are left out, but those
// p.env_keep names (policy::ScrubEnv).
// `web_proxy` (http://127.0.0.1:PORT, public-web and hosts:): every client
// is pointed at it (SetWebProxyEnv).
ToolEnv MakeToolEnv(const std::vector<std::string>& caller_env, const policy::Policy& p,
                    const std::string& private_tmp, const std::string& web_proxy = {});

// The proxy variables the common clients read, replacing the caller's:
// HTTPS_PROXY, HTTP_PROXY, ALL_PROXY and their lower-case forms (curl,
// pip, requests, Go, ...), npm_config_proxy and npm_config_https_proxy,
// git's http.proxy as one more GIT_CONFIG_KEY_n/VALUE_n pair (appended to
// the caller's GIT_CONFIG_COUNT), and NO_PROXY/no_proxy naming loopback
// only, so the tool's own servers are reached directly. A client that
// ignores them and goes direct is refused by the kernel fence, not let out.
void SetWebProxyEnv(std::vector<std::string>& env, const std::string& url);

// Makes the private home (0700) and its links. A link that cannot be made
// is logged and left out (the tool then misses a file it may read anyway);
// the home itself failing is an error.
Status MakePrivateHome(const ToolEnv& e);

}  // namespace cordon::supervisor
