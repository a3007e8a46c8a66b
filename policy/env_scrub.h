// Which environment variables carry secrets and are removed from the tool's
// environment (seed 004, issue 24 item 4: "credentials stay out, whatever
// else is granted"). An agent's shell command inherits the caller's
// environment; a token there is a credential as much as ~/.aws is.
//
// Names are matched case-insensitively against fixed patterns: `*_TOKEN`
// (ends with), `AWS_*` (starts with), `*_SECRET_*` (contains) or an exact
// name. `--env-keep NAME` keeps one variable whatever it matches; the
// variables cordon sets itself (TMPDIR, HOME, LD_PRELOAD, CORDON_*) are
// never removed. Pure: no I/O (supervisor/tool_env.cc applies it).
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace cordon::policy {

// The patterns, in the order `policy explain` lists them.
std::span<const char* const> SecretEnvPatterns();

// Whether `value` is a URL that carries a password (scheme://user:pw@host:
// DATABASE_URL, a proxy's credentials): removed whatever its name.
bool UrlWithPassword(std::string_view value);

// The pattern `name` matches, or null when it matches none.
const char* SecretEnvPattern(std::string_view name);

// Whether the variable `name` is removed from the tool's environment, given
// the names the user keeps (`--env-keep`, exact and case-sensitive).
bool RemovedFromToolEnv(std::string_view name, const std::vector<std::string>& keep);

// `env` ("NAME=VALUE" entries) without the removed variables (a secret's
// name, or a value UrlWithPassword), their names
// are appended to `removed` when it is not null. An entry without '=' is
// kept as it is.
std::vector<std::string> ScrubEnv(const std::vector<std::string>& env,
                                  const std::vector<std::string>& keep,
                                  std::vector<std::string>* removed = nullptr);

}  // namespace cordon::policy
