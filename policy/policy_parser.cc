#include "policy/policy_parser.h"

#include <algorithm>
#include <cerrno>
#include <initializer_list>
#include <nlohmann/json.hpp>

#include "policy/deny_glob.h"
#include "policy/network_mode.h"
#include "policy/path_admission.h"
#include "policy/protected_paths.h"
#include "policy/strict_json.h"
#include "policy/tool_pin.h"

namespace cordon::policy {
namespace {

using nlohmann::json;

std::string Child(const std::string& ptr, const std::string& key) {
  return ptr + "/" + JsonPointerEscape(key);
}
std::string Child(const std::string& ptr, std::size_t i) { return ptr + "/" + std::to_string(i); }

const char* TypeName(const json& j) { return j.type_name(); }

struct WrittenPath {
  std::string path;  // lexically normal
  Access access;
  std::string pointer;
};

// Parsing state shared by the section functions.
struct Ctx {
  Policy& p;
  std::vector<PolicyError>& errors;
  std::vector<WrittenPath> paths;
  bool has_sandbox = false;
  bool has_profile = false;
  std::string profile;
  std::string profile_pointer;

  void Error(std::string pointer, std::string message) {
    errors.push_back({std::move(pointer), std::move(message)});
  }
};

// Checks that `j` is an object with only `allowed` keys.
bool Object(Ctx& c, const json& j, const std::string& ptr, const std::vector<const char*>& allowed) {
  if (!j.is_object()) {
    c.Error(ptr, std::string("must be an object, not ") + TypeName(j));
    return false;
  }
  for (const auto& item : j.items()) {
    const std::string& key = item.key();  // a plain name: clang 14 cannot capture a binding
    bool known = std::any_of(allowed.begin(), allowed.end(), [&](const char* a) { return key == a; });
    if (!known) {
      std::string list;
      for (const char* a : allowed) list += std::string(list.empty() ? "" : ", ") + a;
      c.Error(Child(ptr, key), "unknown key (known here: " + list + ")");
    }
  }
  return true;
}

void Bool(Ctx& c, const json& obj, const char* key, const std::string& ptr, bool& out) {
  if (!obj.contains(key)) return;
  const json& v = obj[key];
  if (!v.is_boolean()) {
    c.Error(Child(ptr, key), std::string("must be true or false, not ") + TypeName(v));
    return;
  }
  out = v.get<bool>();
}

// A string that must be one of `choices`; returns its index, or -1.
int Choice(Ctx& c, const json& v, const std::string& vptr,
           std::initializer_list<const char*> choices) {
  std::string list;
  for (const char* a : choices) list += std::string(list.empty() ? "" : " or ") + "\"" + a + "\"";
  if (v.is_string()) {
    int i = 0;
    for (const char* a : choices) {
      if (v.get_ref<const std::string&>() == a) return i;
      ++i;
    }
  }
  c.Error(vptr, "must be " + list);
  return -1;
}

void Count(Ctx& c, const json& obj, const char* key, const std::string& ptr, std::size_t max,
           std::size_t& out) {
  if (!obj.contains(key)) return;
  const json& v = obj[key];
  if (!v.is_number_unsigned() || v.get<std::uint64_t>() == 0 || v.get<std::uint64_t>() > max) {
    c.Error(Child(ptr, key), "must be a whole number from 1 to " + std::to_string(max));
    return;
  }
  out = static_cast<std::size_t>(v.get<std::uint64_t>());
}

void PathList(Ctx& c, const json& obj, const char* key, const std::string& ptr, Access access) {
  if (!obj.contains(key)) return;
  const json& list = obj[key];
  std::string lptr = Child(ptr, key);
  if (!list.is_array()) {
    c.Error(lptr, std::string("must be an array of absolute paths, not ") + TypeName(list));
    return;
  }
  for (std::size_t i = 0; i < list.size(); ++i) {
    std::string eptr = Child(lptr, i);
    if (!list[i].is_string()) {
      c.Error(eptr, std::string("must be a string, not ") + TypeName(list[i]));
      continue;
    }
    const std::string& raw = list[i].get_ref<const std::string&>();
    if (access == Access::kDenied && IsGlobPattern(raw)) {
      // A deny glob: gitignore-style, relative to the workspace.
      if (std::string why = CheckDenyGlob(raw); !why.empty()) {
        c.Error(eptr, "'" + raw + "': " + why);
      } else if (std::find(c.p.deny_globs.begin(), c.p.deny_globs.end(), raw) ==
                 c.p.deny_globs.end()) {
        c.p.deny_globs.push_back(raw);
      }
      continue;
    }
    if (raw.empty() || raw[0] != '/') {
      c.Error(eptr, "'" + raw + "' must be an absolute path");
      continue;
    }
    // The shared admission rule: a raw ".." is refused as written, even when
    // it would resolve somewhere harmless.
    char normal[kAdmissionMaxPath];
    long n = NormalizePath(raw, nullptr, normal);
    if (n < 0) {
      const char* why = n == -EACCES        ? "a '..' segment is refused before normalisation"
                        : n == -ENAMETOOLONG ? "longer than PATH_MAX"
                                             : "contains a NUL byte";
      c.Error(eptr, "'" + raw + "': " + why);
      continue;
    }
    c.paths.push_back({std::string(normal, static_cast<std::size_t>(n)), access, eptr});
  }
}

// --- one function per section ------------------------------------------

void ParseSecurity(Ctx& c, const json& j, const std::string& ptr) {
  if (!Object(c, j, ptr, {"assistantPermissions"})) return;
  if (!j.contains("assistantPermissions")) return;
  std::string aptr = Child(ptr, "assistantPermissions");
  const json& ap = j["assistantPermissions"];
  if (!Object(c, ap, aptr, {"profile"})) return;
  if (!ap.contains("profile")) return;
  c.profile_pointer = Child(aptr, "profile");
  if (!ap["profile"].is_string()) {
    c.Error(c.profile_pointer, std::string("must be a string, not ") + TypeName(ap["profile"]));
    return;
  }
  c.has_profile = true;
  c.profile = ap["profile"].get<std::string>();
}

void ParseFilesystem(Ctx& c, const json& j, const std::string& ptr) {
  if (!Object(c, j, ptr, {"readwritePaths", "readonlyPaths", "deniedPaths", "clearPolicyOnExit"})) {
    return;
  }
  PathList(c, j, "readwritePaths", ptr, Access::kReadWrite);
  PathList(c, j, "readonlyPaths", ptr, Access::kReadOnly);
  PathList(c, j, "deniedPaths", ptr, Access::kDenied);
  Bool(c, j, "clearPolicyOnExit", ptr, c.p.clear_policy_on_exit);
  if (!c.p.clear_policy_on_exit) {
    // Seed 004 cleans up its generated policy file at exit unless told to
    // keep it. cordon has nothing to keep: the policy it generates lives in
    // the supervisor's memory only, and the run's private TMPDIR is always
    // removed. Taking false silently would promise what is not done.
    c.Error(Child(ptr, "clearPolicyOnExit"),
            "false is not supported: cordon never writes a run's generated policy to disk "
            "(`cordon policy explain` prints it) and always removes the run's private TMPDIR "
            "at exit; true, the default, is what every run does");
  }
}

// sandbox.network: seed 004's allowOutbound (true: allow), and the web
// grants: mode (as --network takes it), the CONNECT ports, the proxy's caps.
void ParseNetwork(Ctx& c, const json& j, const std::string& ptr) {
  if (!Object(c, j, ptr, {"allowOutbound", "mode", "ports", "timeoutSeconds", "maxResponseBytes",
                          "maxConnections"})) {
    return;
  }
  bool allow = c.p.network == Network::kAllow;
  Bool(c, j, "allowOutbound", ptr, allow);
  if (j.contains("mode")) {
    std::string error;
    if (!j["mode"].is_string()) {
      c.Error(Child(ptr, "mode"), std::string("must be a string, not ") + TypeName(j["mode"]));
    } else if (!ParseNetworkMode(j["mode"].get<std::string>(), &c.p, &error)) {
      c.Error(Child(ptr, "mode"), error);
    } else if (allow && c.p.network != Network::kAllow) {
      c.Error(Child(ptr, "allowOutbound"),
              std::string("true contradicts mode \"") + FormatNetworkMode(c.p) + "\"");
    }
  } else {
    c.p.network = allow ? Network::kAllow : Network::kNone;
  }
  if (j.contains("ports")) {
    const json& ports = j["ports"];
    if (!ports.is_array() || ports.empty()) {
      c.Error(Child(ptr, "ports"), "must be a non-empty array of port numbers");
    } else {
      c.p.web.ports.clear();
      for (std::size_t i = 0; i < ports.size(); ++i) {
        if (!ports[i].is_number_unsigned() || ports[i].get<std::uint64_t>() == 0 ||
            ports[i].get<std::uint64_t>() > 65535) {
          c.Error(Child(Child(ptr, "ports"), i), "must be a port number from 1 to 65535");
          continue;
        }
        c.p.web.ports.push_back(static_cast<std::uint16_t>(ports[i].get<std::uint64_t>()));
      }
    }
  }
  Count(c, j, "timeoutSeconds", ptr, 86400, c.p.web.timeout_seconds);
  Count(c, j, "maxResponseBytes", ptr, std::size_t{1} << 50, c.p.web.max_response_bytes);
  Count(c, j, "maxConnections", ptr, 4096, c.p.web.max_connections);
}

void ParseSandbox(Ctx& c, const json& j, const std::string& ptr) {
  c.has_sandbox = true;
  if (!Object(c, j, ptr,
              {"enabled", "allowBypass", "addCurrentWorkingDirectory", "filesystem", "network"})) {
    return;
  }
  Bool(c, j, "enabled", ptr, c.p.sandbox_enabled);
  Bool(c, j, "allowBypass", ptr, c.p.allow_bypass);
  Bool(c, j, "addCurrentWorkingDirectory", ptr, c.p.add_cwd);
  if (j.contains("filesystem")) ParseFilesystem(c, j["filesystem"], Child(ptr, "filesystem"));
  if (j.contains("network")) ParseNetwork(c, j["network"], Child(ptr, "network"));
  if (!c.p.sandbox_enabled && !c.p.allow_bypass) {
    c.Error(Child(ptr, "enabled"),
            "false needs /sandbox/allowBypass true: cordon never runs a tool unconfined otherwise");
  }
}

void ParseProtectedPaths(Ctx& c, const json& j, const std::string& ptr) {
  if (!j.is_array()) {
    c.Error(ptr, std::string("must be an array of \"+pattern\"/\"-pattern\" edits, not ") +
                     TypeName(j));
    return;
  }
  for (std::size_t i = 0; i < j.size(); ++i) {
    if (!j[i].is_string()) {
      c.Error(Child(ptr, i), std::string("must be a string, not ") + TypeName(j[i]));
      continue;
    }
    for (std::string& e : EditProtectedPatterns(c.p.protected_patterns, {j[i].get<std::string>()})) {
      c.Error(Child(ptr, i), std::move(e));
    }
  }
}

void ParseSensitive(Ctx& c, const json& j, const std::string& ptr) {
  if (!Object(c, j, ptr, {"delete"})) return;
  if (!j.contains("delete")) return;
  int d = Choice(c, j["delete"], Child(ptr, "delete"), {"ask", "deny", "allow", "recoverable"});
  if (d >= 0) c.p.sensitive_delete = static_cast<SensitiveDelete>(d);
}

void ParseLinks(Ctx& c, const json& j, const std::string& ptr) {
  int m = Choice(c, j, ptr, {"strict", "kernel"});
  if (m >= 0) c.p.links = static_cast<LinkMode>(m);
}

// hardLinks: which regular files with more than one name the read grant
// keeps (policy/hard_links.h).
void ParseHardLinks(Ctx& c, const json& j, const std::string& ptr) {
  int m = Choice(c, j, ptr, {"refuse", "inside-workspace"});
  if (m >= 0) c.p.hard_links = static_cast<HardLinks>(m);
}

void ParseLimits(Ctx& c, const json& j, const std::string& ptr) {
  if (!Object(c, j, ptr, {"treeEntries", "treeDepth", "scanEntries", "journalBytes",
                             "journalCopyBytes", "journalDays"})) {
    return;
  }
  Count(c, j, "treeEntries", ptr, 1000000, c.p.limits.max_tree_entries);
  Count(c, j, "scanEntries", ptr, 10000000, c.p.limits.max_scan_entries);
  Count(c, j, "journalBytes", ptr, std::size_t{1} << 50, c.p.limits.max_journal_bytes);
  Count(c, j, "journalCopyBytes", ptr, std::size_t{1} << 50, c.p.limits.max_journal_copy_bytes);
  Count(c, j, "journalDays", ptr, 36500, c.p.limits.max_journal_days);
  Count(c, j, "treeDepth", ptr, 4096, c.p.limits.max_tree_depth);
}

// runs: how many of the workspace's runs are kept (policy/run_retention.h);
// 0 turns a bound off.
void ParseRuns(Ctx& c, const json& j, const std::string& ptr) {
  if (!Object(c, j, ptr, {"keepDays", "keepRuns"})) return;
  auto bound = [&](const char* key, std::size_t max, const char* off, std::size_t& out) {
    if (!j.contains(key)) return;
    const json& v = j[key];
    if (!v.is_number_unsigned() || v.get<std::uint64_t>() > max) {
      c.Error(Child(ptr, key),
              "must be a whole number from 0 (" + std::string(off) + ") to " + std::to_string(max));
      return;
    }
    out = static_cast<std::size_t>(v.get<std::uint64_t>());
  };
  bound("keepDays", kMaxKeepDays, "no age bound", c.p.runs.keep_days);
  bound("keepRuns", kMaxKeepRuns, "no count bound", c.p.runs.keep_runs);
}

// tools: [{name, path}]: the exec allowlist, named here and pinned by the
// loader (supervisor::PinTools), which reports at the same pointer.
void ParseTools(Ctx& c, const json& j, const std::string& ptr) {
  if (!j.is_array()) {
    c.Error(ptr, std::string("must be an array of {\"name\", \"path\"}, not ") + TypeName(j));
    return;
  }
  for (std::size_t i = 0; i < j.size(); ++i) {
    std::string at = Child(ptr, i);
    if (!Object(c, j[i], at, {"name", "path"})) continue;
    if (!j[i].contains("name") || !j[i]["name"].is_string() || !j[i].contains("path") ||
        !j[i]["path"].is_string()) {
      c.Error(at, "needs a string \"name\" and an absolute \"path\"");
      continue;
    }
    ToolPin spec;
    spec.name = j[i]["name"].get<std::string>();
    spec.path = j[i]["path"].get<std::string>();
    spec.source = at;
    if (auto bad = CheckToolSpec(spec.name, spec.path)) c.Error(at, Describe(*bad));
    else c.p.tools.push_back(std::move(spec));
  }
}

struct Section {
  const char* key;
  void (*parse)(Ctx&, const json&, const std::string&);
};

// The top level. A new section is one line here and one function above.
constexpr Section kSections[] = {
    {"security", ParseSecurity},   {"sandbox", ParseSandbox},     {"protectedPaths", ParseProtectedPaths},
    {"sensitive", ParseSensitive}, {"links", ParseLinks},         {"limits", ParseLimits},
    {"tools", ParseTools},         {"hardLinks", ParseHardLinks}, {"runs", ParseRuns},
};

// The seeds' profile rules (DESIGN.md, "The policy, from the seeds").
void ResolveProfile(Ctx& c) {
  Policy& p = c.p;
  if (c.has_profile) {
    if (c.profile == kWorkspaceManagedV1) {
      p.profile = Profile::kWorkspaceWrite;
      p.profile_reason = "security.assistantPermissions.profile is \"workspace-managed/v1\"";
    } else {
      p.profile = Profile::kReadOnly;
      p.profile_reason = "unknown profile version \"" + c.profile +
                         "\" (known: workspace-managed/v1): the legacy read-only policy is kept";
    }
    if (!p.add_cwd && p.profile == Profile::kWorkspaceWrite) {
      c.Error("/sandbox/addCurrentWorkingDirectory",
              "false contradicts " + c.profile_pointer + " \"workspace-managed/v1\"");
    }
  } else if (c.has_sandbox) {
    p.profile = p.add_cwd ? Profile::kWorkspaceWrite : Profile::kReadOnly;
    p.profile_reason = p.add_cwd
        ? "sandbox settings (seed 004) with addCurrentWorkingDirectory (default true): the "
          "workspace is read-write"
        : "sandbox settings with addCurrentWorkingDirectory false: the workspace is not added "
          "read-write, only readable so the tool can start in it";
  } else {
    p.profile = Profile::kReadOnly;
    p.profile_reason = "no profile named: the legacy read-only policy";
  }
}

void CheckContradictions(Ctx& c) {
  for (std::size_t i = 0; i < c.paths.size(); ++i) {
    for (std::size_t j = i + 1; j < c.paths.size(); ++j) {
      const WrittenPath& a = c.paths[i];
      const WrittenPath& b = c.paths[j];
      if (a.path != b.path) continue;
      if (a.access == b.access) {
        c.Error(b.pointer, "'" + b.path + "' is listed twice (also " + a.pointer + ")");
      } else {
        // Not an error: the one rule lookup settles a tie (rule_lookup.h),
        // whatever the order, and explain says how.
        Access won = Strictness(a.access) > Strictness(b.access) ? a.access : b.access;
        c.p.notes.push_back("'" + b.path + "' is both " + AccessName(a.access) + " (" +
                            a.pointer + ") and " + AccessName(b.access) + " (" + b.pointer +
                            "): the stricter rule of one path wins, so it is " +
                            AccessName(won));
      }
    }
  }
}

}  // namespace

std::string FormatPolicyError(const std::string& file, const PolicyError& e) {
  if (e.line > 0) {
    return file + ":" + std::to_string(e.line) + ":" + std::to_string(e.column) + ": " + e.message;
  }
  return file + ": " + (e.pointer.empty() ? "(document)" : e.pointer) + ": " + e.message;
}

std::vector<PolicyError> ParsePolicy(std::string_view text, Policy& out) {
  std::vector<PolicyError> errors;
  json doc;
  if (!ParseStrictJson(text, doc, errors)) return errors;
  Ctx c{out, errors, {}};
  std::vector<const char*> keys;
  for (const Section& s : kSections) keys.push_back(s.key);
  if (!Object(c, doc, "", keys)) return errors;
  for (const Section& s : kSections) {
    if (doc.contains(s.key)) s.parse(c, doc[s.key], Child("", s.key));
  }
  ResolveProfile(c);
  CheckContradictions(c);
  for (const WrittenPath& w : c.paths) {
    out.paths.push_back({w.path, w.access, w.access != Access::kDenied, "policy " + w.pointer});
  }
  return errors;
}

}  // namespace cordon::policy
