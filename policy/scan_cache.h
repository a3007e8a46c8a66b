// The launch scan's cache (issue 27 item 8): what one scan of a workspace
// learnt, kept between runs so the next scan lists only the directories
// that changed. Pure: the record and its bytes; the supervisor reads and
// writes the file (supervisor/walk/scan_cache_file.h) and walks
// (supervisor/walk/launch_scan.h).
//
// Per directory: its identity and times (dev, ino, mtime, ctime), how many
// entries it held, the entries it flagged (special files, regular files
// with more than one name: name, kind, inode, link count) and the deny
// globs' matches in it. A directory whose stat still matches is not listed
// again: a name added, removed or renamed in it changes its mtime and
// ctime. Its flagged entries are stat'ed again (a link count may have
// dropped). What the cache cannot see: a file already in the workspace that
// gains a name outside it (that changes the file's ctime, not its
// directory's): docs/policy.md.
//
// The directories are one flat array in the order of a depth-first walk
// (preorder): the root first, each directory before its subdirectories,
// each subtree a run of records. A record names its parent and where its
// subtree ends, so the next scan walks the array by index (the children of
// record i are i+1, then each one's end in turn, up to i's end) and looks
// nothing up by name but in a directory that changed. Names, flags and
// matches are index ranges into flat arrays beside it.
//
// The file is those arrays as they lie in memory, after a fixed header:
//
//   "cordon-scan-cache 2\n"
//   six u64: workspace length, glob count, directory, flag and match
//            counts, the names' length
//   the workspace, then each glob as a u64 length and its bytes
//   the directories, the flags, the matches (the structs below, native
//   byte order: a cache never leaves the machine), then the names
//
// and nothing after. Anything else (another version, a cut file, a record
// out of range, a tree that is not one, a name with '/' or "..") does not
// parse, and a cache that does not parse is no cache: the scan walks the
// whole tree. An edit that keeps every rule is not caught here: the file's
// directory is this user's alone and denied to the tool.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "policy/hard_links.h"

namespace cordon::policy {

struct StatTimes {
  std::int64_t mtime_s = 0, mtime_ns = 0, ctime_s = 0, ctime_ns = 0;
  bool operator==(const StatTimes&) const = default;
};

// A name in ScanCache::names.
struct CachedName {
  std::uint32_t off = 0, len = 0;
  bool operator==(const CachedName&) const = default;
};

// A run of records in ScanCache::flags or ::matches.
struct CachedRange {
  std::uint32_t off = 0, len = 0;
  bool operator==(const CachedRange&) const = default;
};

struct CachedDir {
  std::uint32_t parent = 0;  // the parent's index; the root's is 0
  std::uint32_t end = 1;     // one past the last record of its subtree
  CachedName name;           // the root's is empty
  CachedRange flags, matches;
  std::uint64_t dev = 0, ino = 0;
  StatTimes times;
  std::uint64_t entries = 0;  // entries the listing held (the scan's bound counts them)
  // 1: changed in the second before its scan (SettledBefore), so listed
  // again next time; its subdirectories' records still serve.
  std::uint32_t unsettled = 0;
  std::uint32_t pad = 0;
  bool operator==(const CachedDir&) const = default;
};

struct CachedFlag {
  CachedName name;
  std::uint32_t kind = 0;  // a ScannedKind
  std::uint32_t pad = 0;
  std::uint64_t ino = 0, nlink = 1;
  bool operator==(const CachedFlag&) const = default;
};

struct CachedMatch {
  CachedName name;
  std::uint32_t link = 0;  // 1: a symlink, what it names in the workspace is denied too
  std::uint32_t pad = 0;
  bool operator==(const CachedMatch&) const = default;
};

static_assert(std::is_trivially_copyable_v<CachedDir> && sizeof(CachedDir) == 96);
static_assert(std::is_trivially_copyable_v<CachedFlag> && sizeof(CachedFlag) == 32);
static_assert(std::is_trivially_copyable_v<CachedMatch> && sizeof(CachedMatch) == 16);

struct ScanCache {
  std::string workspace;           // absolute realpath
  std::vector<std::string> globs;  // the deny globs the matches were found for
  std::vector<CachedDir> dirs;     // preorder; dirs[0] is the workspace's root
  std::vector<CachedFlag> flags;
  std::vector<CachedMatch> matches;
  std::string names;

  std::string_view Name(CachedName n) const { return std::string_view(names).substr(n.off, n.len); }
  CachedName AddName(std::string_view name) {
    const CachedName n{static_cast<std::uint32_t>(names.size()),
                       static_cast<std::uint32_t>(name.size())};
    names += name;
    return n;
  }
};

// The file's bytes.
std::string ScanCacheBytes(const ScanCache& c);

// The cache the bytes hold, or nullopt (`*why` says what is wrong).
std::optional<ScanCache> ParseScanCache(std::string_view bytes, std::string* why);

// Whether a directory with these times, stat'ed during a scan that began at
// `scan_start_s` (seconds), may be kept: one changed in the last second
// before the scan may change again within the same timestamp tick without
// its times moving (git's "racily clean" entries), so it is listed again
// next time.
bool SettledBefore(const StatTimes& t, std::int64_t scan_start_s);

// `state_home` (absolute) + the cache file of `workspace` (its canonical
// path): STATE/cordon/scans/<SHA-256 of the path>.
std::string ScanCacheDir(const std::string& state_home);
std::string ScanCacheName(const std::string& workspace);

}  // namespace cordon::policy
