#include "policy/policy_digest.h"

#include <nlohmann/json.hpp>

#include "policy/digest.h"
#include "policy/policy_json.h"

namespace cordon::policy {
namespace {

// Paths are realpaths and need not be UTF-8, which JSON strings must be. A
// non-UTF-8 path is written as "hex:" + its bytes in hex; no absolute path
// starts with "hex:", so the encoding stays one-to-one.
nlohmann::json Text(const std::string& s) {
  try {
    (void)nlohmann::json(s).dump();
    return s;
  } catch (const nlohmann::json::type_error&) {
    static const char* k = "0123456789abcdef";
    std::string hex = "hex:";
    for (unsigned char c : s) {
      hex += k[c >> 4];
      hex += k[c & 15];
    }
    return hex;
  }
}

}  // namespace

std::string CanonicalPolicyJson(const Policy& p) {
  using nlohmann::json;
  json paths = json::array();
  for (const PathRule& r : p.paths) {
    paths.push_back({{"path", Text(r.path)}, {"access", AccessName(r.access)}, {"exec", r.executable}});
  }
  json patterns = json::array();
  for (const std::string& pat : p.protected_patterns) patterns.push_back(Text(pat));
  json tools = json::array();
  for (const ToolPin& t : p.tools) tools.push_back({{"name", Text(t.name)}, {"path", Text(t.path)}});
  json j{{"profile", ProfileName(p.profile)},
         {"workspace", Text(p.workspace)},
         {"paths", std::move(paths)},
         {"network", NetworkName(p.network)},
         {"private_tmp", p.private_tmp},
         {"sandbox_enabled", p.sandbox_enabled},
         {"allow_bypass", p.allow_bypass},
         {"protected_patterns", std::move(patterns)},
         {"sensitive_delete", SensitiveDeleteName(p.sensitive_delete)},
         {"links", LinkModeName(p.links)},
         {"tools", std::move(tools)},
         {"limits", LimitsToJson(p.limits)}};
  return j.dump();
}

std::string PolicyDigest(const Policy& p) { return Sha256Hex(CanonicalPolicyJson(p)); }

}  // namespace cordon::policy
