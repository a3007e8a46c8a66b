// Run retention of `cordon run` (policy/run_retention.h): the workspace's
// older runs are removed as the policy bounds them, on a thread of the
// supervisor while the tool runs (RetentionPass): never before the tool
// has exec'd (a launch's time is measured), and never the run going on, a
// run still going, a log the user named with --audit FILE, or anything
// outside cordon's state directories. A removal that fails is one warning
// line, said after the tool's output; the exit status stays the tool's.
//
//   run records and their default logs   runs.keepDays, runs.keepRuns
//                                        (the settings file's, also
//                                        under --policy FILE)
//   a recoverable run's journal          limits.journalDays, and
//                                        runs.keepRuns (past it, it goes
//                                        with its record)
//
// `cordon runs prune` takes the same decision (policy::ChooseRunsToRemove).
#pragma once

#include <spdlog/spdlog.h>

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "policy/policy.h"
#include "supervisor/journal/journal.h"
#include "tools/run_services.h"

namespace cordon::tools {

// Runs one end's pass removes at most, of each kind: a backlog (runs made
// before retention, a lowered bound) goes over the next runs, each paying
// a bounded cost.
inline constexpr std::size_t kMaxRemovedPerRun = 16;

// What a pass says, kept to be said after the tool's own output.
struct RetentionLines {
  std::vector<std::pair<spdlog::level::level_enum, std::string>> lines;
  template <typename... Args>
  void Say(spdlog::level::level_enum level, spdlog::format_string_t<Args...> format,
           Args&&... args) {
    if (spdlog::should_log(level)) {
      lines.emplace_back(level, fmt::format(format, std::forward<Args>(args)...));
    }
  }
};

// The pass of one run, in the tool's shadow: Start (once the tool has
// exec'd: Launch's on_started) runs it on a thread of its own while the
// tool runs, Finish joins it, or runs it then if it never started (a
// launch that failed), and says its lines, after the tool's output. What
// it removes is older runs' (never this run's, nor a run still going), so
// it needs nothing of this run's end. Everything it reads outlives it.
class RetentionPass {
 public:
  RetentionPass(const policy::Policy& p, std::string policy_file, const RunServices& s,
                std::shared_ptr<supervisor::Journal> journal)
      : p_(p), policy_file_(std::move(policy_file)), services_(s), journal_(std::move(journal)) {}
  RetentionPass(const RetentionPass&) = delete;
  RetentionPass& operator=(const RetentionPass&) = delete;
  ~RetentionPass();

  void Start();
  void Finish();

 private:
  const policy::Policy& p_;
  const std::string policy_file_;
  const RunServices& services_;
  const std::shared_ptr<supervisor::Journal> journal_;
  RetentionLines lines_;
  std::thread thread_;
  bool started_ = false, finished_ = false;
};

}  // namespace cordon::tools
