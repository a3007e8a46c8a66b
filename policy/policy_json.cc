#include "policy/policy_json.h"

#include "policy/network_mode.h"

namespace cordon::policy {
namespace {

using nlohmann::json;

json RuleJson(const PathRule& r, PolicyJsonView view) {
  json j = {{"path", JsonText(r.path)}, {"access", AccessName(r.access)}, {"exec", r.executable}};
  if (view == PolicyJsonView::kRecord) j["source"] = r.source;
  return j;
}

json RulesJson(const std::vector<PathRule>& rules, PolicyJsonView view) {
  json a = json::array();
  for (const PathRule& r : rules) a.push_back(RuleJson(r, view));
  return a;
}

json TextArray(const std::vector<std::string>& v) {
  json a = json::array();
  for (const std::string& s : v) a.push_back(JsonText(s));
  return a;
}

json ToolJson(const ToolPin& t, PolicyJsonView view) {
  json j = {{"name", JsonText(t.name)}, {"path", JsonText(t.path)}};
  if (view == PolicyJsonView::kDigest) return j;
  j["size"] = static_cast<int64_t>(t.identity.size);
  auto digest = t.identity.Sha256();
  if (digest) {
    j["sha256"] = digest.value();
  } else {
    j["sha256_error"] = Describe(digest.error());
  }
  return j;
}

}  // namespace

json JsonText(const std::string& s) {
  try {
    (void)json(s).dump();  // strict: throws on invalid UTF-8
    return s;
  } catch (const json::type_error&) {
    static const char* k = "0123456789abcdef";
    std::string hex = "hex:";
    for (unsigned char c : s) {
      hex += k[c >> 4];
      hex += k[c & 15];
    }
    return hex;
  }
}

json PolicyToJson(const Policy& p, PolicyJsonView view) {
  json tools = json::array();
  for (const ToolPin& t : p.tools) tools.push_back(ToolJson(t, view));
  // The digest's fields and names: changing one changes every recorded
  // workspace's digest (tests/policy/digest_test.cc pins the bytes).
  json j{{"profile", ProfileName(p.profile)},
         {"workspace", JsonText(p.workspace)},
         {"paths", RulesJson(p.paths, view)},
         {"network", NetworkName(p.network)},
         {"private_tmp", p.private_tmp},
         {"sandbox_enabled", p.sandbox_enabled},
         {"allow_bypass", p.allow_bypass},
         {"protected_patterns", TextArray(p.protected_patterns)},
         {"sensitive_delete", SensitiveDeleteName(p.sensitive_delete)},
         {"links", LinkModeName(p.links)},
         {"tools", std::move(tools)},
         {"limits",
          {{"max_tree_entries", p.limits.max_tree_entries},
           {"max_tree_depth", p.limits.max_tree_depth},
           {"max_delete_bytes", p.limits.max_delete_bytes}}}};
  // Only when set, so that a policy without it keeps its digest's bytes.
  if (!p.env_keep.empty()) j["env_keep"] = TextArray(p.env_keep);
  if (NetworkProxied(p.network)) {
    j["network"] = FormatNetworkMode(p);
    j["web"] = {{"ports", p.web.ports},
                {"max_response_bytes", p.web.max_response_bytes},
                {"timeout_seconds", p.web.timeout_seconds},
                {"max_connections", p.web.max_connections}};
  }
  if (!p.deny_globs.empty()) j["deny_globs"] = TextArray(p.deny_globs);
  if (p.hard_links != HardLinks::kRefuse) j["hard_links"] = HardLinksName(p.hard_links);
  if (p.limits.max_scan_entries != Limits{}.max_scan_entries) {
    j["limits"]["max_scan_entries"] = p.limits.max_scan_entries;
  }
  if (view == PolicyJsonView::kDigest) return j;
  json dropped = json::array();
  for (const DroppedPath& d : p.dropped) {
    dropped.push_back({{"path", JsonText(d.path)}, {"reason", d.reason}});
  }
  j["profile_reason"] = p.profile_reason;
  j["base_paths"] = RulesJson(p.base_paths, view);
  j["dropped"] = std::move(dropped);
  j["add_cwd"] = p.add_cwd;
  j["clear_policy_on_exit"] = p.clear_policy_on_exit;
  j["protected_paths"] = TextArray(p.protected_paths);
  j["protected_scan_truncated"] = p.protected_scan_truncated;
  j["deny_glob_matches"] = TextArray(p.deny_glob_matches);
  json refused = json::array();
  for (const RefusedEntry& e : p.refused_entries) {
    refused.push_back({{"path", JsonText(e.path)}, {"why", e.why}});
  }
  j["refused_entries"] = std::move(refused);
  j["notes"] = p.notes;
  return j;
}

}  // namespace cordon::policy
