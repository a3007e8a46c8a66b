// The launch scan's cache (issue 27 item 8): what one scan of a workspace
// learnt, kept between runs so the next scan lists only the directories
// that changed. Pure: the record and its text form; the supervisor reads
// and writes the file (supervisor/walk/scan_cache_file.h) and walks
// (supervisor/walk/launch_scan.h).
//
// Per directory: its identity and times (dev, ino, mtime, ctime), how many
// entries it held, the names of the subdirectories the scan entered, and the
// entries it flagged (special files, regular files with more than one name:
// name, kind, inode, link count) and the deny globs' matches. A directory
// whose stat still matches is not listed again: a name added, removed or
// renamed in it changes its mtime and ctime. Its flagged entries are
// stat'ed again (a link count may have dropped). What the cache cannot see:
// a file already in the workspace that gains a name outside it (that
// changes the file's ctime, not its directory's): docs/policy.md.
//
// The text form, one record a line, strings length-prefixed (LEN:BYTES,
// any byte allowed), numbers decimal; the last line counts the directories
// so a cut file does not parse:
//
//   cordon-scan-cache 1
//   workspace LEN:PATH
//   glob LEN:PATTERN                      (each deny glob, in order)
//   dir DEV INO MTIME_S MTIME_NS CTIME_S CTIME_NS ENTRIES LEN:REL
//   sub LEN:NAME                          (the directory's subdirectories)
//   flag KIND INO NLINK LEN:NAME          (KIND: linked chr blk fifo sock)
//   match LINK LEN:NAME                   (LINK: 1 for a symlink, else 0)
//   end NDIRS
//
// REL is the directory's path below the workspace ("" for its root), with
// no empty, "." or ".." component; NAME has no '/' and is not "." or "..".
// Directories come in order of REL, a directory's sub, flag and match
// lines each in order of NAME, each once (ScanCacheText sorts them).
// Anything else (another version, a cut or edited file) does not parse, and
// a cache that does not parse is no cache: the scan walks the whole tree.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "policy/hard_links.h"

namespace cordon::policy {

struct CachedFlag {
  std::string name;
  ScannedKind kind = ScannedKind::kLinkedFile;
  std::uint64_t ino = 0, nlink = 1;
  bool operator==(const CachedFlag&) const = default;
};

struct CachedMatch {
  std::string name;
  bool link = false;  // a symlink: what it names in the workspace is denied too
  bool operator==(const CachedMatch&) const = default;
};

struct StatTimes {
  std::int64_t mtime_s = 0, mtime_ns = 0, ctime_s = 0, ctime_ns = 0;
  bool operator==(const StatTimes&) const = default;
};

struct CachedDir {
  std::string rel;  // "" for the workspace's root
  std::uint64_t dev = 0, ino = 0;
  StatTimes times;
  std::uint64_t entries = 0;  // entries the listing held (the scan's bound counts them)
  std::vector<std::string> subdirs;
  std::vector<CachedFlag> flagged;
  std::vector<CachedMatch> matches;
  bool operator==(const CachedDir&) const = default;
};

struct ScanCache {
  std::string workspace;           // absolute realpath
  std::vector<std::string> globs;  // the deny globs the matches were found for
  std::vector<CachedDir> dirs;
};

// The file's text.
std::string ScanCacheText(const ScanCache& c);

// The cache the text holds, or nullopt (`*why` says what is wrong).
std::optional<ScanCache> ParseScanCache(std::string_view text, std::string* why);

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
