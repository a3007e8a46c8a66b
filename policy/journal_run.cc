#include "policy/journal_run.h"

#include <nlohmann/json.hpp>

namespace cordon::policy {
namespace {

using nlohmann::json;

template <class T>
bool Get(const json& j, const char* key, T& out, std::string* error) {
  if (!j.contains(key)) {
    if (error) *error = std::string(key) + " is missing";
    return false;
  }
  try {
    out = j[key].get<T>();
  } catch (const json::exception&) {
    if (error) *error = std::string(key) + " has the wrong type";
    return false;
  }
  return true;
}

json ObservedJson(const Observed& o) {
  if (!o.present) return json{{"present", false}};
  return {{"present", true}, {"ino", o.ino}, {"size", o.size}, {"mtime_ns", o.mtime_ns},
          {"type", KeptTypeName(o.type)}};
}

std::optional<Observed> ParseObserved(const json& j, std::string* error) {
  Observed o;
  if (!j.is_object() || !Get(j, "present", o.present, error)) return std::nullopt;
  if (!o.present) return o;
  std::string type;
  if (!Get(j, "ino", o.ino, error) || !Get(j, "size", o.size, error) ||
      !Get(j, "mtime_ns", o.mtime_ns, error) || !Get(j, "type", type, error)) {
    return std::nullopt;
  }
  for (KeptType t : {KeptType::kFile, KeptType::kDir, KeptType::kLink, KeptType::kOther}) {
    if (type == KeptTypeName(t)) {
      o.type = t;
      return o;
    }
  }
  if (error) *error = "unknown type " + type;
  return std::nullopt;
}

}  // namespace

bool ValidRunId(std::string_view id) {
  if (id.empty() || id.size() > 64) return false;
  for (char c : id) {
    if (!((c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '-')) {
      return false;
    }
  }
  return true;
}

std::optional<int64_t> RunIdStartedS(std::string_view id) {
  if (id.size() < 16 || id[8] != 'T' || id[15] != 'Z') return std::nullopt;
  auto num = [&](size_t at, size_t n) -> std::optional<int64_t> {
    int64_t v = 0;
    for (size_t i = at; i < at + n; ++i) {
      if (id[i] < '0' || id[i] > '9') return std::nullopt;
      v = v * 10 + (id[i] - '0');
    }
    return v;
  };
  auto y = num(0, 4), mo = num(4, 2), d = num(6, 2), h = num(9, 2), mi = num(11, 2), s = num(13, 2);
  if (!y || !mo || !d || !h || !mi || !s || *mo < 1 || *mo > 12 || *d < 1 || *d > 31 || *h > 23 ||
      *mi > 59 || *s > 60) {
    return std::nullopt;
  }
  // Days from 1970-01-01 to the civil date (Howard Hinnant's algorithm).
  const int64_t yy = *y - (*mo <= 2 ? 1 : 0);
  const int64_t era = (yy >= 0 ? yy : yy - 399) / 400;
  const int64_t yoe = yy - era * 400;
  const int64_t doy = (153 * (*mo + (*mo > 2 ? -3 : 9)) + 2) / 5 + *d - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  const int64_t days = era * 146097 + doe - 719468;
  return days * 86400 + *h * 3600 + *mi * 60 + *s;
}

std::string MetaJson(const RunMeta& m) {
  return json{{"version", 1},
              {"id", m.id},
              {"workspace", EscapeBytes(m.workspace)},
              {"workspace_dev", m.workspace_dev},
              {"workspace_ino", m.workspace_ino},
              {"started", m.started_s},
              {"argv", m.argv}}
      .dump(2, ' ', false, json::error_handler_t::replace);
}

std::optional<RunMeta> ParseMeta(std::string_view text, std::string* error) {
  json j = json::parse(text, nullptr, false);
  RunMeta m;
  int version = 0;
  if (j.is_discarded() || !j.is_object()) {
    if (error) *error = "not a JSON object";
    return std::nullopt;
  }
  if (!Get(j, "version", version, error) || !Get(j, "id", m.id, error) ||
      !Get(j, "workspace", m.workspace, error) || !Get(j, "workspace_dev", m.workspace_dev, error) ||
      !Get(j, "workspace_ino", m.workspace_ino, error) || !Get(j, "started", m.started_s, error) ||
      !Get(j, "argv", m.argv, error)) {
    return std::nullopt;
  }
  auto ws = UnescapeBytes(m.workspace);
  if (!ws) {
    if (error) *error = "workspace has a malformed escape";
    return std::nullopt;
  }
  m.workspace = std::move(*ws);
  if (version != 1) {
    if (error) *error = "unknown version " + std::to_string(version);
    return std::nullopt;
  }
  if (!ValidRunId(m.id) || m.workspace.empty() || m.workspace[0] != '/') {
    if (error) *error = "bad id or workspace";
    return std::nullopt;
  }
  return m;
}

std::string EndJson(const RunEnd& e) {
  json names = json::object();
  for (const auto& [path, o] : e.names) names[EscapeBytes(path)] = ObservedJson(o);
  return json{{"ended", e.ended_s},
              {"exit_status", e.exit_status},
              {"changes_sha256", e.changes_sha256},
              {"changes", e.changes},
              {"refused_at_bound", e.refused_at_bound},
              {"names", names}}
      .dump(1);
}

std::optional<RunEnd> ParseEnd(std::string_view text, std::string* error) {
  json j = json::parse(text, nullptr, false);
  RunEnd e;
  if (j.is_discarded() || !j.is_object()) {
    if (error) *error = "not a JSON object";
    return std::nullopt;
  }
  if (!Get(j, "ended", e.ended_s, error) || !Get(j, "exit_status", e.exit_status, error) ||
      !Get(j, "changes_sha256", e.changes_sha256, error) || !Get(j, "changes", e.changes, error) ||
      !Get(j, "refused_at_bound", e.refused_at_bound, error)) {
    return std::nullopt;
  }
  if (!j.contains("names") || !j["names"].is_object()) {
    if (error) *error = "names is missing";
    return std::nullopt;
  }
  for (const auto& [key, o] : j["names"].items()) {
    auto path = UnescapeBytes(key);
    if (!path || !ValidRecordPath(*path)) {
      if (error) *error = "a name outside the workspace";
      return std::nullopt;
    }
    auto obs = ParseObserved(o, error);
    if (!obs) return std::nullopt;
    e.names[*path] = *obs;
  }
  return e;
}

}  // namespace cordon::policy
