// libFuzzer target for the launch scan's cache (policy/scan_cache.h): any
// bytes as a cache file. Beyond "no crash": whatever parses names only
// relative directories and plain names (no "..", no '/', no empty name),
// so a forged cache cannot point the scan outside the workspace, and its
// text written again parses to the same record.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "policy/scan_cache.h"

namespace {

bool PlainName(const std::string& n) {
  return !n.empty() && n != "." && n != ".." && n.find('/') == std::string::npos;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace cordon::policy;
  const std::string text(reinterpret_cast<const char*>(data), size);
  auto c = ParseScanCache(text, nullptr);
  if (!c) return 0;
  if (c->workspace.empty() || c->workspace[0] != '/') std::abort();
  for (const CachedDir& d : c->dirs) {
    if (!d.rel.empty() && (d.rel[0] == '/' || d.rel.back() == '/' ||
                           d.rel.find("//") != std::string::npos ||
                           ("/" + d.rel + "/").find("/../") != std::string::npos)) {
      std::abort();
    }
    for (const std::string& s : d.subdirs) {
      if (!PlainName(s)) std::abort();
    }
    for (const CachedFlag& f : d.flagged) {
      if (!PlainName(f.name) || f.nlink == 0) std::abort();
    }
    for (const CachedMatch& m : d.matches) {
      if (!PlainName(m.name)) std::abort();
    }
  }
  auto again = ParseScanCache(ScanCacheText(*c), nullptr);
  if (!again || again->workspace != c->workspace || again->globs != c->globs ||
      again->dirs != c->dirs) {
    std::abort();
  }
  return 0;
}
