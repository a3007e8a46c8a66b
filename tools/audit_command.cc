#include "tools/audit_command.h"

#include <cstdio>

#include "supervisor/audit/audit_log.h"

namespace cordon::tools {

void RegisterAudit(CLI::App& app, int& exit_code) {
  CLI::App* audit = app.add_subcommand("audit", "inspect an audit log");
  audit->require_subcommand(1);
  auto* file = new std::string;  // lives as long as the process
  CLI::App* verify = audit->add_subcommand("verify", "check the log's hash chain");
  verify->add_option("FILE", *file, "the audit log (JSON lines)")->required();
  verify->callback([file, &exit_code] {
    auto report = supervisor::VerifyAuditLog(*file);
    if (!report) {
      std::fprintf(stderr, "cordon: audit verify: %s\n", Describe(report.error()).c_str());
      exit_code = 125;
      return;
    }
    if (report->intact) {
      std::printf("%s: intact, %zu records\n", file->c_str(), report->records);
      exit_code = 0;
      return;
    }
    std::printf("%s: BROKEN at record %zu (line %zu): %s\n", file->c_str(), report->broken_line,
                report->broken_line, report->why.c_str());
    exit_code = 1;
  });
}

}  // namespace cordon::tools
