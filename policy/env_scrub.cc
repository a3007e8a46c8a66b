#include "policy/env_scrub.h"

#include <algorithm>

namespace cordon::policy {
namespace {

// `*X`: ends with X; `X*`: starts with X; `*X*`: contains X; else exact.
// Upper case: names are compared case-insensitively (npm reads
// `npm_config_//host/:_authToken`, CI systems export lower-case ones).
constexpr const char* kPatterns[] = {
    // What a name says it holds.
    "*_TOKEN",
    "*_SECRET",
    "*_PASSWORD",
    "*_PASSWD",
    "*_PASSPHRASE",
    "*_KEY",
    "*_APIKEY",
    "*_AUTH",
    "*_AUTHTOKEN",
    "*_CREDENTIAL",
    "*_CREDENTIALS",
    "*_SECRET_*",
    "*_JWT*",
    "SECRET_*",
    "*_PAT",
    "*_DSN",
    "*PRIVATE_KEY*",
    // Whole families: a cloud's keys and sessions.
    "AWS_*",
    "TF_TOKEN_*",
    "OP_SESSION_*",
    // Bare names and well-known ones no suffix catches (API_KEY is *_KEY's).
    "TOKEN",
    "SECRET",
    "PASSWORD",
    "PGPASSWORD",
    "MYSQL_PWD",
    "BW_SESSION",
    "DOCKER_AUTH_CONFIG",
    // Agents that sign or log in with the user's keys.
    "SSH_AUTH_SOCK",
    "GPG_AGENT_INFO",
};

// What cordon sets in the tool's environment itself (the caller's own
// CORDON_* are dropped before: supervisor::ApplyPreloadEnv).
bool SetByCordon(std::string_view name) {
  return name == "TMPDIR" || name == "HOME" || name == "LD_PRELOAD" ||
         name.substr(0, 7) == "CORDON_";
}

bool Matches(std::string_view pattern, std::string_view upper) {
  const bool head = !pattern.empty() && pattern.front() == '*';
  const bool tail = pattern.size() > 1 && pattern.back() == '*';
  std::string_view core = pattern.substr(head ? 1 : 0);
  if (tail) core.remove_suffix(1);
  if (head && tail) return upper.find(core) != std::string_view::npos;
  if (head) return upper.ends_with(core);
  if (tail) return upper.starts_with(core);
  return upper == core;
}

}  // namespace

std::span<const char* const> SecretEnvPatterns() { return kPatterns; }

bool UrlWithPassword(std::string_view value) {
  const std::size_t scheme = value.find("://");
  if (scheme == std::string_view::npos || scheme == 0) return false;
  std::string_view authority = value.substr(scheme + 3);
  authority = authority.substr(0, authority.find_first_of("/?#"));
  const std::size_t at = authority.rfind('@');
  return at != std::string_view::npos &&
         authority.substr(0, at).find(':') != std::string_view::npos;
}

const char* SecretEnvPattern(std::string_view name) {
  std::string upper(name);
  for (char& c : upper) {
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');  // ASCII: no locale
  }
  for (const char* p : kPatterns) {
    if (Matches(p, upper)) return p;
  }
  return nullptr;
}

bool RemovedFromToolEnv(std::string_view name, const std::vector<std::string>& keep) {
  if (SetByCordon(name)) return false;
  if (std::find(keep.begin(), keep.end(), name) != keep.end()) return false;
  return SecretEnvPattern(name) != nullptr;
}

std::vector<std::string> ScrubEnv(const std::vector<std::string>& env,
                                  const std::vector<std::string>& keep,
                                  std::vector<std::string>* removed) {
  std::vector<std::string> out;
  out.reserve(env.size());
  for (const std::string& e : env) {
    const std::size_t eq = e.find('=');
    std::string_view name = std::string_view(e).substr(0, eq);
    const bool kept = std::find(keep.begin(), keep.end(), name) != keep.end();
    const bool url_secret = eq != std::string::npos && !kept && !SetByCordon(name) &&
                            UrlWithPassword(std::string_view(e).substr(eq + 1));
    if (eq != std::string::npos && (url_secret || RemovedFromToolEnv(name, keep))) {
      if (removed != nullptr) removed->emplace_back(name);
      continue;
    }
    out.push_back(e);
  }
  return out;
}

}  // namespace cordon::policy
