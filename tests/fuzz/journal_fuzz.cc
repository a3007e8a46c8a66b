// libFuzzer target for a recoverable run's record (issue 26): any bytes as
// a change line, meta.json and end.json. Beyond "no crash": whatever parses
// names only workspace-relative paths (no "..", not absolute), so a journal
// edited by hand can never point undo outside the workspace, and a parsed
// change written out again parses to the same change. The planner runs on
// what parsed, against an empty workspace. The same bytes as a run's
// record (run.json) and as an audit log read by `cordon runs show`.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "policy/journal_change.h"
#include "policy/journal_run.h"
#include "policy/run_record.h"
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
  // A run's record and its log (issue 27 item 5): an anchor parses only
  // ordered, a record round-trips, and reading a log's records never throws.
  if (auto r = ParseRunRecord(text, nullptr)) {
    if (r->anchor && (r->anchor->first_seq == 0 || r->anchor->last_seq < r->anchor->first_seq)) {
      std::abort();
    }
    if (!r->audit_path.empty() && r->audit_path[0] != '/') std::abort();
    auto again = ParseRunRecord(RunRecordJson(*r), nullptr);
    if (!again || again->anchor != r->anchor || again->audit_path != r->audit_path) std::abort();
  }
  (void)RunRecordsIn(text, "A");
  (void)CheckAnchor(text, AuditAnchor{1, 3, std::string(64, 'a'), std::string(64, 'b')});
  return 0;
}
