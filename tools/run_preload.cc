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

PreloadAccount AttachPreload(policy::Policy& run_policy, supervisor::LaunchRequest& req,
                             std::shared_ptr<supervisor::AuditLog> audit) {
  PreloadAccount account;
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
  reporting.bypass = req.emulator.allow_bypass && req.emulator.gates &&
                     req.emulator.gates->CanAsk(supervisor::Ask::kBypass) &&
                     req.rung != supervisor::Rung::kPreloadOnly;
  std::string caller_ld_preload = EnvValue(req.env, "LD_PRELOAD");
  supervisor::ApplyPreloadEnv(&req.env, {});  // the caller cannot set cordon's variables

  std::string why;
  if (!supervisor::UsesGlibcLoader(exe, &why)) {
    spdlog::info("preload not applied ({}): kernel enforcement only", why);
    if (!caller_ld_preload.empty()) req.env.push_back("LD_PRELOAD=" + caller_ld_preload);
    if (tallied) account.not_applied = why;
    return account;
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
    // Every exec followed, to say which images ran without the preload:
    // one round trip per exec, paid only when someone reads the account.
    // On the preload-only rung no filter sees an exec.
    std::shared_ptr<supervisor::PreloadCheckins> checkins;
    if (tallied && req.rung != supervisor::Rung::kPreloadOnly) {
      checkins = std::make_shared<supervisor::PreloadCheckins>();
      req.checkins = checkins;
      req.filter.notify_exec = true;
    }
    req.on_report = [tally, checkins, audit, refusals = req.refusals,
                     refused = run_policy.refused_entries](const void* data, size_t len) {
      std::string what, hint;
      bool probe = false;
      if (refusals && supervisor::DescribeRefusal(data, len, &what, &hint, &refused, &probe)) {
        if (probe) {
          refusals->RefusedIfFailed(what, hint);
        } else {
          refusals->Refused(what, hint);
        }
      }
      if (!tally) return;
      tally->Add(data, len);
      int32_t pid = 0;
      if (checkins && supervisor::CheckInPid(data, len, &pid)) checkins->CheckIn(pid);
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
    account.tally = std::move(tally);
    account.checkins = std::move(checkins);
    return account;
  }
  spdlog::info("preload not applied ({}): kernel enforcement only", why);
  if (!caller_ld_preload.empty()) req.env.push_back("LD_PRELOAD=" + caller_ld_preload);
  if (tallied) account.not_applied = why;
  return account;
}

void ReportPreload(const PreloadAccount& account, const std::string& cmd,
                   supervisor::AuditLog* audit) {
  auto record = [audit](nlohmann::json fields) {
    if (audit && !audit->Append("preload", std::move(fields))) {
      spdlog::warn("audit log append failed");
    }
  };
  if (!account.not_applied.empty()) {
    // No exec is followed then: nothing the tool starts gets the preload.
    record({{"preload", "absent"}, {"path", cmd}, {"why", account.not_applied}});
  }
  if (account.tally) {
    spdlog::info("{}", account.tally->Summary());
    if (audit) {
      (void)audit->Append("hint", {{"source", "preload"},
                                   {"trusted", false},
                                   {"summary", account.tally->Summary()}});
    }
  }
  if (!account.checkins) return;
  size_t absent = 0;
  const auto images = account.checkins->Images();
  for (const auto& image : images) {
    if (image.checked_in) {
      spdlog::debug("ran with the preload: {} (pid {})", image.path, image.pid);
      continue;
    }
    ++absent;
    spdlog::info("ran without the preload: {} (pid {}); the kernel layers still held", image.path,
                 image.pid);
    record({{"preload", "absent"},
            {"pid", image.pid},
            {"exec", image.generation},
            {"path", image.path}});
  }
  spdlog::info("preload check-in: {} of {} exec'd images checked in, {} ran without it",
               images.size() - absent, images.size(), absent);
  record({{"preload", "summary"},
          {"execs", images.size()},
          {"checked_in", images.size() - absent},
          {"absent", absent},
          {"unmatched", account.checkins->unmatched()}});
}

}  // namespace cordon::tools
