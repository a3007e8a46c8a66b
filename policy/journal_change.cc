#include "policy/journal_change.h"

#include <nlohmann/json.hpp>

#include "policy/path_segments.h"

namespace cordon::policy {
namespace {

using nlohmann::json;

constexpr std::size_t kMaxPath = 4096;

constexpr const char* kOps[] = {"save", "copy", "create", "move", "drop", "swap", "attr"};
constexpr const char* kTypes[] = {"file", "dir", "link", "other"};

template <std::size_t N>
int IndexOf(const char* const (&names)[N], const std::string& s) {
  for (std::size_t i = 0; i < N; ++i) {
    if (s == names[i]) return static_cast<int>(i);
  }
  return -1;
}

bool Fail(std::string* error, std::string why) {
  if (error) *error = std::move(why);
  return false;
}

bool Unsigned(const json& j, const char* key, std::uint64_t& out, std::string* error) {
  if (!j.contains(key)) return true;
  if (!j[key].is_number_unsigned()) return Fail(error, std::string(key) + " is not a count");
  out = j[key].get<std::uint64_t>();
  return true;
}

bool Signed(const json& j, const char* key, std::int64_t& out, std::string* error) {
  if (!j.contains(key) || !j[key].is_number_integer()) {
    return Fail(error, std::string(key) + " is not a number");
  }
  out = j[key].get<std::int64_t>();
  return true;
}

bool Required(const json& j, const char* key, std::uint64_t& out, std::string* error) {
  if (!j.contains(key)) return Fail(error, std::string(key) + " is missing");
  return Unsigned(j, key, out, error);
}

// An attr record's old value: its kind's fields beside the record's own.
void PutAttr(json& j, const OldAttr& a) {
  j["attr"] = AttrKindName(a.kind);
  switch (a.kind) {
    case AttrKind::kMode:
      j["mode"] = a.mode;
      return;
    case AttrKind::kOwner:
      j["uid"] = a.uid;
      j["gid"] = a.gid;
      return;
    case AttrKind::kTimes:
      j["atime_sec"] = a.atime_sec;
      j["atime_nsec"] = a.atime_nsec;
      j["mtime_sec"] = a.mtime_sec;
      j["mtime_nsec"] = a.mtime_nsec;
      return;
    case AttrKind::kXattr:
      j["name"] = EscapeBytes(a.name);
      j["present"] = a.present;
      if (a.present) j["value"] = EscapeBytes(a.value);
      return;
  }
}

bool GetAttr(const json& j, OldAttr& a, std::string* error) {
  if (!j.contains("attr") || !j["attr"].is_string()) return Fail(error, "attr is missing");
  auto kind = AttrKindNamed(j["attr"].get<std::string>());
  if (!kind) return Fail(error, "unknown attr " + j["attr"].get<std::string>());
  a.kind = *kind;
  std::uint64_t u = 0, g = 0;
  auto bytes = [&](const char* key, std::string& out) {
    if (!j.contains(key) || !j[key].is_string()) {
      return Fail(error, std::string(key) + " is missing");
    }
    auto raw = UnescapeBytes(j[key].get<std::string>());
    if (!raw) return Fail(error, std::string(key) + " has a malformed escape");
    out = std::move(*raw);
    return true;
  };
  switch (a.kind) {
    case AttrKind::kMode:
      if (!Required(j, "mode", u, error)) return false;
      if (u > 07777) return Fail(error, "mode has more than permission bits");
      a.mode = static_cast<std::uint32_t>(u);
      break;
    case AttrKind::kOwner:
      if (!Required(j, "uid", u, error) || !Required(j, "gid", g, error)) return false;
      if (u >= 0xffffffffu || g >= 0xffffffffu) return Fail(error, "owner out of range");
      a.uid = static_cast<std::uint32_t>(u);
      a.gid = static_cast<std::uint32_t>(g);
      break;
    case AttrKind::kTimes:
      if (!Signed(j, "atime_sec", a.atime_sec, error) ||
          !Signed(j, "atime_nsec", a.atime_nsec, error) ||
          !Signed(j, "mtime_sec", a.mtime_sec, error) ||
          !Signed(j, "mtime_nsec", a.mtime_nsec, error)) {
        return false;
      }
      break;
    case AttrKind::kXattr:
      if (!bytes("name", a.name)) return false;
      if (!j.contains("present") || !j["present"].is_boolean()) {
        return Fail(error, "present is missing");
      }
      a.present = j["present"].get<bool>();
      if (a.present && !bytes("value", a.value)) return false;
      break;
  }
  if (!ValidOldAttr(a)) {
    return Fail(error, std::string("not a value undo may set back: ") + AttrKindName(a.kind));
  }
  return true;
}

}  // namespace

std::string EscapeBytes(std::string_view raw) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(raw.size());
  for (unsigned char c : raw) {
    if (c == '%' || c < 0x20 || c >= 0x7f) {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

std::optional<std::string> UnescapeBytes(std::string_view text) {
  auto hex = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '%') {
      out += text[i];
      continue;
    }
    if (i + 2 >= text.size()) return std::nullopt;
    int hi = hex(text[i + 1]), lo = hex(text[i + 2]);
    if (hi < 0 || lo < 0) return std::nullopt;
    out += static_cast<char>(hi << 4 | lo);
    i += 2;
  }
  return out;
}

const char* ChangeOpName(ChangeOp op) { return kOps[static_cast<int>(op)]; }
const char* KeptTypeName(KeptType t) { return kTypes[static_cast<int>(t)]; }

bool ValidRecordPath(std::string_view rel) {
  if (rel.empty() || rel.size() > kMaxPath || rel.front() == '/') return false;
  if (rel.find('\0') != std::string_view::npos) return false;
  for (std::string_view seg : SplitSegments(rel)) {
    if (seg.empty() || seg == "." || seg == "..") return false;
  }
  return rel.back() != '/';
}

std::string ChangeLine(const Change& c) {
  json j = {{"op", ChangeOpName(c.op)}, {"path", EscapeBytes(c.path)}, {"ino", c.ino},
            {"type", KeptTypeName(c.type)}};
  if (c.op == ChangeOp::kMove || c.op == ChangeOp::kSwap) j["to"] = EscapeBytes(c.to);
  if (c.op == ChangeOp::kSwap) j["other_ino"] = c.other_ino;
  if (c.op == ChangeOp::kSave || c.op == ChangeOp::kCopy) {
    j["slot"] = c.slot;
    j["size"] = c.size;
  }
  if (c.op == ChangeOp::kAttr) {
    j["dev"] = c.dev;
    PutAttr(j, c.attr);
  }
  if (!c.why.empty()) j["why"] = EscapeBytes(c.why);
  return j.dump();
}

std::optional<Change> ParseChangeLine(std::string_view line, std::string* error) {
  json j = json::parse(line, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    Fail(error, "not a JSON object");
    return std::nullopt;
  }
  Change c;
  auto str = [&](const char* key, std::string& out) {
    if (!j.contains(key) || !j[key].is_string()) return Fail(error, std::string(key) + " is missing");
    auto raw = UnescapeBytes(j[key].get<std::string>());
    if (!raw) return Fail(error, std::string(key) + " has a malformed escape");
    out = std::move(*raw);
    return true;
  };
  std::string op, type;
  if (!str("op", op) || !str("path", c.path) || !str("type", type)) return std::nullopt;
  int o = IndexOf(kOps, op), t = IndexOf(kTypes, type);
  if (o < 0) return Fail(error, "unknown op " + op), std::nullopt;
  if (t < 0) return Fail(error, "unknown type " + type), std::nullopt;
  c.op = static_cast<ChangeOp>(o);
  c.type = static_cast<KeptType>(t);
  if (!ValidRecordPath(c.path)) return Fail(error, "path outside the workspace"), std::nullopt;
  if (!j.contains("ino")) return Fail(error, "ino is missing"), std::nullopt;
  if (!Unsigned(j, "ino", c.ino, error)) return std::nullopt;
  if (c.op == ChangeOp::kSwap) {
    if (!j.contains("other_ino")) return Fail(error, "other_ino is missing"), std::nullopt;
    if (!Unsigned(j, "other_ino", c.other_ino, error)) return std::nullopt;
  }
  if (c.op == ChangeOp::kMove || c.op == ChangeOp::kSwap) {
    if (!str("to", c.to)) return std::nullopt;
    if (!ValidRecordPath(c.to)) return Fail(error, "path outside the workspace"), std::nullopt;
  }
  if (c.op == ChangeOp::kSave || c.op == ChangeOp::kCopy) {
    if (!j.contains("slot")) return Fail(error, "slot is missing"), std::nullopt;
    if (!Unsigned(j, "slot", c.slot, error) || !Unsigned(j, "size", c.size, error)) {
      return std::nullopt;
    }
  }
  if (c.op == ChangeOp::kAttr) {
    if (!Required(j, "dev", c.dev, error) || !GetAttr(j, c.attr, error)) return std::nullopt;
  }
  if (j.contains("why") && !str("why", c.why)) return std::nullopt;
  return c;
}

}  // namespace cordon::policy
