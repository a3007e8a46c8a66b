#include "tools/run_preload.h"

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdlib>
#include <string>

namespace cordon::tools {
namespace {

std::string EnvValue(const std::vector<std::string>& env, const std::string& key) {
  std::string prefix = key + "=";
  for (const auto& e : env) {
    if (e.rfind(prefix, 0) == 0) return e.substr(prefix.size());
  }
  return {};
}

// What the preload admits: the policy, and the shared directories where the
// supervisor decides each change (so the preload lets them through to it).
policy::Policy PreloadView(const policy::Policy& p, const std::vector<std::string>& shared) {
  policy::Policy view = p;
  for (const std::string& d : shared) view.paths.push_back(policy::PathRule::ReadWrite(d));
  return view;
}

}  // namespace

std::shared_ptr<supervisor::ReportTally> AttachPreload(policy::Policy& run_policy,
                                                       supervisor::LaunchRequest& req,
                                                       std::shared_ptr<supervisor::AuditLog> audit) {
  const std::string& exe = req.argv.at(0);
  // Refusals are said by the supervisor with their hint
  // (supervisor/refusal_log.h); --log-level info or the caller's
  // CORDON_LOG=1 asks the preload for its own line as well, which names
  // the precise rule (a raw '..' segment) as it happens.
  supervisor::PreloadReporting reporting;
  reporting.log_refusals = spdlog::default_logger()->level() <= spdlog::level::info ||
                           EnvValue(req.env, "CORDON_LOG") == "1";
  // Nobody tallies the run: the preload reports its refusals alone.
  const bool tallied = audit || spdlog::should_log(spdlog::level::info);
  reporting.refused_only = !tallied;
  std::string caller_ld_preload = EnvValue(req.env, "LD_PRELOAD");
  supervisor::ApplyPreloadEnv(&req.env, {});  // the caller cannot set cordon's variables

  std::string why;
  if (!supervisor::UsesGlibcLoader(exe, &why)) {
    spdlog::info("preload not applied ({}): kernel enforcement only", why);
    if (!caller_ld_preload.empty()) req.env.push_back("LD_PRELOAD=" + caller_ld_preload);
    return nullptr;
  }
  std::string library = supervisor::FindPreloadLibrary();
  supervisor::PreloadEnv env;
  if (library.empty()) {
    why = "libcordon_preload.so not found";
  } else if (supervisor::MakePreloadEnv(PreloadView(run_policy, req.shared_dirs), library,
                                        caller_ld_preload, reporting, &env, &why)) {
    supervisor::ApplyPreloadEnv(&req.env, env.set);
    for (const auto& path : env.read_only) {
      run_policy.paths.push_back(policy::PathRule::ReadOnlyNoExec(path));
    }
    spdlog::info("preload applied: {}", library);
    auto tally = tallied ? std::make_shared<supervisor::ReportTally>() : nullptr;
    req.on_report = [tally, audit, refusals = req.refusals](const void* data, size_t len) {
      std::string what, hint;
      if (refusals && supervisor::DescribeRefusal(data, len, &what, &hint)) {
        refusals->Refused(what, hint);
      }
      if (!tally) return;
      tally->Add(data, len);
      if (audit) {
        // The tool's own account: kept, but marked untrusted ("trusted":
        // false) and never used to decide anything.
        nlohmann::json report;
        supervisor::DecodeReportJson(data, len, &report);
        (void)audit->Append("hint", {{"source", "preload"},
                                     {"trusted", false},
                                     {"report", std::move(report)}});
      }
      if (spdlog::should_log(spdlog::level::debug)) {
        std::string line;
        supervisor::DecodeReport(data, len, &line);
        spdlog::debug("{}", line);
      }
    };
    return tally;
  }
  spdlog::info("preload not applied ({}): kernel enforcement only", why);
  if (!caller_ld_preload.empty()) req.env.push_back("LD_PRELOAD=" + caller_ld_preload);
  return nullptr;
}

}  // namespace cordon::tools
