// libFuzzer target for the launch scan's cache (policy/scan_cache.h): any
// bytes as a cache file. Beyond "no crash": whatever parses names only
// plain names (no "..", no '/', no empty name but the root's) in one tree
// whose subtrees the walk can step through by index, so a forged cache
// cannot point the scan outside the workspace or send it round in a loop;
// and its bytes written again are the bytes read.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "policy/scan_cache.h"

namespace {

bool PlainName(std::string_view n) {
  return !n.empty() && n != "." && n != ".." && n.find('/') == std::string_view::npos;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace cordon::policy;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto c = ParseScanCache(bytes, nullptr);
  if (!c) return 0;
  if (c->workspace.empty() || c->workspace[0] != '/' || c->dirs.empty()) std::abort();
  if (c->dirs[0].end != c->dirs.size() || !c->Name(c->dirs[0].name).empty()) std::abort();
  for (std::size_t i = 0; i < c->dirs.size(); ++i) {
    const CachedDir& d = c->dirs[i];
    if (i > 0 && !PlainName(c->Name(d.name))) std::abort();
    // The walk's step through the children: each a child of i, strictly on.
    for (std::size_t j = i + 1; j < d.end; j = c->dirs[j].end) {
      if (c->dirs[j].parent != i || c->dirs[j].end <= j || c->dirs[j].end > d.end) std::abort();
    }
    if (std::uint64_t{d.flags.off} + d.flags.len > c->flags.size()) std::abort();
    if (std::uint64_t{d.matches.off} + d.matches.len > c->matches.size()) std::abort();
  }
  for (const CachedFlag& f : c->flags) {
    if (!PlainName(c->Name(f.name)) || f.nlink == 0) std::abort();
  }
  for (const CachedMatch& m : c->matches) {
    if (!PlainName(c->Name(m.name))) std::abort();
  }
  if (ScanCacheBytes(*c) != bytes) std::abort();
  return 0;
}
