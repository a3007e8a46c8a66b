#include "policy/run_retention.h"

#include <algorithm>

#include "policy/digest.h"
#include "policy/journal_run.h"

namespace cordon::policy {
namespace {

constexpr std::string_view kIndexHeader = "cordon run index 1 ";

std::string Header(std::string_view workspace) {
  return std::string(kIndexHeader) + Sha256Hex(workspace) + "\n";
}

// Each whole line of `body` that names a run with a time.
std::vector<RunFact> RunsOf(std::string_view body) {
  std::vector<RunFact> out;
  out.reserve(body.size() / 23);
  while (!body.empty()) {
    const size_t nl = body.find('\n');
    if (nl == std::string_view::npos) break;  // torn: written while cordon was killed
    if (std::optional<RunFact> f = FactOfId(body.substr(0, nl))) out.push_back(*f);
    body.remove_prefix(nl + 1);
  }
  return out;
}

}  // namespace

RetentionBound BoundOf(const RunRetention& r) {
  RetentionBound b;
  if (r.keep_days > 0) b.max_age_s = static_cast<int64_t>(r.keep_days) * 86400;
  if (r.keep_runs > 0) b.max_runs = r.keep_runs;
  return b;
}

std::vector<RunToRemove> ChooseRunsToRemove(std::vector<RunFact> runs, const RetentionBound& b,
                                            int64_t now_s, std::string_view current,
                                            std::size_t at_most) {
  std::sort(runs.begin(), runs.end(), [](const RunFact& a, const RunFact& b) {
    return a.started_s != b.started_s ? a.started_s < b.started_s : a.id < b.id;
  });
  runs.erase(std::unique(runs.begin(), runs.end(),
                         [](const RunFact& a, const RunFact& b) { return a.id == b.id; }),
             runs.end());
  // The current run is one of the newest max_runs whenever it began (a
  // run that ran long ends after newer ones): the others keep one place
  // fewer, and runs [0, count_cut) of them are past the count.
  const bool has_current = std::erase_if(runs, [&](const RunFact& r) { return r.id == current; });
  std::size_t count_cut = 0;
  if (b.max_runs) {
    const std::size_t places = *b.max_runs - (has_current && *b.max_runs > 0 ? 1 : 0);
    count_cut = runs.size() > places ? runs.size() - places : 0;
  }
  std::vector<RunToRemove> out;
  for (std::size_t i = 0; i < runs.size() && out.size() < at_most; ++i) {
    const RunFact& r = runs[i];
    const bool past_age = b.max_age_s && r.started_s <= now_s - *b.max_age_s;
    const bool past_count = i < count_cut;
    if (!past_age && !past_count) break;  // oldest first: every later run is kept too
    out.push_back({std::string(r.id), past_age, past_count});
  }
  return out;
}

std::optional<RunFact> FactOfId(std::string_view id) {
  if (!ValidRunId(id)) return std::nullopt;
  std::optional<int64_t> started = RunIdStartedS(id);
  if (!started) return std::nullopt;
  return RunFact{id, *started};
}

std::string RunIndexKey(std::string_view workspace) { return Sha256Hex(workspace).substr(0, 32); }

std::string RunIndexText(std::string_view workspace, const std::vector<RunFact>& runs) {
  std::string out = Header(workspace);
  out.reserve(out.size() + runs.size() * 23);
  for (const RunFact& r : runs) {
    out += r.id;
    out += '\n';
  }
  return out;
}

std::optional<std::vector<RunFact>> ParseRunIndex(std::string_view text,
                                                  std::string_view workspace) {
  const std::string header = Header(workspace);
  if (!text.starts_with(header)) return std::nullopt;
  return RunsOf(text.substr(header.size()));
}

std::vector<RunFact> RunIndexRuns(std::string_view text) {
  if (!text.starts_with(kIndexHeader)) return {};
  const size_t nl = text.find('\n');
  return nl == std::string_view::npos ? std::vector<RunFact>{} : RunsOf(text.substr(nl + 1));
}

}  // namespace cordon::policy
