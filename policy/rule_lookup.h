// The one rule lookup: which of a set of path rules covers a path.
//
// The most specific rule wins: of the rules whose path is the path itself
// or one of its ancestors, the longest. On equal specificity (two rules of
// one path, whatever their order and wherever they came from: the system
// set, a policy file, the command line, seed 004's settings) the stricter
// wins: denied, then read-only, then read-write.
//
// Every layer asks this one function: the kernel layer is planned to it
// (PlanGrants), the preload refuses early by it (AdmissionTable), the
// supervisor decides by it (WriteRoots) and `policy explain` says it, so
// they cannot disagree about a path.
//
// Lexical only: paths are absolute and normal (IsAbsoluteNormal). No heap,
// no I/O, no locks: async-signal-safe, the preload runs it inside the tool.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace cordon::policy {

// What a path rule grants the tool. kDenied carves a hole in an allowed
// parent. The values are part of the preload's wire format.
enum class Access : std::uint8_t { kReadOnly = 0, kReadWrite = 1, kDenied = 2 };

// Denied is stricter than read-only, which is stricter than read-write.
constexpr int Strictness(Access a) {
  switch (a) {
    case Access::kDenied: return 2;
    case Access::kReadOnly: return 1;
    case Access::kReadWrite: return 0;
  }
  return 2;
}

// True when `path` equals `dir` or lies beneath it (both absolute, normal).
// The byte after the leading '/' and the rule's last byte reject most rules
// before the compare: the preload runs this on every call it sees.
inline bool PathWithin(std::string_view path, std::string_view dir) {
  if (dir.size() <= 1) return dir == "/" && !path.empty() && path[0] == '/';
  return path.size() >= dir.size() && path[1] == dir[1] && path[dir.size() - 1] == dir.back() &&
         (path.size() == dir.size() || path[dir.size()] == '/') &&
         std::memcmp(path.data(), dir.data(), dir.size()) == 0;
}

// Whether a rule of `len` bytes granting `access` outranks the best so far.
constexpr bool Outranks(std::size_t len, Access access, std::size_t best_len, Access best) {
  return len > best_len || (len == best_len && Strictness(access) > Strictness(best));
}

// The index of the rule covering `path` among `count` rules, or -1 when no
// rule does. `rule(i)` gives rule i's path (a string_view) and `access(i)`
// its access.
template <class PathOf, class AccessOf>
long CoveringRule(std::size_t count, std::string_view path, const PathOf& rule,
                  const AccessOf& access) {
  long best = -1;
  std::size_t best_len = 0;
  Access best_access = Access::kReadWrite;
  for (std::size_t i = 0; i < count; ++i) {
    std::string_view r = rule(i);
    if (!PathWithin(path, r)) continue;
    Access a = access(i);
    if (best < 0 || Outranks(r.size(), a, best_len, best_access)) {
      best = static_cast<long>(i);
      best_len = r.size();
      best_access = a;
    }
  }
  return best;
}

}  // namespace cordon::policy
