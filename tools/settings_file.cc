#include "tools/settings_file.h"

#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "base/fd.h"
#include "policy/policy_parser.h"
#include "supervisor/workspace_store.h"
#include "tools/policy_file.h"

namespace cordon::tools {
namespace {

// Every problem the one policy parser finds in `text`, one line each; `p`
// gets what the text says (on top of the defaults).
std::vector<std::string> Check(const std::string& path, std::string_view text, policy::Policy& p) {
  std::vector<std::string> out;
  for (const auto& e : policy::ParsePolicy(text, p)) out.push_back(policy::FormatPolicyError(path, e));
  return out;
}

// mkdir -p with mode 0700 for what it makes; what exists is left as it is.
Status MakeDirs(const std::string& dir) {
  for (std::size_t i = 1; i <= dir.size(); ++i) {
    if (i != dir.size() && dir[i] != '/') continue;
    std::string part = dir.substr(0, i);
    if (::mkdir(part.c_str(), 0700) != 0 && errno != EEXIST) return Errno("mkdir", part);
  }
  struct stat st;
  if (::stat(dir.c_str(), &st) != 0) return Errno("stat", dir);
  if (!S_ISDIR(st.st_mode)) return SysError{ENOTDIR, "mkdir", dir};
  return Ok();
}

Status WriteAll(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Errno("write");
    data.remove_prefix(static_cast<std::size_t>(n));
  }
  return Ok();
}

}  // namespace

std::string SettingsPath(std::string* warning) {
  std::string ignored;
  std::string config = supervisor::XdgBaseDir("XDG_CONFIG_HOME", "/.config", &ignored);
  if (!ignored.empty() && warning != nullptr) {
    *warning = "XDG_CONFIG_HOME=" + ignored + " is relative and ignored: using " + config;
  }
  return config + "/cordon/settings.json";
}

std::string LoadSettings(policy::Policy& p, std::vector<std::string>& errors,
                         std::vector<std::string>& warnings) {
  std::string warning;
  std::string path = SettingsPath(&warning);
  if (!warning.empty()) warnings.push_back(warning);
  struct stat st;
  if (::stat(path.c_str(), &st) != 0 && errno == ENOENT) return {};
  LoadPolicyFile(path, "", p, errors);
  p.notes.push_back("the policy is the settings file " + path +
                    " (no --policy given; cordon sandbox status)");
  return path;
}

bool SettingsRunRetention(policy::RunRetention& runs, std::string& error) {
  SettingsText s;
  if (!ReadSettings(s, error)) return false;
  if (!s.exists) return true;
  // The whole file is checked, as a run without --policy checks it; only
  // its runs section is taken.
  policy::Policy settings;
  settings.runs = runs;
  const std::vector<std::string> errors = Check(s.path, s.text, settings);
  if (!errors.empty()) {
    error = errors.front();
    return false;
  }
  runs = settings.runs;
  return true;
}

bool ReadSettings(SettingsText& out, std::string& error, std::string* warning) {
  out.path = SettingsPath(warning);
  struct stat st;
  if (::stat(out.path.c_str(), &st) != 0 && errno == ENOENT) {
    out.exists = false;
    out.text.clear();
    return true;
  }
  out.exists = true;
  if (!ReadSmallFile(out.path, out.text)) {
    error = out.path + ": cannot read it (unreadable, not a file, or over 1 MiB)";
    return false;
  }
  return true;
}

SettingsEdit SetSandboxEnabled(const std::string& path, std::string_view old, bool enabled,
                               bool allow_bypass) {
  using nlohmann::ordered_json;  // keeps the file's key order
  SettingsEdit edit;
  policy::Policy before;
  if (!old.empty()) {
    edit.errors = Check(path, old, before);
    if (!edit.errors.empty()) return edit;
  }
  if (!enabled && !before.allow_bypass && !allow_bypass) {
    edit.errors.push_back(
        "sandbox disable refused: " + path +
        (old.empty() ? " does not exist, so nothing sets" : " does not set") +
        " sandbox.allowBypass true, and cordon never runs a tool unconfined "
        "without it; `cordon sandbox disable --allow-bypass` sets both");
    return edit;
  }
  if (!old.empty() && before.sandbox_enabled == enabled && (before.allow_bypass || !allow_bypass)) {
    edit.unchanged = true;
    edit.text = std::string(old);
    return edit;
  }
  // Checked above by the policy parser: an object without duplicate keys,
  // whose "sandbox", when present, is an object.
  ordered_json doc = old.empty() ? ordered_json::object() : ordered_json::parse(old);
  const bool new_section = !doc.contains("sandbox");
  ordered_json& sandbox = doc["sandbox"];
  if (new_section) sandbox = ordered_json::object();
  sandbox["enabled"] = enabled;
  edit.changes.push_back(std::string("sandbox.enabled = ") + (enabled ? "true" : "false"));
  if (allow_bypass && !before.allow_bypass) {
    sandbox["allowBypass"] = true;
    edit.changes.push_back("sandbox.allowBypass = true (--allow-bypass)");
  }
  policy::Policy after;
  edit.errors = Check(path, doc.dump(), after);
  if (edit.errors.empty() && new_section && after.profile != before.profile) {
    // A sandbox section alone would make the workspace writable (seed 004's
    // addCurrentWorkingDirectory, default true): a toggle must not.
    sandbox["addCurrentWorkingDirectory"] = false;
    edit.changes.push_back(
        "sandbox.addCurrentWorkingDirectory = false (the workspace stays read-only, as it was)");
    after = policy::Policy{};
    edit.errors = Check(path, doc.dump(), after);
  }
  if (edit.errors.empty() && after.profile != before.profile) {
    edit.errors.push_back(path + ": the edit would change the profile from " +
                          policy::ProfileName(before.profile) + " to " +
                          policy::ProfileName(after.profile) + "; nothing was written");
  }
  edit.text = doc.dump(2) + "\n";
  return edit;
}

Status WriteSettingsFile(const std::string& path, const std::string& text) {
  std::string target = path;
  char real[PATH_MAX];
  if (::realpath(path.c_str(), real) != nullptr) target = real;
  std::string dir = target.substr(0, target.rfind('/'));
  if (dir.empty()) dir = "/";
  if (Status s = MakeDirs(dir); !s) return s;
  std::string tmp = dir + "/.settings.json.XXXXXX";
  Fd fd(::mkostemp(tmp.data(), O_CLOEXEC));
  if (!fd) return Errno("mkostemp", tmp);
  Status s = ::fchmod(fd.get(), 0600) == 0 ? Ok() : Status(Errno("fchmod", tmp));
  if (s) s = WriteAll(fd.get(), text);
  if (s && ::fsync(fd.get()) != 0) s = Errno("fsync", tmp);
  if (s && ::close(fd.release()) != 0) s = Errno("close", tmp);
  if (s && ::rename(tmp.c_str(), target.c_str()) != 0) s = Errno("rename", target);
  if (!s) {
    ::unlink(tmp.c_str());
    return s;
  }
  // The rename itself on disk.
  if (Fd d(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)); d) (void)::fsync(d.get());
  return Ok();
}

}  // namespace cordon::tools
