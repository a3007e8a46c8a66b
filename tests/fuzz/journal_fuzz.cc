// libFuzzer target for a recoverable run's record (issue 26): any bytes as
// a change line, meta.json and end.json. Beyond "no crash": whatever parses
// names only workspace-relative paths (no "..", not absolute), so a journal
// edited by hand can never point undo outside the workspace, and a parsed
// change written out again parses to the same change. The planner runs on
// what parsed, against an empty workspace.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "policy/journal_change.h"
#include "policy/journal_run.h"
#include "policy/undo_plan.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace cordon::policy;
  std::string text(reinterpret_cast<const char*>(data), size);
  if (auto c = ParseChangeLine(text, nullptr)) {
    if (!ValidRecordPath(c->path)) std::abort();
    if ((c->op == ChangeOp::kMove || c->op == ChangeOp::kSwap) && !ValidRecordPath(c->to)) std::abort();
    auto again = ParseChangeLine(ChangeLine(*c), nullptr);
    if (!again || again->path != c->path || again->to != c->to || again->ino != c->ino) std::abort();
    UndoPlan p = PlanUndo({*c}, std::nullopt, {});
    for (const UndoStep& s : p.steps) {
      if (!ValidRecordPath(s.path)) std::abort();
    }
  }
  if (auto e = ParseEnd(text, nullptr)) {
    for (const auto& [path, o] : e->names) {
      if (!ValidRecordPath(path)) std::abort();
    }
  }
  (void)ParseMeta(text, nullptr);
  return 0;
}
