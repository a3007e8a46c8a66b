// `cordon policy reload --run RUN FILE`, the running cordon's side (issue
// 27 item 2): served on the run's control socket (supervisor/
// control_socket.h). The guard goes up first (every supervisor decision
// refuses: supervisor/rules.h); the file is then built into a policy by
// the same BuildPolicy a launch uses, with the run's own command-line
// options and the run's own denials (its records, journal, scan caches);
// checked against the kernel layers the tool was launched under
// (policy/reload_check.h); and only then are its rules made, by the same
// MakeRules as at launch, and swapped in. Any failure keeps the old rules.
// Every attempt is an audit record ("policy reload": accepted, refused or
// invalid, with both policies' digests).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "policy/policy.h"
#include "supervisor/audit/audit_log.h"
#include "supervisor/net/web_proxy.h"
#include "supervisor/rules.h"
#include "tools/run_command.h"

namespace cordon::tools {

// What a reload is built and checked against: the run as launched.
struct ReloadFrame {
  RunOptions options;       // the run's own (a reload's file replaces --policy)
  policy::Policy launched;  // the run's policy as the tool was launched under it
  // The rules the run added to its policy (its records, journal, scan
  // caches, the preload library): added to every reloaded policy too.
  std::vector<policy::PathRule> run_rules;
  // The run's sensitive.delete when its journal made it "ask" (no place for
  // a journal): a reload that names the policy's own mode gets this too.
  policy::SensitiveDelete asked_for = policy::SensitiveDelete::kRecoverable;
  std::shared_ptr<supervisor::LiveRules> live;
  std::shared_ptr<supervisor::AuditLog> audit;  // null: no log
  // public-web, hosts: the run's proxy, which takes a narrowed web grant
  // (null: no proxy). Outlives the reloader.
  supervisor::WebProxy* web_proxy = nullptr;
};

class RunReloader {
 public:
  explicit RunReloader(ReloadFrame frame);
  // The control socket's handler: one reload request on `conn`.
  void Serve(int conn, int stop);

 private:
  struct Outcome {
    const char* kind = "invalid";  // accepted, refused, invalid
    std::string message;
    // What building the policy warned of: said to the caller, not on the
    // run's stderr.
    std::vector<std::string> warnings;
  };
  // Builds and checks the policy in `fd` (named `label`); on success
  // `next` holds its rules and `p` the policy.
  Outcome Build(int fd, const std::string& label, std::shared_ptr<const supervisor::Rules>& next,
                policy::Policy& p);

  ReloadFrame f_;
  policy::Policy current_;  // the policy in force
};

}  // namespace cordon::tools
