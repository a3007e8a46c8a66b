#include "policy/approval.h"

#include <fcntl.h>

#include "policy/digest.h"

namespace cordon::policy {
namespace {

// A file's path, content and identity, as the preview itself and its
// Destination both hold them (the same member names): each written,
// read, digested and copied here once, for either.
template <class From, class To>
void CopyIdentity(const From& from, To& to) {
  to.rel_path = from.rel_path;
  to.size = from.size;
  to.sha256 = from.sha256;
  to.dev = from.dev;
  to.ino = from.ino;
  to.mtime_ns = from.mtime_ns;
  to.ctime_ns = from.ctime_ns;
}

template <class T>
nlohmann::json IdentityJson(const T& x) {
  return {{"path", x.rel_path}, {"size", x.size},         {"sha256", x.sha256},    {"dev", x.dev},
          {"ino", x.ino},       {"mtime_ns", x.mtime_ns}, {"ctime_ns", x.ctime_ns}};
}

// Whether `o` has a preview's path, content and identity fields, typed.
bool IsIdentity(const nlohmann::json& o) {
  auto str = [&](const char* k) { return o.contains(k) && o[k].is_string(); };
  auto uns = [&](const char* k) { return o.contains(k) && o[k].is_number_unsigned(); };
  auto num = [&](const char* k) { return o.contains(k) && o[k].is_number_integer(); };
  return str("path") && str("sha256") && uns("size") && uns("dev") && uns("ino") &&
         num("mtime_ns") && num("ctime_ns");
}

// `o` passed IsIdentity.
template <class T>
void ReadIdentity(const nlohmann::json& o, T& x) {
  x.rel_path = o["path"].get<std::string>();
  x.sha256 = o["sha256"].get<std::string>();
  x.size = o["size"].get<uint64_t>();
  x.dev = o["dev"].get<uint64_t>();
  x.ino = o["ino"].get<uint64_t>();
  x.mtime_ns = o["mtime_ns"].get<int64_t>();
  x.ctime_ns = o["ctime_ns"].get<int64_t>();
}

// The digest's bytes for it: the path, NUL, the numbers a line each, the SHA-256.
template <class T>
void AppendIdentity(std::string& s, const T& x) {
  s += x.rel_path;
  s += '\0';
  for (auto n : {static_cast<int64_t>(x.size), static_cast<int64_t>(x.dev),
                 static_cast<int64_t>(x.ino), x.mtime_ns, x.ctime_ns}) {
    s += std::to_string(n);
    s += '\n';
  }
  s += x.sha256;
}

}  // namespace

DeletePreview::Destination DeletePreview::DestinationOf(const DeletePreview& replaced) {
  Destination d;
  CopyIdentity(replaced, d);
  return d;
}

DeletePreview DeletePreview::ReplacedPreview() const {
  DeletePreview p;
  CopyIdentity(to, p);
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
      AppendIdentity(s, to);
      s += '\0';
    }
  }
  AppendIdentity(s, *this);
  return Sha256Hex(s);
}

nlohmann::json DeletePreview::ToJson() const {
  nlohmann::json j = IdentityJson(*this);
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
      j["to"] = IdentityJson(to);
    }
  }
  return j;
}

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
        ReadIdentity(t, p.to);
        // A link makes a new name: it never replaces a file.
        if (p.bypass == "link" && (p.to.ino != 0 || !p.to.sha256.empty())) return std::nullopt;
      }
      p.directory = p.bypass == "rmdir" || j.contains("directory");
      p.open_flags = j["open_flags"].get<uint64_t>();
      p.bypass_rule = j["rule"].get<std::string>();
    } else
      return std::nullopt;
  }
  ReadIdentity(j, p);
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
