#include "tools/audit_command.h"

#include <cstdio>

#include "supervisor/audit/audit_log.h"
#include "supervisor/audit/run_records.h"
#include "supervisor/load/normalise.h"

namespace cordon::tools {
namespace {

// The log as the run records name it (a realpath), or as given.
std::string LogPath(const std::string& path) {
  std::string real = supervisor::RealPathOrEmpty(path);
  return real.empty() ? path : real;
}

// The chain first (an edit anywhere), then every run record that names
// this log (records cut from its end, or the log written again whole).
int Verify(const std::string& file) {
  auto bytes = supervisor::ReadAuditLog(file);
  if (!bytes) {
    std::fprintf(stderr, "cordon: audit verify: %s\n", Describe(bytes.error()).c_str());
    return 125;
  }
  const policy::VerifyReport report = policy::VerifyAuditBytes(bytes.value());
  if (!report.intact) {
    std::printf("%s: BROKEN at record %zu (line %zu): %s\n", file.c_str(), report.broken_line,
                report.broken_line, report.why.c_str());
    return 1;
  }
  const std::string real = LogPath(file);
  size_t anchored = 0, unfinished = 0;
  bool broken = false;
  for (const supervisor::ListedRun& run : supervisor::ListRunRecords()) {
    if (!run.record || run.record->audit_path.empty()) continue;
    if (LogPath(run.record->audit_path) != real) continue;
    if (!run.record->anchor) {
      ++unfinished;
      continue;
    }
    if (std::string why = policy::CheckAnchor(bytes.value(), *run.record->anchor); !why.empty()) {
      std::printf("%s: BROKEN: run %s: %s\n", file.c_str(), run.id.c_str(), why.c_str());
      broken = true;
      continue;
    }
    ++anchored;
  }
  if (broken) return 1;
  std::printf("%s: intact, %zu records", file.c_str(), report.records);
  if (anchored > 0) {
    std::printf("; anchored by %zu run record(s) in %s\n", anchored, supervisor::RunsRoot().c_str());
  } else {
    std::printf(" (no run record anchors it: records cut from its end would not show)\n");
  }
  if (unfinished > 0) {
    std::printf("  %zu run(s) writing to it did not end: their records are not anchored\n",
                unfinished);
  }
  return 0;
}

}  // namespace

void RegisterAudit(CLI::App& app, int& exit_code) {
  CLI::App* audit = app.add_subcommand("audit", "inspect an audit log");
  audit->require_subcommand(1);
  auto* file = new std::string;  // lives as long as the process
  CLI::App* verify = audit->add_subcommand(
      "verify", "check the log's hash chain, and against the run records, its length");
  verify->add_option("FILE", *file, "the audit log (JSON lines)")->required();
  verify->callback([file, &exit_code] { exit_code = Verify(*file); });
}

}  // namespace cordon::tools
