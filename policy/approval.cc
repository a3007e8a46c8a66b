#include "policy/approval.h"

#include <fcntl.h>

#include "policy/digest.h"

namespace cordon::policy {

DeletePreview::Destination DeletePreview::DestinationOf(const DeletePreview& replaced) {
  return {replaced.rel_path, replaced.size,     replaced.sha256,  replaced.dev,
          replaced.ino,      replaced.mtime_ns, replaced.ctime_ns};
}

DeletePreview DeletePreview::ReplacedPreview() const {
  DeletePreview p;
  p.rel_path = to.rel_path;
  p.size = to.size;
  p.sha256 = to.sha256;
  p.dev = to.dev;
  p.ino = to.ino;
  p.mtime_ns = to.mtime_ns;
  p.ctime_ns = to.ctime_ns;
  return p;
}

std::string DeletePreview::Digest() const {
  // Not JSON: a fixed field order with NUL and newline separators, so the
  // digest never depends on a serialiser's choices.
  std::string s = !bypass.empty()  ? "cordon-bypass-preview/1"
                  : directory      ? "cordon-delete-preview/directory-1"
                  : write_in_place ? "cordon-write-preview/1"
                                   : "cordon-delete-preview/1";
  s += '\0';
  if (!bypass.empty()) {
    // The operation is part of what is approved: an answer for an unlink
    // is no answer for an open, nor for an open with other flags.
    s += bypass;
    s += '\0';
    s += std::to_string(open_flags);
    s += '\0';
    s += bypass_rule;
    s += '\0';
    if (IsAttrBypass(bypass)) {
      // The call's arguments: an answer for one mode, owner, time or
      // value is no answer for another.
      s += args;
      s += '\0';
    }
    if (bypass == "rename" || bypass == "link") {
      // Where it goes, and what is there: an answer for one destination,
      // or for a name that was free, is no answer for another; nor one for
      // a file for a directory.
      s += directory ? "directory" : "file";
      s += '\0';
      s += to.rel_path;
      s += '\0';
      for (auto n : {static_cast<int64_t>(to.size), static_cast<int64_t>(to.dev),
                     static_cast<int64_t>(to.ino), to.mtime_ns, to.ctime_ns}) {
        s += std::to_string(n);
        s += '\n';
      }
      s += to.sha256;
      s += '\0';
    }
  }
  s += rel_path;
  s += '\0';
  for (auto n : {static_cast<int64_t>(size), static_cast<int64_t>(dev), static_cast<int64_t>(ino),
                 mtime_ns, ctime_ns}) {
    s += std::to_string(n);
    s += '\n';
  }
  s += sha256;
  return Sha256Hex(s);
}

nlohmann::json DeletePreview::ToJson() const {
  nlohmann::json j = {{"path", rel_path},    {"size", size}, {"sha256", sha256},
                      {"dev", dev},          {"ino", ino},   {"mtime_ns", mtime_ns},
                      {"ctime_ns", ctime_ns}};
  if (directory) j["kind"] = "directory";
  if (write_in_place) j["kind"] = "write";
  if (!bypass.empty()) {
    j["kind"] = "bypass";
    j["op"] = bypass;
    j["open_flags"] = open_flags;
    j["rule"] = bypass_rule;
    if (IsAttrBypass(bypass)) j["args"] = args;
    if (bypass == "rename" && directory) j["directory"] = true;
    if (bypass == "rename" || bypass == "link") {
      j["to"] = {{"path", to.rel_path},    {"size", to.size}, {"sha256", to.sha256},
                 {"dev", to.dev},          {"ino", to.ino},   {"mtime_ns", to.mtime_ns},
                 {"ctime_ns", to.ctime_ns}};
    }
  }
  return j;
}

namespace {

// Whether `o` has a preview's path, content and identity fields, typed.
bool IsIdentity(const nlohmann::json& o) {
  auto str = [&](const char* k) { return o.contains(k) && o[k].is_string(); };
  auto uns = [&](const char* k) { return o.contains(k) && o[k].is_number_unsigned(); };
  auto num = [&](const char* k) { return o.contains(k) && o[k].is_number_integer(); };
  return str("path") && str("sha256") && uns("size") && uns("dev") && uns("ino") &&
         num("mtime_ns") && num("ctime_ns");
}

}  // namespace

std::optional<DeletePreview> DeletePreview::FromJson(const nlohmann::json& j) {
  if (!j.is_object()) return std::nullopt;
  auto str = [&](const char* k) { return j.contains(k) && j[k].is_string(); };
  auto uns = [&](const char* k) { return j.contains(k) && j[k].is_number_unsigned(); };
  if (!IsIdentity(j)) return std::nullopt;
  DeletePreview p;
  if (j.contains("kind")) {
    if (j["kind"] == "directory")
      p.directory = true;
    else if (j["kind"] == "write")
      p.write_in_place = true;
    else if (j["kind"] == "bypass") {
      if (!str("op") || !uns("open_flags") || !str("rule")) return std::nullopt;
      p.bypass = j["op"].get<std::string>();
      if (p.bypass != "open" && p.bypass != "unlink" && p.bypass != "rmdir" &&
          p.bypass != "mkdir" && p.bypass != "rename" && p.bypass != "link" &&
          !IsAttrBypass(p.bypass)) {
        return std::nullopt;
      }
      // The arguments of a metadata change, and only of one.
      if (IsAttrBypass(p.bypass) != str("args")) return std::nullopt;
      if (IsAttrBypass(p.bypass)) p.args = j["args"].get<std::string>();
      // A directory moved: a rename's only.
      if (j.contains("directory")) {
        if (p.bypass != "rename" || j["directory"] != true) return std::nullopt;
      }
      if (p.bypass == "rename" || p.bypass == "link") {
        if (!j.contains("to") || !j["to"].is_object()) return std::nullopt;
        const nlohmann::json& t = j["to"];
        if (!IsIdentity(t)) return std::nullopt;
        p.to.rel_path = t["path"].get<std::string>();
        p.to.sha256 = t["sha256"].get<std::string>();
        p.to.size = t["size"].get<uint64_t>();
        p.to.dev = t["dev"].get<uint64_t>();
        p.to.ino = t["ino"].get<uint64_t>();
        p.to.mtime_ns = t["mtime_ns"].get<int64_t>();
        p.to.ctime_ns = t["ctime_ns"].get<int64_t>();
        // A link makes a new name: it never replaces a file.
        if (p.bypass == "link" && (p.to.ino != 0 || !p.to.sha256.empty())) return std::nullopt;
      }
      p.directory = p.bypass == "rmdir" || j.contains("directory");
      p.open_flags = j["open_flags"].get<uint64_t>();
      p.bypass_rule = j["rule"].get<std::string>();
    } else
      return std::nullopt;
  }
  p.rel_path = j["path"].get<std::string>();
  p.sha256 = j["sha256"].get<std::string>();
  p.size = j["size"].get<uint64_t>();
  p.dev = j["dev"].get<uint64_t>();
  p.ino = j["ino"].get<uint64_t>();
  p.mtime_ns = j["mtime_ns"].get<int64_t>();
  p.ctime_ns = j["ctime_ns"].get<int64_t>();
  return p;
}

std::string BypassOperation(const DeletePreview& p) {
  if (p.bypass == "rename") {
    return std::string(p.directory ? "rename directory to " : "rename to ") + p.to.rel_path +
           (p.to.ino != 0 ? " (replacing the file there)" : "");
  }
  if (p.bypass == "link") return "link to " + p.to.rel_path;
  if (IsAttrBypass(p.bypass)) return p.bypass + " " + p.args;
  if (p.bypass != "open") return p.bypass;
  const uint64_t f = p.open_flags;
  std::string s = "open ";
  s += (f & O_ACCMODE) == O_RDWR ? "O_RDWR" : (f & O_ACCMODE) == O_WRONLY ? "O_WRONLY" : "O_RDONLY";
  static constexpr struct {
    uint64_t bit;
    const char* name;
  } kBits[] = {
      {O_CREAT, "O_CREAT"}, {O_EXCL, "O_EXCL"}, {O_TRUNC, "O_TRUNC"}, {O_APPEND, "O_APPEND"}};
  for (const auto& b : kBits) {
    if (f & b.bit) s += std::string("|") + b.name;
  }
  return s;
}

bool IsAttrBypass(const std::string& op) {
  return op == "chmod" || op == "chown" || op == "utimes" || op == "xattr";
}

const char* OutcomeName(Outcome o) {
  switch (o) {
    case Outcome::kAllowedOnce:
      return "allowed-once";
    case Outcome::kDenied:
      return "denied";
    case Outcome::kTimeout:
      return "timeout";
    case Outcome::kDisconnected:
      return "disconnected";
    case Outcome::kCancelled:
      return "cancelled";
    case Outcome::kStale:
      return "stale";
    case Outcome::kShutdown:
      return "shutdown";
  }
  return "?";
}

}  // namespace cordon::policy
