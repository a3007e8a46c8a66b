// The user's settings file (seed 004's persisted sandbox settings):
// ${XDG_CONFIG_HOME:-~/.config}/cordon/settings.json. It has the shape of a
// policy file (docs/policy.md) and is read by the one policy parser: it is
// the policy `cordon run` uses when no --policy is given. `cordon sandbox
// enable|disable` edits it (sandbox_command.cc); nothing else writes it, and
// one-run flags (--sandbox, --no-sandbox, --profile ...) never do.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "policy/policy.h"

namespace cordon::tools {

// The settings file's path. A relative XDG_CONFIG_HOME is ignored, as the
// XDG base directory spec says; `warning` (when not null) then says so.
std::string SettingsPath(std::string* warning = nullptr);

// Without a policy file (cordon run, grep, glob, workspace create, policy
// explain): loads the settings file onto `p` as LoadPolicyFile loads a
// policy, when it exists, and notes where the policy came from. Returns the
// file loaded; empty when there is none (the built-in defaults stand).
// Every problem goes to `errors` (one line each; `p` must not be used).
std::string LoadSettings(policy::Policy& p, std::vector<std::string>& errors,
                         std::vector<std::string>& warnings);

// Run retention is the user's preference, not a policy of the run: under
// --policy FILE (which is read instead of the settings file) the settings
// file's runs.keepDays and runs.keepRuns, where it sets them, stand over
// `runs` (FILE's). False, with `error` (one line), when the settings file
// exists but cannot be read or is not a valid policy.
bool SettingsRunRetention(policy::RunRetention& runs, std::string& error);

// The settings file as it stands on disk.
struct SettingsText {
  std::string path;
  bool exists = false;
  std::string text;  // empty when it does not exist
};

// Reads the settings file. False, with `error` (one line), when it exists
// but cannot be read.
bool ReadSettings(SettingsText& out, std::string& error, std::string* warning = nullptr);

// The result of setting sandbox.enabled in a settings file's text.
struct SettingsEdit {
  std::string text;          // the new file's text
  std::vector<std::string> changes;  // each key written, in words, for the user
  std::vector<std::string> errors;   // one line each: nothing may be written
  bool unchanged = false;  // the file already says so: nothing to write
};

// `old` (validated here by the policy parser; empty: no file yet) with
// sandbox.enabled = `enabled`, every other key kept. With `allow_bypass`,
// sandbox.allowBypass is set true as well. A disable that leaves
// allowBypass unset is an error: cordon never runs a tool unconfined
// without it, and never grants it unasked. Where the sandbox section is
// new and would change the profile (seed 004: a sandbox section makes the
// workspace writable), addCurrentWorkingDirectory false keeps it as it was.
SettingsEdit SetSandboxEnabled(const std::string& path, std::string_view old, bool enabled,
                               bool allow_bypass);

// Replaces `path` with `text` atomically: a temporary file in the same
// directory (mode 0600), fsync, rename. Missing directories are made 0700.
// A symlink at `path` is followed: the file it names is replaced.
Status WriteSettingsFile(const std::string& path, const std::string& text);

}  // namespace cordon::tools
