#include "supervisor/refusal_log.h"

#include <spdlog/spdlog.h>

namespace cordon::supervisor {

void RefusalLog::Refused(const std::string& what, const std::string& hint) {
  std::lock_guard<std::mutex> l(mu_);
  if (seen_.size() >= 4096 || !seen_.insert(what).second) return;
  Print(what, hint);
}

void RefusalLog::RefusedIfFailed(const std::string& what, const std::string& hint) {
  std::lock_guard<std::mutex> l(mu_);
  if (seen_.size() >= 4096 || !seen_.insert(what).second) return;
  if (spdlog::should_log(spdlog::level::info)) {
    Print(what, hint);
  } else {
    if_failed_.emplace_back(what, hint);
  }
}

void RefusalLog::Print(const std::string& what, const std::string& hint) {
  const bool all = spdlog::should_log(spdlog::level::info);
  if (!all && printed_ >= kDefaultLines) {
    ++held_back_;
    return;
  }
  ++printed_;
  if (hint.empty()) {
    spdlog::warn("refused {}", what);
  } else {
    spdlog::warn("refused {}; {}", what, hint);
  }
}

void RefusalLog::Finish(bool tool_failed) {
  std::lock_guard<std::mutex> l(mu_);
  if (tool_failed) {
    for (const auto& [what, hint] : if_failed_) Print(what, hint);
  }
  if_failed_.clear();
  if (held_back_ == 0) return;
  spdlog::warn("{} more refusals not shown; --log-level info lists each", held_back_);
  held_back_ = 0;
}

}  // namespace cordon::supervisor
