// The two small records beside a recoverable run's changes (issue 26):
// meta.json, written when the run starts (which workspace, when, what ran),
// and end.json, written when it ends (how each changed name stood then, and
// the digest of the changes as written, so a record edited later is told
// apart). Pure: text in, records out.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "policy/undo_plan.h"

namespace cordon::policy {

struct RunMeta {
  std::string id;
  std::string workspace;        // realpath when the run started
  std::uint64_t workspace_dev = 0;
  std::uint64_t workspace_ino = 0;
  std::int64_t started_s = 0;   // Unix seconds
  std::vector<std::string> argv;
};

struct RunEnd {
  std::int64_t ended_s = 0;
  int exit_status = 0;
  std::string changes_sha256;  // of changes.jsonl as the run left it
  std::uint64_t changes = 0;   // its line count
  NameStates names;            // each name the changes mention, at the end
  // Saves left undone because the journal was at its bound (limits.journalBytes).
  std::uint64_t refused_at_bound = 0;
};

std::string MetaJson(const RunMeta& m);
std::optional<RunMeta> ParseMeta(std::string_view text, std::string* error);

std::string EndJson(const RunEnd& e);
std::optional<RunEnd> ParseEnd(std::string_view text, std::string* error);

// A run id as cordon makes them ("20261206T071500Z-1234"): letters,
// digits, '-' only, 1..64 bytes. Anything else never names a directory.
bool ValidRunId(std::string_view id);

// When the run `id` began, from its name ("YYYYMMDDTHHMMSSZ-PID", UTC, as
// supervisor::NewRunId makes it), in seconds since the epoch; none for a
// name of another shape. Lets a sweep skip the runs too young to matter
// without reading each one's meta.json.
std::optional<int64_t> RunIdStartedS(std::string_view id);

}  // namespace cordon::policy
