#include "tools/sandbox_command.h"

#include <cstdio>
#include <string>
#include <vector>

#include "policy/policy.h"
#include "supervisor/launcher.h"
#include "tools/policy_file.h"
#include "tools/settings_file.h"

namespace cordon::tools {
namespace {

constexpr int kError = supervisor::kExitCordonError;

void PrintErrors(const std::vector<std::string>& errors) {
  for (const auto& e : errors) std::fprintf(stderr, "cordon: %s\n", e.c_str());
}

// Reads the file, or says why not (125).
bool Read(SettingsText& s) {
  std::string error, warning;
  bool ok = ReadSettings(s, error, &warning);
  if (!warning.empty()) std::fprintf(stderr, "cordon: warning: %s\n", warning.c_str());
  if (!ok) PrintErrors({error});
  return ok;
}

// What `cordon run` does with what the file says, in one line.
int PrintStatus() {
  SettingsText s;
  if (!Read(s)) return kError;
  policy::Policy p;
  if (!s.exists) {
    std::printf("sandbox: enabled (default: no settings file at %s)\n", s.path.c_str());
    std::printf("profile: %s (default)\n", policy::ProfileName(p.profile));
    return 0;
  }
  std::vector<std::string> errors;
  LoadPolicyFile(s.path, "", p, errors);  // as cordon run loads it
  if (!errors.empty()) {
    PrintErrors(errors);
    return kError;
  }
  if (p.sandbox_enabled) {
    std::printf("sandbox: enabled (%s)\n", s.path.c_str());
    if (p.allow_bypass) {
      std::printf("allowBypass: true (cordon run --no-sandbox may run one tool unconfined)\n");
    }
  } else {
    std::printf("sandbox: disabled (%s, with sandbox.allowBypass): cordon run runs tools "
                "unconfined, each run saying SANDBOX BYPASSED; --sandbox confines one run\n",
                s.path.c_str());
  }
  std::printf("profile: %s (%s)\n", policy::ProfileName(p.profile), p.profile_reason.c_str());
  return 0;
}

int Toggle(bool enabled, bool allow_bypass) {
  SettingsText s;
  if (!Read(s)) return kError;
  SettingsEdit edit = SetSandboxEnabled(s.path, s.text, enabled, allow_bypass);
  if (!edit.errors.empty()) {
    PrintErrors(edit.errors);
    return kError;
  }
  const char* state = enabled ? "enabled" : "disabled";
  if (edit.unchanged) {
    std::printf("sandbox: already %s (%s); nothing written\n", state, s.path.c_str());
    return 0;
  }
  if (Status w = WriteSettingsFile(s.path, edit.text); !w) {
    PrintErrors({s.path + ": " + Describe(w.error()) + "; nothing written"});
    return kError;
  }
  std::string changes;
  for (const auto& c : edit.changes) changes += (changes.empty() ? "" : ", ") + c;
  std::printf("sandbox: %s (%s%s: %s)\n", state, s.exists ? "" : "created ", s.path.c_str(),
              changes.c_str());
  if (enabled) {
    std::printf("cordon run confines every tool%s\n",
                s.exists ? "" : "; the profile stays read-only, as without a settings file");
  } else {
    std::printf("cordon run now runs tools UNCONFINED (each run says SANDBOX BYPASSED on stderr); "
                "--sandbox confines one run, cordon sandbox enable restores confinement\n");
  }
  return 0;
}

}  // namespace

void RegisterSandbox(CLI::App& app, int& exit_code) {
  CLI::App* cmd = app.add_subcommand(
      "sandbox", "show or toggle sandbox.enabled in ${XDG_CONFIG_HOME:-~/.config}/cordon/settings.json");
  // At most one action; none is an error of ours, so an unknown word is
  // reported as CLI11's "not expected" rather than "a subcommand is required".
  cmd->require_subcommand(0, 1);
  cmd->callback([cmd, &exit_code] {
    if (!cmd->get_subcommands().empty()) return;
    std::fprintf(stderr, "cordon: sandbox: name one of status, enable, disable\n");
    exit_code = kError;
  });
  cmd->add_subcommand("status", "whether cordon run confines tools, and what says so")
      ->callback([&exit_code] { exit_code = PrintStatus(); });
  cmd->add_subcommand("enable", "write sandbox.enabled true (every other key is kept)")
      ->callback([&exit_code] { exit_code = Toggle(true, false); });
  auto* allow_bypass = new bool(false);  // lives as long as the process
  CLI::App* disable = cmd->add_subcommand(
      "disable", "write sandbox.enabled false; needs sandbox.allowBypass true in the file");
  disable->add_flag("--allow-bypass", *allow_bypass,
                    "also write sandbox.allowBypass true (otherwise disable is refused without it)");
  disable->callback([&exit_code, allow_bypass] { exit_code = Toggle(false, *allow_bypass); });
}

}  // namespace cordon::tools
