// `--approvals rules:FILE`: declarative allow rules. The file is a JSON
// array of {"glob": "build/*.o", "max_bytes": 1048576}; a delete is allowed
// once when its workspace-relative path matches a glob (fnmatch(3) with
// FNM_PATHNAME: '*' stays within one directory) and its size is at most
// max_bytes (no limit when absent). A rule with "op": "write" allows a
// write in place that a recoverable run's journal cannot keep instead (a
// rule for deletes never allows a write). A rule with "op": "bypass"
// allows a bypass request (policy/bypass.h) for any operation,
// "bypass-open", "bypass-unlink", "bypass-rmdir", "bypass-mkdir",
// "bypass-rename", "bypass-link", "bypass-chmod", "bypass-chown",
// "bypass-utimes" or "bypass-xattr" for that one only (a rename's and a
// link's glob must cover both ends); no other rule allows a bypass. A
// bypass rule with "args" allows only a request whose arguments are those
// (DeletePreview::args, e.g. "mode 0644"). Anything else is denied.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "supervisor/approvals/approver.h"

namespace cordon::supervisor {

struct AllowRule {
  std::string glob;
  uint64_t max_bytes = UINT64_MAX;
  // "op": "delete" (the default), "write", "bypass", or "bypass-" and
  // one operation (the header comment lists them).
  std::string op = "delete";
  // A bypass rule's "args": only a request with these arguments (empty: any).
  std::string args;
};

class RulesApprover final : public Approver {
 public:
  explicit RulesApprover(std::vector<AllowRule> rules) : rules_(std::move(rules)) {}
  // Null with `error` set when the file is unreadable or malformed.
  static std::unique_ptr<RulesApprover> FromFile(const std::string& path, std::string* error);
  // Null with `error` set when `text` is not a valid rules document.
  static std::unique_ptr<RulesApprover> FromText(const std::string& text, std::string* error);
  const char* Name() const override { return "rules"; }

 protected:
  Outcome Decide(const ApprovalRequest& req, std::chrono::steady_clock::time_point, int,
                 std::string* note) override;

 private:
  std::vector<AllowRule> rules_;
};

}  // namespace cordon::supervisor
