#include "policy/workspace_record.h"

#include <nlohmann/json.hpp>

#include "policy/digest.h"

namespace cordon::policy {
namespace {

using nlohmann::json;

// Everything but the integrity field; nlohmann's object keeps keys sorted,
// so dump() is canonical.
json Content(const WorkspaceRecord& r) {
  return json{{"version", kWorkspaceRecordVersion},
              {"session", r.session},
              {"owner_uid", r.owner_uid},
              {"created", r.created},
              {"policy_digest", r.policy_digest}};
}

std::string Integrity(const json& content) {
  return Sha256Hex("cordon-workspace-record\n" + content.dump());
}

SysError Bad(std::string why) { return SysError{EBADMSG, "ownership record", std::move(why)}; }

}  // namespace

bool ValidSessionId(std::string_view id) {
  if (id.empty() || id.size() > 128) return false;
  for (char c : id) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '_' || c == ':' || c == '@' || c == '-';
    if (!ok) return false;
  }
  return true;
}

std::string OwnerDigest(uint32_t owner_uid, std::string_view session) {
  std::string in = "cordon-workspace-owner\n" + std::to_string(owner_uid) + "\n";
  in.append(session);
  return Sha256Hex(in);
}

std::string SerializeRecord(const WorkspaceRecord& r) {
  json j = Content(r);
  j["integrity"] = Integrity(j);
  return j.dump() + "\n";
}

Result<WorkspaceRecord> ParseRecord(std::string_view text) {
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return Bad("is not a JSON object");
  if (j.size() != 6) return Bad("has unexpected fields");
  auto is = [&j](const char* k, auto pred) { return j.contains(k) && pred(j[k]); };
  if (!is("version", [](const json& v) { return v.is_number_integer(); }) ||
      j["version"].get<int64_t>() != kWorkspaceRecordVersion) {
    return Bad("has an unknown version");
  }
  if (!is("session", [](const json& v) { return v.is_string(); }) ||
      !is("owner_uid", [](const json& v) { return v.is_number_unsigned(); }) ||
      !is("created", [](const json& v) { return v.is_number_integer(); }) ||
      !is("policy_digest", [](const json& v) { return v.is_string(); }) ||
      !is("integrity", [](const json& v) { return v.is_string(); })) {
    return Bad("is missing a field");
  }
  WorkspaceRecord r;
  r.session = j["session"].get<std::string>();
  uint64_t uid = j["owner_uid"].get<uint64_t>();
  if (uid > UINT32_MAX) return Bad("has an impossible owner uid");
  r.owner_uid = static_cast<uint32_t>(uid);
  r.created = j["created"].get<int64_t>();
  r.policy_digest = j["policy_digest"].get<std::string>();
  if (!ValidSessionId(r.session)) return Bad("has an invalid session id");
  if (!DigestEquals(Integrity(Content(r)), j["integrity"].get<std::string>())) {
    return Bad("fails its integrity check (edited or corrupted)");
  }
  return r;
}

}  // namespace cordon::policy
