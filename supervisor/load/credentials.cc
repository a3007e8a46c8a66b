#include "supervisor/load/credentials.h"

#include <algorithm>

#include "supervisor/load/normalise.h"
#include "supervisor/load/path_resolver.h"

namespace cordon::supervisor {
namespace {

constexpr const char* kPaths[] = {
    // Keys and agents' configuration.
    ".ssh",
    ".gnupg",
    // Cloud and cluster logins.
    ".aws",
    ".azure",
    ".config/gcloud",
    ".kube",
    ".terraform.d",
    // Registries and forges.
    ".docker/config.json",
    ".netrc",
    ".git-credentials",
    ".config/gh",
    ".npmrc",
    ".pypirc",
    ".cargo/credentials",
    ".cargo/credentials.toml",
    // Password stores and keyrings.
    ".password-store",
    ".local/share/keyrings",
    // Browser profiles: cookies, saved passwords, session tokens.
    ".mozilla",
    ".config/google-chrome",
    ".config/chromium",
    ".config/BraveSoftware",
};

// The name the rule lookup knows `path` by (canonical; see the header). A
// path that cannot be resolved for another reason (a file where a
// directory is expected, a loop) is denied as written: a denial is never
// broader than its path.
std::string CanonicalName(PathResolver& resolve, const std::string& path) {
  auto real = resolve.Real(path);
  if (real) return std::move(real.value());
  if (real.error().err == ENOENT) {
    auto missing = resolve.RealOfMissing(path);
    if (missing) return std::move(missing.value());
  }
  return path;
}

}  // namespace

std::span<const char* const> CredentialPaths() { return kPaths; }

void AddCredentialDenials(policy::Policy& p, const std::string& caller_home) {
  std::string home = CanonicalHome(caller_home);
  if (home.empty()) return;
  if (home == "/") home.clear();
  // The list shares its prefixes (HOME, ~/.config, ~/.local/share): each
  // is resolved once.
  PathResolver resolve;
  for (const char* rel : kPaths) {
    std::string path = CanonicalName(resolve, home + "/" + rel);
    // Two names of one place (a symlink to another listed path): one rule.
    const bool seen =
        std::any_of(p.base_paths.begin(), p.base_paths.end(), [&](const policy::PathRule& r) {
          return r.path == path && r.access == policy::Access::kDenied;
        });
    if (seen) continue;
    p.base_paths.push_back({std::move(path), policy::Access::kDenied, false, kCredentialSource});
  }
}

}  // namespace cordon::supervisor
