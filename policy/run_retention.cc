#include "policy/run_retention.h"

#include <algorithm>
#include <unordered_set>

#include "policy/digest.h"
#include "policy/journal_run.h"

namespace cordon::policy {
namespace {

constexpr std::string_view kIndexHeader = "cordon run index 1 ";

std::string Header(std::string_view workspace) {
  return std::string(kIndexHeader) + Sha256Hex(workspace) + "\n";
}

// Each whole line of `body` that names a run with a time, once.
std::vector<std::string> IdsOf(std::string_view body) {
  std::vector<std::string> out;
  std::unordered_set<std::string_view> seen;
  while (!body.empty()) {
    const size_t nl = body.find('\n');
    if (nl == std::string_view::npos) break;  // torn: written while cordon was killed
    const std::string_view id = body.substr(0, nl);
    body.remove_prefix(nl + 1);
    if (!ValidRunId(id) || !RunIdStartedS(id) || !seen.insert(id).second) continue;
    out.emplace_back(id);
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
  std::unordered_set<std::string> seen;
  std::erase_if(runs, [&](const RunFact& r) { return !seen.insert(r.id).second; });
  std::sort(runs.begin(), runs.end(), [](const RunFact& a, const RunFact& b) {
    return a.started_s != b.started_s ? a.started_s < b.started_s : a.id < b.id;
  });
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
    out.push_back({r.id, past_age, past_count});
  }
  return out;
}

std::vector<RunFact> FactsFromIds(const std::vector<std::string>& ids) {
  std::vector<RunFact> out;
  out.reserve(ids.size());
  for (const std::string& id : ids) {
    if (std::optional<int64_t> t = RunIdStartedS(id)) out.push_back({id, *t});
  }
  return out;
}

std::string RunIndexKey(std::string_view workspace) { return Sha256Hex(workspace).substr(0, 32); }

std::string RunIndexText(std::string_view workspace, const std::vector<std::string>& ids) {
  std::string out = Header(workspace);
  out.reserve(out.size() + ids.size() * 24);
  for (const std::string& id : ids) out += id + "\n";
  return out;
}

std::optional<std::vector<std::string>> ParseRunIndex(std::string_view text,
                                                      std::string_view workspace) {
  const std::string header = Header(workspace);
  if (!text.starts_with(header)) return std::nullopt;
  return IdsOf(text.substr(header.size()));
}

std::vector<std::string> RunIndexIds(std::string_view text) {
  if (!text.starts_with(kIndexHeader)) return {};
  const size_t nl = text.find('\n');
  return nl == std::string_view::npos ? std::vector<std::string>{} : IdsOf(text.substr(nl + 1));
}

}  // namespace cordon::policy
