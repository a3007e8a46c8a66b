// The policy model: plain data, validated once, then const. Every source of
// policy (command line, JSON file, seed-004 settings) ends up in a Policy;
// the supervisor compiles it into the kernel fence and its decisions.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace cordon::policy {

enum class Profile { kReadOnly, kWorkspaceWrite };
enum class Network { kNone, kAllow };

// What a path grants the tool. kDenied carves a hole in an allowed parent.
enum class Access { kReadOnly, kReadWrite, kDenied };

const char* ProfileName(Profile p);
const char* NetworkName(Network n);
const char* AccessName(Access a);

struct PathRule {
  std::string path;  // absolute; realpath once normalised
  Access access = Access::kReadOnly;
  bool executable = true;  // Landlock EXECUTE granted (read-only set only)

  static PathRule ReadOnly(std::string p) { return {std::move(p), Access::kReadOnly, true}; }
  static PathRule ReadOnlyNoExec(std::string p) { return {std::move(p), Access::kReadOnly, false}; }
  static PathRule ReadWrite(std::string p) { return {std::move(p), Access::kReadWrite, true}; }
  static PathRule Denied(std::string p) { return {std::move(p), Access::kDenied, false}; }
};

struct DroppedPath {
  std::string path;
  std::string reason;
};

struct Limits {
  std::size_t max_tree_entries = 10000;
  std::size_t max_tree_depth = 64;
  std::size_t max_delete_bytes = 20u << 20;
};

struct Policy {
  Profile profile = Profile::kReadOnly;
  std::string profile_reason = "no profile named: legacy read-only policy";
  std::string workspace;           // absolute realpath of the workspace
  std::vector<PathRule> paths;     // user rules, on top of the system set
  std::vector<DroppedPath> dropped;  // missing paths, dropped and reported
  Network network = Network::kNone;
  bool private_tmp = true;
  Limits limits;
};

// The read-only system set every run gets, before user rules: the binaries
// and libraries a tool needs, /etc minus secrets, a few devices, /proc.
std::vector<PathRule> SystemPaths();

// Everything the tool may reach, in order: the system set, the workspace
// (read-only or read-write by profile), the private TMPDIR (when not
// empty), then the policy's own rules.
std::vector<PathRule> EffectiveRules(const Policy& p, const std::string& private_tmp);

// Lexically normal absolute path: no "." or ".." or duplicate slashes, no
// trailing slash (except "/"). Returns false on a relative path.
bool IsAbsoluteNormal(const std::string& p);

// True when `path` equals `dir` or lies beneath it (both absolute, normal).
bool IsWithin(const std::string& path, const std::string& dir);

// Every problem with the policy, one line each; empty when valid.
std::vector<std::string> Validate(const Policy& p);

}  // namespace cordon::policy
