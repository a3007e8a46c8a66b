#include "policy/policy_json.h"

namespace cordon::policy {

nlohmann::json PolicyToJson(const Policy& p) {
  nlohmann::json paths = nlohmann::json::array();
  for (const PathRule& r : p.paths) {
    paths.push_back({{"path", r.path}, {"access", AccessName(r.access)}, {"executable", r.executable}});
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
      {"limits",
       {{"max_tree_entries", p.limits.max_tree_entries},
        {"max_tree_depth", p.limits.max_tree_depth},
        {"max_delete_bytes", p.limits.max_delete_bytes}}},
  };
}

}  // namespace cordon::policy
