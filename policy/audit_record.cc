#include "policy/audit_record.h"

#include "policy/digest.h"
#include "policy/journal_change.h"
#include "policy/policy_json.h"

namespace cordon::policy {
namespace {


// Canonical serialisation. Invalid UTF-8 (a file name can hold any bytes) is
// replaced rather than thrown on; the parser rejects it on the way back, so
// writer and verifier always hash the same bytes.
std::string Dump(const nlohmann::json& j) {
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

bool IsReserved(const std::string& key) {
  return key == "seq" || key == "kind" || key == "time_ms" || key == "prev" || key == "hash";
}

bool IsHex64(const nlohmann::json& v) {
  if (!v.is_string()) return false;
  const std::string& s = v.get_ref<const std::string&>();
  if (s.size() != 64) return false;
  for (char c : s) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

// Checks one line against the chain; empty when intact.
std::string CheckLine(std::string_view line, const std::string& prev, uint64_t seq) {
  nlohmann::json j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return "not a JSON object";
  if (Dump(j) != line) return "not in canonical form (bytes edited)";
  if (!IsHex64(j.value("hash", nlohmann::json()))) return "missing or malformed hash";
  std::string hash = j["hash"].get<std::string>();
  j.erase("hash");
  if (!DigestEquals(Sha256Hex(Dump(j)), hash)) return "record hash mismatch (record edited)";
  if (!j.contains("seq") || !j["seq"].is_number_unsigned() || j["seq"].get<uint64_t>() != seq) {
    return "sequence number is not " + std::to_string(seq) + " (record removed, moved or inserted)";
  }
  if (!j.contains("prev") || !j["prev"].is_string() ||
      !DigestEquals(j["prev"].get<std::string>(), prev)) {
    return "prev does not match the previous record (chain broken)";
  }
  if (!j.contains("kind") || !j["kind"].is_string()) return "missing kind";
  if (seq == 1 && j["kind"] != "header") return "first record is not a session header";
  return {};
}

// Calls `fn` with each newline-terminated line of a log (an unterminated
// tail is no record) while it returns true.
template <class Fn>
void ForEachRecordLine(std::string_view bytes, Fn fn) {
  size_t pos = 0;
  while (pos < bytes.size()) {
    const size_t nl = bytes.find('\n', pos);
    if (nl == std::string_view::npos || !fn(bytes.substr(pos, nl - pos))) return;
    pos = nl + 1;
  }
}

}  // namespace

const std::string kAuditZeroHash(64, '0');

std::string CheckRecordFields(const nlohmann::json& fields) {
  if (!fields.is_null() && !fields.is_object()) return "fields must be an object";
  if (fields.is_object()) {
    for (const auto& [key, value] : fields.items()) {
      if (IsReserved(key)) return "reserved field " + key;
    }
  }
  return {};
}

SealedRecord SealRecord(std::string_view kind, nlohmann::json fields, uint64_t seq,
                        int64_t time_ms, const std::string& prev) {
  if (fields.is_null()) fields = nlohmann::json::object();
  fields["seq"] = seq;
  fields["kind"] = std::string(kind);
  fields["time_ms"] = time_ms;
  fields["prev"] = prev;
  fields["hash"] = Sha256Hex(Dump(fields));
  SealedRecord r;
  r.line = Dump(fields);
  r.line_hash = Sha256Hex(r.line);
  return r;
}

VerifyReport VerifyAuditBytes(std::string_view bytes) {
  VerifyReport r;
  r.last_hash = kAuditZeroHash;
  if (bytes.empty()) {
    r.broken_line = 1;
    r.why = "empty log: no session header";
    return r;
  }
  size_t pos = 0;
  size_t line_no = 0;
  while (pos < bytes.size()) {
    ++line_no;
    size_t nl = bytes.find('\n', pos);
    std::string_view line = bytes.substr(pos, nl == std::string_view::npos ? nl : nl - pos);
    std::string why = nl == std::string_view::npos
                          ? "record not terminated by a newline (truncated)"
                          : CheckLine(line, r.last_hash, line_no);
    if (!why.empty()) {
      r.broken_line = line_no;
      r.why = std::move(why);
      return r;
    }
    r.last_hash = Sha256Hex(line);
    r.records = line_no;
    pos = nl + 1;
  }
  r.intact = true;
  return r;
}

std::string CheckAnchor(std::string_view bytes, const AuditAnchor& a) {
  uint64_t seq = 0;
  std::string replaced;
  ForEachRecordLine(bytes, [&](std::string_view line) {
    ++seq;
    if (seq == a.first_seq || seq == a.last_seq) {
      const std::string& want = seq == a.first_seq ? a.first_hash : a.last_hash;
      if (!DigestEquals(Sha256Hex(line), want)) {
        replaced = "replaced: record " + std::to_string(seq) + " is not the one the run wrote " +
                   "(the log was rewritten)";
        return false;
      }
    }
    return seq < a.last_seq;
  });
  if (!replaced.empty()) return replaced;
  if (seq < a.last_seq) {
    return "truncated: the run wrote records " + std::to_string(a.first_seq) + " to " +
           std::to_string(a.last_seq) + ", the log ends at record " + std::to_string(seq);
  }
  return {};
}

namespace {

// A field of an untrusted record: its value when of the type asked, else the default.
std::string Str(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}
bool Bool(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_boolean() && it->get<bool>();
}

}  // namespace

std::vector<RunLogRecord> RunRecordsIn(std::string_view bytes, std::string_view id) {
  std::vector<RunLogRecord> out;
  bool in_run = false;
  ForEachRecordLine(bytes, [&](std::string_view line) {
    const nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    if (!j.is_object()) return true;
    const std::string kind = Str(j, "kind");
    if (kind == "header") {
      in_run = Str(j, "run") == id;
      return true;
    }
    if (!in_run) return true;
    if (kind == "end") return false;
    RunLogRecord r;
    r.kind = kind;
    r.change = Str(j, "change");
    r.path = UnescapeBytes(Str(j, "path")).value_or("?");
    r.to = UnescapeBytes(Str(j, "to")).value_or("?");
    r.kept = Bool(j, "kept");
    r.refused = Str(j, "result") == "refused";
    if (kind == "landlock") {
      r.blockers = Str(j, "blockers");
      const auto object = j.find("object");
      const bool named = object != j.end() && object->is_object();
      r.path = named && object->contains("path") ? UnescapeBytes(Str(*object, "path")).value_or("?")
               : named                           ? object->dump()
                                                 : "?";
    }
    out.push_back(std::move(r));
    return true;
  });
  return out;
}

nlohmann::json AnchorJson(const AuditAnchor& a) {
  return {{"first_seq", a.first_seq},
          {"last_seq", a.last_seq},
          {"first_hash", a.first_hash},
          {"last_hash", a.last_hash}};
}

std::optional<AuditAnchor> ParseAnchor(const nlohmann::json& j) {
  if (!j.is_object()) return std::nullopt;
  AuditAnchor a;
  const nlohmann::json fs = j.value("first_seq", nlohmann::json());
  const nlohmann::json ls = j.value("last_seq", nlohmann::json());
  const nlohmann::json fh = j.value("first_hash", nlohmann::json());
  const nlohmann::json lh = j.value("last_hash", nlohmann::json());
  if (!fs.is_number_unsigned() || !ls.is_number_unsigned() || !IsHex64(fh) || !IsHex64(lh)) {
    return std::nullopt;
  }
  a.first_seq = fs.get<uint64_t>();
  a.last_seq = ls.get<uint64_t>();
  if (a.first_seq == 0 || a.last_seq < a.first_seq) return std::nullopt;
  a.first_hash = fh.get<std::string>();
  a.last_hash = lh.get<std::string>();
  return a;
}

nlohmann::json SessionHeader(const Policy& p, std::string_view rung,
                             const std::vector<std::string>& argv) {
  return {
      {"cordon_version", CORDON_VERSION},
      {"profile", ProfileName(p.profile)},
      {"profile_reason", p.profile_reason},
      {"rung", std::string(rung)},
      {"argv", argv},
      {"policy", PolicyToJson(p, PolicyJsonView::kRecord)},
  };
}

}  // namespace cordon::policy
