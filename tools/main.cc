// The `cordon` command line. Each subcommand lives in its own *_command.cc
// and registers itself here; exit status 125 for cordon's own errors.
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>

#include "tools/audit_command.h"
#include "tools/doctor_command.h"
#include "tools/grep_command.h"
#include "tools/policyd_command.h"
#include "tools/policy_command.h"
#include "tools/run_command.h"
#include "tools/workspace_command.h"

namespace {

constexpr int kUsageError = 125;

void SetUpLogging(const std::string& level) {
  auto logger = spdlog::stderr_logger_st("cordon");
  logger->set_pattern("cordon: %v");
  logger->set_level(spdlog::level::from_str(level));
  spdlog::set_default_logger(logger);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"cordon: confine a tool process to its workspace", "cordon"};
  app.require_subcommand(1);
  app.set_version_flag("--version", CORDON_VERSION);
  std::string level = "warn";
  app.add_option("--log-level", level, "trace, debug, info, warn (default), error, off")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "off"}))
      ->configurable(false);
  // Subcommands see --log-level too, so it may come after the verb.
  app.fallthrough();
  app.parse_complete_callback([&level] { SetUpLogging(level); });

  int exit_code = 0;
  cordon::tools::RegisterRun(app, exit_code);
  cordon::tools::RegisterDoctor(app, exit_code);
  cordon::tools::RegisterPolicy(app, exit_code);
  cordon::tools::RegisterGrep(app, exit_code);
  cordon::tools::RegisterWorkspace(app, exit_code);
  cordon::tools::RegisterAudit(app, exit_code);
  cordon::tools::RegisterPolicyd(app, exit_code);
  cordon::tools::RegisterApprove(app, exit_code);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);
    app.exit(e);
    return kUsageError;
  }
  return exit_code;
}
