// The `cordon` command line. Each subcommand lives in its own *_command.cc
// and registers itself here; exit status 125 for cordon's own errors.
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <fcntl.h>
#include <malloc.h>
#include <sys/resource.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <string_view>

#include "tools/audit_command.h"
#include "tools/doctor_command.h"
#include "tools/fetch_command.h"
#include "tools/grep_command.h"
#include "tools/policyd_command.h"
#include "tools/policy_command.h"
#include "tools/run_command.h"
#include "tools/runs_command.h"
#include "tools/sandbox_command.h"
#include "tools/workspace_command.h"

namespace {

constexpr int kUsageError = 125;

struct Verb {
  std::string_view name, alias;
  void (*add)(CLI::App&, int&);
};

constexpr Verb kVerbs[] = {
    {"run", {}, cordon::tools::RegisterRun},
    {"doctor", {}, cordon::tools::RegisterDoctor},
    {"policy", {}, cordon::tools::RegisterPolicy},
    {"grep", "glob", cordon::tools::RegisterGrep},  // one registration, two verbs
    {"fetch", {}, cordon::tools::RegisterFetch},
    {"workspace", {}, cordon::tools::RegisterWorkspace},
    {"audit", {}, cordon::tools::RegisterAudit},
    {"policyd", {}, cordon::tools::RegisterPolicyd},
    {"approve", {}, cordon::tools::RegisterApprove},
    {"undo", {}, cordon::tools::RegisterUndo},
    {"runs", {}, cordon::tools::RegisterRuns},
    {"sandbox", {}, cordon::tools::RegisterSandbox},
};

// The verb the command line names: the first word that is neither an
// option of cordon itself nor the value of --log-level.
std::string_view NamedVerb(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    std::string_view a = argv[i];
    if (a == "--log-level") {
      ++i;
      continue;
    }
    if (!a.starts_with("-")) return a;
  }
  return {};
}

// Every verb's options cost allocations at start, and a launch is meant to
// be cheap (README, "Speed"): only the verb named is registered. Without a
// known one (help, a typo) all are, so CLI11 lists them or says what is wrong.
void RegisterVerbs(CLI::App& app, int& exit_code, std::string_view named) {
  for (const Verb& v : kVerbs) {
    if (!named.empty() && (named == v.name || named == v.alias)) {
      v.add(app, exit_code);
      return;
    }
  }
  for (const Verb& v : kVerbs) v.add(app, exit_code);
}

void SetUpLogging(const std::string& level) {
  // _mt: the supervisor's notify and deferred threads log too.
  auto logger = spdlog::stderr_logger_mt("cordon");
  logger->set_pattern("cordon: %v");
  logger->set_level(spdlog::level::from_str(level));
  spdlog::set_default_logger(logger);
}

}  // namespace

namespace {

// The kernel grows a process's descriptor table by doubling (64, 128, 256
// slots), and once the process has threads each growth waits for an RCU
// grace period (fs/file.c, expand_fdtable: synchronize_rcu), measured at
// 13-17 ms each here. A launch holds an O_PATH descriptor per Landlock
// rule (/etc alone is ~150: landlock.cc) after its scan walkers and the
// notify loop's threads exist, so a cordon started with a small table
// (by a program that closes its descriptors before exec, as Python's
// subprocess does) paid two grace periods, 30 ms, per launch. Grown here,
// while the process is single-threaded, it costs one allocation.
void ReserveDescriptorTable() {
  int top = 1023;
  rlimit rl{};
  if (::getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
      rl.rlim_cur <= static_cast<rlim_t>(top)) {
    top = static_cast<int>(rl.rlim_cur) - 1;
  }
  const int any = ::open("/", O_PATH | O_CLOEXEC);
  if (any < 0) return;
  if (top > any) {
    const int high = ::fcntl(any, F_DUPFD_CLOEXEC, top);
    if (high >= 0) ::close(high);
  }
  ::close(any);
}

}  // namespace

int main(int argc, char** argv) {
  ReserveDescriptorTable();
  // One malloc arena for every thread: the supervisor's threads (the notify
  // receiver, approvals) allocate little and rarely at once, and a new
  // thread's own arena costs its first allocation ~0.3 ms of page faults at
  // every launch (README, "Speed").
  ::mallopt(M_ARENA_MAX, 1);
  CLI::App app{"cordon: confine a tool process to its workspace", "cordon"};
  app.require_subcommand(1);
  app.set_version_flag("--version", CORDON_VERSION);
  // Bad usage is one line (cordon's errors are), not CLI11's two.
  app.failure_message([](const CLI::App*, const CLI::Error& e) {
    return std::string("cordon: ") + e.what() + " (cordon --help)\n";
  });
  std::string level = "warn";
  app.add_option("--log-level", level, "trace, debug, info, warn (default), error, off")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "off"}))
      ->configurable(false);
  // Subcommands see --log-level too, so it may come after the verb.
  app.fallthrough();
  app.parse_complete_callback([&level] { SetUpLogging(level); });

  int exit_code = 0;
  RegisterVerbs(app, exit_code, NamedVerb(argc, argv));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);
    app.exit(e);
    return kUsageError;
  }
  return exit_code;
}
