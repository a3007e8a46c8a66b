#include "policy/run_record.h"

#include <nlohmann/json.hpp>

#include "policy/journal_change.h"

namespace cordon::policy {

using nlohmann::json;

std::string RunRecordJson(const RunRecord& r) {
  json j = {{"version", 1},
            {"meta", json::parse(MetaJson(r.meta))},
            {"audit", r.audit_path.empty() ? json() : json(EscapeBytes(r.audit_path))},
            {"recoverable", r.recoverable}};
  if (r.ended_s) {
    j["ended"] = *r.ended_s;
    j["exit_status"] = r.exit_status;
  }
  if (r.anchor) j["anchor"] = AnchorJson(*r.anchor);
  return j.dump(2, ' ', false, json::error_handler_t::replace);
}

std::optional<RunRecord> ParseRunRecord(std::string_view text, std::string* error) {
  auto fail = [error](const char* why) -> std::optional<RunRecord> {
    if (error) *error = why;
    return std::nullopt;
  };
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return fail("not a JSON object");
  if (j.value("version", json()) != 1) return fail("unknown version");
  if (!j.contains("meta") || !j["meta"].is_object()) return fail("meta is missing");
  RunRecord r;
  std::string meta_error;
  auto meta = ParseMeta(j["meta"].dump(), &meta_error);
  if (!meta) {
    if (error) *error = "meta: " + meta_error;
    return std::nullopt;
  }
  r.meta = std::move(*meta);
  const json audit = j.value("audit", json());
  if (audit.is_string()) {
    auto path = UnescapeBytes(audit.get<std::string>());
    if (!path || path->empty() || (*path)[0] != '/') return fail("audit is not an absolute path");
    r.audit_path = std::move(*path);
  } else if (!audit.is_null()) {
    return fail("audit has the wrong type");
  }
  const json recoverable = j.value("recoverable", json());
  if (!recoverable.is_boolean()) return fail("recoverable is missing");
  r.recoverable = recoverable.get<bool>();
  if (j.contains("ended")) {
    if (!j["ended"].is_number_integer() || !j.value("exit_status", json()).is_number_integer()) {
      return fail("ended or exit_status has the wrong type");
    }
    r.ended_s = j["ended"].get<int64_t>();
    r.exit_status = j["exit_status"].get<int>();
  }
  if (j.contains("anchor")) {
    r.anchor = ParseAnchor(j["anchor"]);
    if (!r.anchor) return fail("anchor is malformed");
    if (r.audit_path.empty()) return fail("an anchor without a log");
  }
  return r;
}

}  // namespace cordon::policy
