#include "tools/policy_command.h"

#include <limits.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "policy/network_mode.h"
#include "policy/policy.h"
#include "policy/policy_json.h"
#include "supervisor/launcher.h"
#include "supervisor/load/base_policy.h"
#include "supervisor/load/ci_runner.h"
#include "supervisor/load/fs_facts.h"
#include "supervisor/load/normalise.h"
#include "supervisor/load/private_cache.h"
#include "tools/policy_explain.h"
#include "tools/policy_file.h"
#include "tools/policy_reload_command.h"
#include "tools/settings_file.h"

namespace cordon::tools {
namespace {

struct PolicyArgs {
  std::string file;
  std::string workspace;
  std::string profile;
  bool json = false;
  std::vector<std::string> paths;  // --path: what the tool may do there
  std::vector<std::string> env_keep;  // --env-keep, as cordon run's
  bool no_private_cache = false;      // --no-private-cache, as cordon run's
  std::string network;                // --network, as cordon run's
  std::string settings;  // without FILE: the settings file loaded (empty: none)
};

// A path asked about with --path, as the rules see it: canonical when it
// (or its directory) exists, else as written; empty when not absolute.
std::string CanonicalAsked(const std::string& path) {
  if (path.empty() || path[0] != '/') return {};
  char real[PATH_MAX];
  if (::realpath(path.c_str(), real) != nullptr) return real;
  std::string norm;
  if (!supervisor::NormaliseNoDotDot(path, norm)) return {};
  size_t slash = norm.rfind('/');
  std::string dir = slash == 0 ? "/" : norm.substr(0, slash);
  if (::realpath(dir.c_str(), real) == nullptr) return norm;
  std::string d = real;
  return (d == "/" ? "" : d) + norm.substr(slash);
}

// What the one rule lookup (policy/rule_lookup.h) says of each --path: the
// answer the kernel layer, the preload and the supervisor all give.
nlohmann::json Decisions(const PolicyArgs& a, const policy::Policy& p) {
  nlohmann::json out = nlohmann::json::array();
  const std::vector<policy::PathRule> rules = policy::EffectiveRules(p, "");
  for (const std::string& asked : a.paths) {
    // A relative path is the tool's: its cwd is the workspace.
    std::string path =
        CanonicalAsked(asked.empty() || asked[0] == '/' ? asked : p.workspace + "/" + asked);
    const policy::PathRule* r = path.empty() ? nullptr : policy::CoveringRule(rules, path);
    nlohmann::json d = {{"path", policy::JsonText(asked)}, {"canonical", policy::JsonText(path)}};
    if (r == nullptr) {
      d["access"] = "outside";
      d["rule"] = nullptr;
      d["source"] = path.empty() ? "not an absolute path without '..'" : "no rule covers it";
    } else {
      d["access"] = policy::AccessName(r->access);
      d["rule"] = policy::JsonText(r->path);
      d["source"] = r->source.empty() ? (r->path == p.workspace ? "workspace" : "system")
                                      : r->source;
    }
    out.push_back(std::move(d));
  }
  return out;
}

// Loads, applies the one-run overrides explain accepts, normalises.
bool Load(PolicyArgs& a, policy::Policy& p, std::vector<std::string>& errors) {
  if (a.file.empty()) {
    // What a run from here gets: the settings file, as cordon run reads it.
    p.profile_reason = "no policy file and no --profile: cordon run's default";
    std::vector<std::string> warnings;
    a.settings = LoadSettings(p, errors, warnings);
    for (const auto& w : warnings) std::fprintf(stderr, "cordon: warning: %s\n", w.c_str());
  } else {
    LoadPolicyFile(a.file, "", p, errors);
  }
  if (!errors.empty()) return false;
  std::string ws = a.workspace;
  std::vector<std::string> ci_warnings;
  if (ws.empty()) ws = supervisor::CiDefaultWorkspace(ci_warnings);
  if (ws.empty()) {
    char cwd[PATH_MAX];
    if (::getcwd(cwd, sizeof cwd) != nullptr) ws = cwd;
  }
  auto real = supervisor::ResolveWorkspace(ws);
  if (!real) {
    errors.push_back("workspace: " + Describe(real.error()));
    return false;
  }
  p.workspace = real.value();
  if (!a.profile.empty()) {
    p.profile = a.profile == "workspace-write" ? policy::Profile::kWorkspaceWrite
                                               : policy::Profile::kReadOnly;
    p.profile_reason = "--profile " + a.profile + " (this run only)";
  }
  p.env_keep = a.env_keep;
  if (std::string why; !a.network.empty() && !policy::ParseNetworkMode(a.network, &p, &why)) {
    errors.push_back("--network: " + why);
    return false;
  }
  supervisor::AddMachineBase(p, ci_warnings);
  // Named, not made: explain writes nothing.
  if (!a.no_private_cache) supervisor::AddPrivateCache(p, false, ci_warnings);
  for (const auto& w : ci_warnings) std::fprintf(stderr, "cordon: warning: %s\n", w.c_str());
  supervisor::NormalisePolicy(p);
  // The PATH grants a run from here would get (without its command's own).
  for (auto& w : supervisor::AddToolPaths(p, "")) p.notes.push_back("tool paths: " + w);
  for (auto& e : policy::Validate(p, supervisor::GatherFsFacts(p))) errors.push_back(std::move(e));
  return errors.empty();
}

}  // namespace

void RegisterPolicy(CLI::App& app, int& exit_code) {
  static PolicyArgs args;
  CLI::App* cmd = app.add_subcommand(
      "policy", "check or explain a policy file, or reload a running tool's (docs/policy.md)");
  cmd->require_subcommand(1);
  AddPolicyReload(cmd, exit_code);
  CLI::App* check = cmd->add_subcommand("check", "validate FILE; exit 0, or 125 with every error");
  check->add_option("file", args.file, "the policy file")->required();
  check->callback([&exit_code] {
    policy::Policy p;
    std::vector<std::string> errors;
    LoadPolicyFile(args.file, "", p, errors);
    for (const auto& e : errors) std::fprintf(stderr, "%s\n", e.c_str());
    if (errors.empty()) std::printf("%s: ok (profile %s)\n", args.file.c_str(), policy::ProfileName(p.profile));
    exit_code = errors.empty() ? 0 : supervisor::kExitCordonError;
  });
  CLI::App* explain = cmd->add_subcommand(
      "explain", "print the effective policy FILE gives (without FILE: what a run from here gets)");
  explain->add_option("file", args.file, "the policy file (optional)");
  explain->add_option("--workspace", args.workspace, "workspace (default: current directory)");
  explain->add_option("--profile", args.profile, "as cordon run --profile")
      ->check(CLI::IsMember({"read-only", "workspace-write"}));
  explain->add_flag("--json", args.json, "machine-readable output");
  explain->add_option("--network", args.network, "as cordon run --network")
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  explain->add_flag("--no-private-cache", args.no_private_cache, "as cordon run --no-private-cache");
  explain->add_option("--env-keep", args.env_keep, "as cordon run --env-keep")
      ->allow_extra_args(false);
  explain->add_option("--path", args.paths,
                      "also say what the tool may do at PATH (relative: in the workspace), by "
                      "the rule that covers it");
  explain->callback([&exit_code] {
    policy::Policy p;
    std::vector<std::string> errors;
    if (!Load(args, p, errors)) {
      for (const auto& e : errors) std::fprintf(stderr, "cordon: %s\n", e.c_str());
      exit_code = supervisor::kExitCordonError;
      return;
    }
    std::string rung = RungLine();
    if (args.json) {
      nlohmann::json j = ExplainJson(p, rung);
      if (!args.paths.empty()) j["decisions"] = Decisions(args, p);
      std::printf("%s\n", j.dump(2).c_str());
    } else {
      PrintExplained(args.file, args.settings, p, rung);
      if (!args.paths.empty()) std::printf("\nAt the paths asked about (the covering rule decides):\n");
      for (const auto& d : Decisions(args, p)) {
        std::printf("  %-10s  %s\n  %-10s  (%s%s)\n", d["access"].get<std::string>().c_str(),
                    d["path"].get<std::string>().c_str(), "",
                    d["rule"].is_null() ? "" : ("rule " + d["rule"].get<std::string>() + ", from ").c_str(),
                    d["source"].get<std::string>().c_str());
      }
    }
    exit_code = 0;
  });
}

}  // namespace cordon::tools
