#include "policy/policy_json.h"

namespace cordon::policy {

nlohmann::json PolicyToJson(const Policy& p) {
  nlohmann::json paths = nlohmann::json::array();
  for (const PathRule& r : p.paths) {
    paths.push_back({{"path", r.path}, {"access", AccessName(r.access)}, {"executable", r.executable}});
  }
  nlohmann::json tools = nlohmann::json::array();
  for (const ToolPin& t : p.tools) {
    auto digest = t.identity.Sha256();
    nlohmann::json tool = {
        {"name", t.name}, {"path", t.path}, {"size", static_cast<int64_t>(t.identity.size)}};
    if (digest) {
      tool["sha256"] = digest.value();
    } else {
      tool["sha256_error"] = Describe(digest.error());
    }
    tools.push_back(std::move(tool));
  }
  nlohmann::json dropped = nlohmann::json::array();
  for (const DroppedPath& d : p.dropped) dropped.push_back({{"path", d.path}, {"reason", d.reason}});
  return {
      {"profile", ProfileName(p.profile)},
      {"profile_reason", p.profile_reason},
      {"workspace", p.workspace},
      {"paths", std::move(paths)},
      {"dropped", std::move(dropped)},
      {"network", NetworkName(p.network)},
      {"private_tmp", p.private_tmp},
      {"sandbox_enabled", p.sandbox_enabled},
      {"allow_bypass", p.allow_bypass},
      {"add_cwd", p.add_cwd},
      {"protected_patterns", p.protected_patterns},
      {"protected_paths", p.protected_paths},
      {"sensitive_delete", SensitiveDeleteName(p.sensitive_delete)},
      {"links", LinkModeName(p.links)},
      {"tools", std::move(tools)},
      {"limits", LimitsToJson(p.limits)},
  };
}

nlohmann::json LimitsToJson(const Limits& l) {
  return {{"max_tree_entries", l.max_tree_entries},
          {"max_tree_depth", l.max_tree_depth},
          {"max_delete_bytes", l.max_delete_bytes}};
}

}  // namespace cordon::policy
