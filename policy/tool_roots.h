// Which toolchain a tool path belongs to, by its layout (seed 004's base
// policy: "available tool paths read-only"). Pure: the supervisor gathers
// the paths (supervisor/load/tool_roots.h) and asks these functions.
#pragma once

#include <optional>
#include <utility>
#include <string>
#include <string_view>
#include <vector>

namespace cordon::policy {

struct ToolRootContext {
  std::string home;               // the caller's home, canonical; empty: unknown
  std::string runner_tool_cache;  // $RUNNER_TOOL_CACHE, canonical; empty: unset
  // The toolchains' own variables naming where they live (PYENV_ROOT,
  // NVM_DIR, CARGO_HOME, RUSTUP_HOME, GOPATH, ...: kToolRootVariables), by
  // name, canonical; a container or CI job whose HOME is not where the
  // tools were installed finds them there.
  std::vector<std::pair<std::string, std::string>> env_dirs;
};

// The variables ToolRootContext::env_dirs may hold.
inline constexpr const char* kToolRootVariables[] = {
    "PYENV_ROOT", "RBENV_ROOT",  "NVM_DIR",       "CARGO_HOME",   "RUSTUP_HOME", "GOPATH",
    "ASDF_DIR",   "ASDF_DATA_DIR", "VOLTA_HOME", "BUN_INSTALL", "DENO_INSTALL", "SDKMAN_DIR"};

// The variables that name what the caller's tools read besides their
// install: CA bundles and certificate directories (a company's CA in
// ~/certs, which every TLS client of the run needs) and pip's local
// find-links. What they name is granted read-only, never executable
// (ToolInputPaths). Not a variable that may name a secret (a client key,
// a config file that holds an index's password).
inline constexpr const char* kToolInputVariables[] = {
    "SSL_CERT_FILE",       "SSL_CERT_DIR",      "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE",
    "NODE_EXTRA_CA_CERTS", "GIT_SSL_CAINFO",    "GIT_SSL_CAPATH",     "PIP_CERT",
    "npm_config_cafile",   "CARGO_HTTP_CAINFO", "PIP_FIND_LINKS"};

// The absolute paths variable `name` (one of kToolInputVariables) names
// in `value`: one path; SSL_CERT_DIR a ':'-separated list (OpenSSL's);
// PIP_FIND_LINKS a whitespace-separated list of paths and URLs, of which
// absolute paths and file:// URLs name paths. Relative paths name the
// tool's cwd (the workspace), so nothing of their own.
std::vector<std::string> ToolInputPaths(std::string_view name, std::string_view value);

// The install root(s) of the toolchain `path` (absolute, normal) lies in:
// ~/.pyenv, ~/.nvm/versions/node/V, ~/.cargo with ~/.rustup, ~/.local's
// tool subtrees (bin, lib, share/pipx, share/uv/{tools,python}: not
// share/ or state/, which hold keyrings and cordon's own records), ~/go,
// /opt/X, /usr/local, linuxbrew, a runner's hostedtoolcache/TOOL/VER/ARCH...
// `layout` names the layout (null: none matched); `roots` is empty when the
// path lies in a layout but above its install directories (~/.nvm itself).
struct ToolchainRoot {
  const char* layout = nullptr;
  std::vector<std::string> roots;
};
ToolchainRoot ToolchainRootOf(std::string_view path, const ToolRootContext& ctx);

// Why `dir` (absolute, normal) must never be granted as a tool path, or
// null: the root directory, the home itself or one of its ancestors, the
// kernel's interfaces (/proc, /sys, /dev).
const char* WideningRefusal(std::string_view dir, const ToolRootContext& ctx);

// A script's first line: its absolute interpreter and, for `env [-S] X`,
// the program X to find on PATH. Nullopt when the line is no `#!` line or
// names a relative interpreter.
struct Shebang {
  std::string interpreter;
  std::string env_program;  // empty unless the interpreter is env
};
std::optional<Shebang> ParseShebang(std::string_view first_line);

}  // namespace cordon::policy
