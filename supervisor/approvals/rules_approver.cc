#include "supervisor/approvals/rules_approver.h"

#include <fnmatch.h>

#include <fstream>
#include <sstream>

namespace cordon::supervisor {

std::unique_ptr<RulesApprover> RulesApprover::FromText(const std::string& text,
                                                       std::string* error) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) {
    *error = "not valid JSON";
    return nullptr;
  }
  if (!j.is_array()) {
    *error = "expected a JSON array of {\"glob\", \"max_bytes\"} rules";
    return nullptr;
  }
  std::vector<AllowRule> rules;
  for (size_t i = 0; i < j.size(); ++i) {
    const nlohmann::json& r = j[i];
    std::string where = "rule " + std::to_string(i + 1) + ": ";
    if (!r.is_object()) {
      *error = where + "not an object";
      return nullptr;
    }
    for (const auto& [key, value] : r.items()) {
      if (key != "glob" && key != "max_bytes" && key != "op" && key != "args") {
        *error = where + "unknown key \"" + key + "\"";
        return nullptr;
      }
    }
    if (!r.contains("glob") || !r["glob"].is_string() || r["glob"].get<std::string>().empty()) {
      *error = where + "\"glob\" must be a non-empty string";
      return nullptr;
    }
    AllowRule rule{r["glob"].get<std::string>()};
    if (rule.glob[0] == '/') {
      *error = where + "globs are relative to the workspace";
      return nullptr;
    }
    if (r.contains("max_bytes")) {
      if (!r["max_bytes"].is_number_unsigned()) {
        *error = where + "\"max_bytes\" must be a non-negative integer";
        return nullptr;
      }
      rule.max_bytes = r["max_bytes"].get<uint64_t>();
    }
    if (r.contains("op")) {
      static constexpr const char* kOps[] = {
          "delete",       "write",         "bypass",        "bypass-open", "bypass-unlink",
          "bypass-rmdir", "bypass-mkdir",  "bypass-rename", "bypass-link", "bypass-chmod",
          "bypass-chown", "bypass-utimes", "bypass-xattr"};
      bool known = false;
      for (const char* op : kOps) known = known || r["op"] == op;
      if (!known) {
        *error = where +
                 "\"op\" must be \"delete\", \"write\", \"bypass\", "
                 "\"bypass-open\", \"bypass-unlink\", \"bypass-rmdir\", "
                 "\"bypass-mkdir\", \"bypass-rename\", \"bypass-link\", "
                 "\"bypass-chmod\", \"bypass-chown\", \"bypass-utimes\" or \"bypass-xattr\"";
        return nullptr;
      }
      rule.op = r["op"].get<std::string>();
    }
    if (r.contains("args")) {
      if (!r["args"].is_string() || r["args"].get<std::string>().empty()) {
        *error = where + "\"args\" must be a non-empty string";
        return nullptr;
      }
      if (rule.op.rfind("bypass", 0) != 0) {
        *error = where + "\"args\" is for a bypass rule";
        return nullptr;
      }
      rule.args = r["args"].get<std::string>();
    }
    rules.push_back(std::move(rule));
  }
  return std::make_unique<RulesApprover>(std::move(rules));
}

std::unique_ptr<RulesApprover> RulesApprover::FromFile(const std::string& path,
                                                       std::string* error) {
  std::ifstream f(path, std::ios::binary);
  if (!f) {
    *error = path + ": cannot read";
    return nullptr;
  }
  std::stringstream ss;
  ss << f.rdbuf();
  auto r = FromText(ss.str(), error);
  if (!r) *error = path + ": " + *error;
  return r;
}

namespace {

// Whether a rule for `op` answers this request: each kind of request only
// by a rule of its own kind.
bool Answers(const std::string& op, const DeletePreview& p) {
  if (!p.bypass.empty()) return op == "bypass" || op == "bypass-" + p.bypass;
  if (p.write_in_place) return op == "write";
  return op == "delete";
}

// Whether the rule's glob covers what the request touches: the path, and
// a rename's destination too (a rule for one name moves nothing onto
// another).
bool Covers(const std::string& glob, const DeletePreview& p) {
  auto match = [&](const std::string& path) {
    return ::fnmatch(glob.c_str(), path.c_str(), FNM_PATHNAME) == 0;
  };
  const bool two_ends = p.bypass == "rename" || p.bypass == "link";
  return match(p.rel_path) && (!two_ends || match(p.to.rel_path));
}

// Whether the rule's "args" (when it has them) are the request's: a rule
// for one mode, owner, time or value answers no other (and no request
// without arguments).
bool Argued(const AllowRule& r, const DeletePreview& p) {
  return r.args.empty() || r.args == p.args;
}

}  // namespace

Outcome RulesApprover::Decide(const ApprovalRequest& req, std::chrono::steady_clock::time_point,
                              int, std::string* note) {
  for (const AllowRule& r : rules_) {
    if (Answers(r.op, req.preview) && Covers(r.glob, req.preview) && Argued(r, req.preview) &&
        req.preview.size <= r.max_bytes) {
      *note = "rule " + r.glob;
      return Outcome::kAllowedOnce;
    }
  }
  *note = "no rule allows it";
  return Outcome::kDenied;
}

}  // namespace cordon::supervisor
