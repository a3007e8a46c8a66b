// Says each distinct refusal once, on cordon's stderr, with the grant that
// would allow it: at the default log level, so that a refused write is not
// only the tool's own "Permission denied" (issue 24 item 6).
//
// Distinct by what was refused (the call's verb and path and the rule); the
// first kDefaultLines are printed at warn level, then one line says how
// many more there were. At info level and below every distinct refusal is
// printed. Thread-safe: the notify loop's threads and the report reader
// both call it.
#pragma once

#include <cstddef>
#include <mutex>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

namespace cordon::supervisor {

class RefusalLog {
 public:
  static constexpr std::size_t kDefaultLines = 10;

  // `what`: what was refused and by which rule; `hint`: the grant that
  // would allow it (policy::RefusalHint), or empty.
  void Refused(const std::string& what, const std::string& hint);

  // A refusal an honest tool often meets without harm (a resolver asking a
  // name server under network none, for a name /etc/hosts answers; a
  // runtime's probe, policy::IsRuntimeProbe): at the default level said at
  // the run's end, and only when the tool failed.
  void RefusedIfFailed(const std::string& what, const std::string& hint);

  // At the run's end: the refusals held for a failure when `tool_failed`,
  // and how many distinct refusals were not printed.
  void Finish(bool tool_failed);

 private:
  void Print(const std::string& what, const std::string& hint);  // mu_ held

  std::mutex mu_;
  std::unordered_set<std::string> seen_;
  std::vector<std::pair<std::string, std::string>> if_failed_;
  std::size_t printed_ = 0;
  std::size_t held_back_ = 0;
};

}  // namespace cordon::supervisor
