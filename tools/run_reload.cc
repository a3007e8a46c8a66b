#include "tools/run_reload.h"

#include <spdlog/spdlog.h>

#include "policy/json_fields.h"
#include "policy/policy_digest.h"
#include "policy/reload_check.h"
#include "supervisor/control_socket.h"
#include "supervisor/launcher.h"
#include "supervisor/tool_filter.h"

namespace cordon::tools {
namespace {

// The layers `filter` and `grants` make, as policy/reload_check.h takes them.
policy::EnforcedLayers Layers(std::vector<policy::Grant> grants,
                              const supervisor::ToolFilterOptions& filter) {
  return {std::move(grants), supervisor::DecidesEveryChange(filter),
          supervisor::NotifiesExec(filter)};
}

// One line: the first problem, and how many more there were.
std::string OneLine(const std::vector<std::string>& problems) {
  if (problems.empty()) return "";
  std::string s = problems.front();
  if (problems.size() > 1) s += " (and " + std::to_string(problems.size() - 1) + " more)";
  return s;
}

}  // namespace

RunReloader::RunReloader(ReloadFrame frame) : f_(std::move(frame)), current_(f_.launched) {}

RunReloader::Outcome RunReloader::Build(int fd, const std::string& label,
                                        std::shared_ptr<const supervisor::Rules>& next,
                                        policy::Policy& p) {
  if (!f_.options.receipt.empty()) {
    return {"refused",
            "this run's policy was checked against a receipt, and a reload brings none; start a "
            "new run"};
  }
  // The same build as the launch's: the run's own options, this file for
  // --policy (read through the descriptor its sender opened).
  RunOptions o = f_.options;
  o.policy_file = "/proc/self/fd/" + std::to_string(fd);
  std::vector<std::string> errors, warnings;
  if (!BuildPolicy(o, p, &errors, label, &warnings)) {
    return {"invalid", OneLine(errors), std::move(warnings)};
  }
  p.paths.insert(p.paths.end(), f_.run_rules.begin(), f_.run_rules.end());
  if (f_.asked_for != f_.launched.sensitive_delete && p.sensitive_delete == f_.asked_for) {
    p.sensitive_delete = f_.launched.sensitive_delete;  // no journal in this run either
  }
  const supervisor::LaunchedLayers& run = f_.live->layers();
  supervisor::ToolFilterOptions wanted_filter = run.filter;
  supervisor::NotifyWhatPolicyNeeds(p, run.rung, run.landlock_abi, &wanted_filter);
  // Both planned now, from one listing, under the run's own filter (what
  // enforces them): supervisor/rules.h, LaunchedLayers.
  const policy::EnforcedLayers running =
      Layers(supervisor::PlanRunGrants(f_.launched, run.filter, run.place.tmp, false), run.filter);
  const policy::EnforcedLayers wanted =
      Layers(supervisor::PlanRunGrants(p, run.filter, run.place.tmp, false), wanted_filter);
  const auto refusals = policy::ReloadRefusals(f_.launched, running, p, wanted);
  if (!refusals.empty()) return {"refused", OneLine(refusals), std::move(warnings)};
  // Taken, but not for reads: say so to whoever asked (docs/policy.md).
  for (const std::string& path : policy::ReadsLeftOpen(running, p, wanted)) {
    warnings.push_back("reads of " + path +
                       " stay allowed until this run ends: the kernel's read grant is the "
                       "launch's and a reload cannot narrow it; start a new run to deny them");
  }
  auto rules = supervisor::MakeRules(p, run.place);
  if (!rules) return {"refused", "the new rules: " + Describe(rules.error()), std::move(warnings)};
  next = std::move(rules.value());
  return {"accepted", "", std::move(warnings)};
}

void RunReloader::Serve(int conn, int stop) {
  auto req = supervisor::RecvControl(conn, stop);
  if (!req) return;
  auto reply = [&](bool ok, const std::string& message,
                   const std::vector<std::string>& warnings = {}) {
    (void)supervisor::SendControl(
        conn, {{"type", "result"}, {"ok", ok}, {"message", message}, {"warnings", warnings}});
  };
  if (req->body["type"] != "reload" || req->fds.size() != 1 || !req->body.contains("file") ||
      !req->body["file"].is_string()) {
    reply(false, "not a reload request (cordon policy reload --run RUN FILE)");
    return;
  }
  const std::string label = req->body["file"].get<std::string>();
  const bool hold = policy::BoolField(req->body, "hold");
  if (!f_.live->started()) {
    reply(false, "this run has no supervisor to reload");
    return;
  }
  const std::string old_digest = policy::PolicyDigest(current_);
  // The guard first: from here until Install or Lift every decision refuses.
  f_.live->Guard();
  spdlog::info("policy reload from {}: every decision refuses until it ends", label);
  std::shared_ptr<const supervisor::Rules> next;
  policy::Policy p;
  Outcome out = Build(req->fds[0].get(), label, next, p);
  if (hold) {
    // `--hold`: the guard stays up until the caller says go on (or goes).
    // It only keeps everything refused for longer.
    (void)supervisor::SendControl(
        conn, {{"type", "holding"},
               {"message", std::string(out.kind) + "; every decision refuses until you go on"}});
    (void)supervisor::RecvControl(conn, stop);
  }
  const bool accepted = next != nullptr;
  nlohmann::json record = {{"outcome", out.kind}, {"file", label}, {"old_digest", old_digest}};
  if (out.kind != std::string("invalid")) record["new_digest"] = policy::PolicyDigest(p);
  if (!out.message.empty()) record["why"] = out.message;
  if (!out.warnings.empty()) record["warnings"] = out.warnings;
  if (accepted) {
    // A narrower web grant (policy::WebGrantWidens said it adds nothing):
    // the proxy's next connections are decided by it.
    if (f_.web_proxy && !(current_.web == p.web)) f_.web_proxy->SetGrant(p.network, p.web);
    f_.live->Install(std::move(next));
    current_ = std::move(p);
    out.message = "policy reloaded from " + label + " (" + old_digest.substr(0, 12) + " -> " +
                  record["new_digest"].get<std::string>().substr(0, 12) +
                  "): the supervisor decides by it from now on";
    spdlog::info("{}", out.message);
  } else {
    f_.live->Lift();
    out.message = "policy reload refused: " + out.message + "; the old policy stays in force";
    spdlog::warn("{}", out.message);
  }
  if (f_.audit) {
    if (!f_.audit->Append("policy reload", std::move(record))) {
      spdlog::warn("audit log append failed");
    }
  }
  reply(accepted, out.message, out.warnings);
}

}  // namespace cordon::tools
