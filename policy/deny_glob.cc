#include "policy/deny_glob.h"

#include <fnmatch.h>

#include <algorithm>

#include "policy/path_segments.h"

namespace cordon::policy {
namespace {

constexpr std::string_view kAnyDepth = "**";

// The pattern's segments as matched: "**" in front of a pattern that names
// one segment only.
std::vector<std::string_view> Segments(std::string_view pattern) {
  std::vector<std::string_view> segs = SplitSegments(pattern);
  if (segs.size() == 1) segs.insert(segs.begin(), kAnyDepth);
  return segs;
}

bool SegmentMatches(std::string_view pat, std::string_view name) {
  // fnmatch needs NUL-terminated strings; segments are short.
  std::string p(pat), n(name);
  return ::fnmatch(p.c_str(), n.c_str(), 0) == 0;
}

// Whether `pat` matches a leading part of `rel` (one or more segments): a
// match denies what lies beneath it. Dynamic programming over (pattern
// segment, path segment), so "**" costs no backtracking.
bool MatchesLeading(const std::vector<std::string_view>& pat,
                    const std::vector<std::string_view>& rel) {
  const std::size_t np = pat.size(), nr = rel.size();
  // at[i][j]: pat[0..i) matched rel[0..j).
  std::vector<std::vector<char>> at(np + 1, std::vector<char>(nr + 1, 0));
  at[0][0] = 1;
  for (std::size_t i = 1; i <= np; ++i) {
    const bool any = pat[i - 1] == kAnyDepth;
    for (std::size_t j = 0; j <= nr; ++j) {
      if (any) {
        at[i][j] = at[i - 1][j] || (j > 0 && at[i][j - 1]);
      } else {
        at[i][j] = j > 0 && at[i - 1][j - 1] && SegmentMatches(pat[i - 1], rel[j - 1]);
      }
    }
  }
  for (std::size_t j = 1; j <= nr; ++j) {
    if (at[np][j]) return true;
  }
  return false;
}

}  // namespace

bool IsGlobPattern(std::string_view s) { return s.find_first_of("*?[") != std::string_view::npos; }

std::string CheckDenyGlob(std::string_view pattern) {
  if (pattern.empty()) return "empty pattern";
  if (pattern.find('\0') != std::string_view::npos) return "contains a NUL byte";
  if (pattern.front() == '/') {
    return "must be relative to the workspace (a '/' inside anchors it at the workspace root)";
  }
  std::string_view rest = pattern;
  if (rest.back() == '/') return "trailing '/' (a match denies a directory's contents anyway)";
  bool named = false;
  for (std::string_view seg : SplitSegments(rest)) {
    if (seg.empty()) return "empty segment (a duplicate '/')";
    if (seg == "." || seg == "..") return "'.' and '..' segments are not allowed";
    if (seg != kAnyDepth) named = true;
  }
  if (!named) return "matches the whole workspace";
  return {};
}

bool MatchesDenyGlob(const std::vector<std::string>& globs, std::string_view rel_path) {
  if (rel_path.empty() || globs.empty()) return false;
  std::vector<std::string_view> rel = SplitSegments(rel_path);
  return std::any_of(globs.begin(), globs.end(),
                     [&](const std::string& g) { return MatchesLeading(Segments(g), rel); });
}

bool DenyGlobsFollowParents(const std::vector<std::string>& globs) {
  return std::any_of(globs.begin(), globs.end(), [](const std::string& g) {
    // "**" segments match any parents, or what lies beneath a match
    // anyway: with two named segments or more a match depends on a
    // directory's name.
    std::vector<std::string_view> segs = Segments(g);
    return std::count_if(segs.begin(), segs.end(),
                         [](std::string_view s) { return s != kAnyDepth; }) > 1;
  });
}

}  // namespace cordon::policy
