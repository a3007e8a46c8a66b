#include "policy/hard_links.h"

#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include "policy/policy.h"

namespace cordon::policy {
namespace {

using InodeKey = std::pair<std::uint64_t, std::uint64_t>;

InodeKey Key(const ScannedEntry& e) { return {e.dev, e.ino}; }

// How many names of each linked file the scan found.
std::map<InodeKey, std::uint64_t> NamesFound(const std::vector<ScannedEntry>& entries) {
  std::map<InodeKey, std::uint64_t> found;
  for (const ScannedEntry& e : entries) {
    if (e.kind == ScannedKind::kLinkedFile) ++found[Key(e)];
  }
  return found;
}

const char* KindName(ScannedKind k) {
  switch (k) {
    case ScannedKind::kCharDevice: return "special file: a character device";
    case ScannedKind::kBlockDevice: return "special file: a block device";
    case ScannedKind::kFifo: return "special file: a FIFO";
    case ScannedKind::kLinkedFile:
    case ScannedKind::kSocket: break;
  }
  return "hard link";
}

}  // namespace

const char* HardLinksName(HardLinks h) {
  return h == HardLinks::kRefuse ? "refuse" : "inside-workspace";
}

const char* RefusedEntry::Source() const {
  return names_inside ? kInsideLinkSource : kRefusedEntrySource;
}

std::vector<RefusedEntry> RefusedEntries(HardLinks mode, const std::vector<ScannedEntry>& entries) {
  const std::map<InodeKey, std::uint64_t> found = NamesFound(entries);
  std::vector<RefusedEntry> out;
  for (const ScannedEntry& e : entries) {
    // A socket is not opened by its name (open gives ENXIO): a connect to
    // it is the supervisor's, which checks the inode it reaches (README,
    // Unix sockets). Left out of the grant, it would only keep honest
    // listeners in the workspace (a dev server's socket) out of reach.
    if (e.kind == ScannedKind::kSocket) continue;
    if (e.kind != ScannedKind::kLinkedFile) {
      out.push_back({e.path, KindName(e.kind)});
      continue;
    }
    const std::uint64_t inside = found.at(Key(e));
    // Every name in the workspace: nothing outside reads it by another name.
    if (mode == HardLinks::kInsideWorkspace && inside >= e.nlink) continue;
    out.push_back({e.path,
                   "hard link: " + std::to_string(e.nlink) + " names, " + std::to_string(inside) +
                       " found in the workspace",
                   inside >= e.nlink});
  }
  std::sort(out.begin(), out.end(),
            [](const RefusedEntry& a, const RefusedEntry& b) { return a.path < b.path; });
  return out;
}

std::vector<std::string> OtherNamesOfMatches(const std::vector<std::string>& matches,
                                             const std::vector<ScannedEntry>& entries) {
  const std::set<std::string> matched(matches.begin(), matches.end());
  std::set<InodeKey> linked;
  for (const ScannedEntry& e : entries) {
    if (e.kind == ScannedKind::kLinkedFile && matched.count(e.path) > 0) linked.insert(Key(e));
  }
  std::vector<std::string> out;
  for (const ScannedEntry& e : entries) {
    if (e.kind == ScannedKind::kLinkedFile && matched.count(e.path) == 0 &&
        linked.count(Key(e)) > 0) {
      out.push_back(e.path);
    }
  }
  return out;
}

}  // namespace cordon::policy
