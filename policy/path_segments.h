// Path segments. A workspace-relative path or pattern split at '/', as views into it:
// "a/b/c" gives {"a", "b", "c"}; an empty segment ("a//b") is kept, so the
// callers that check patterns see it. Pure.
#pragma once

#include <string_view>
#include <vector>

namespace cordon::policy {

inline std::vector<std::string_view> SplitSegments(std::string_view p) {
  std::vector<std::string_view> out;
  while (!p.empty()) {
    auto slash = p.find('/');
    out.push_back(p.substr(0, slash));
    if (slash == std::string_view::npos) break;
    p.remove_prefix(slash + 1);
  }
  return out;
}

// The directory an absolute, normalised path lies in: "/a/b" gives "/a",
// "/a" gives "/".
inline std::string_view ParentOf(std::string_view abs) {
  const auto slash = abs.rfind('/');
  return slash == 0 || slash == std::string_view::npos ? std::string_view("/")
                                                       : abs.substr(0, slash);
}

}  // namespace cordon::policy
