// The launch scan's cache record (policy/scan_cache.h): its bytes round-trip,
// and anything cut, out of range, not one tree or of another version does
// not parse, so the scan walks the whole tree rather than trust it.
#include "policy/scan_cache.h"

#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <string>

namespace cordon::policy {
namespace {

// The root holds "src" and "a\nnewline"; "src" holds "deep".
ScanCache Sample() {
  ScanCache c;
  c.workspace = "/home/u/ws with space";
  c.globs = {"**/.env"};
  CachedDir root;
  root.dev = 2049;
  root.ino = 11;
  root.times = {1700000000, 5, 1700000001, 999999999};
  root.entries = 4;
  root.end = 4;
  root.flags = {0, 2};
  c.flags.push_back(
      {c.AddName("notes.txt"), static_cast<std::uint32_t>(ScannedKind::kLinkedFile), 0, 77, 2});
  c.flags.push_back({c.AddName("fifo"), static_cast<std::uint32_t>(ScannedKind::kFifo), 0, 78, 1});
  root.matches = {0, 1};
  c.matches.push_back({c.AddName(".env"), 0, 0});
  CachedDir src;
  src.parent = 0;
  src.end = 3;
  src.name = c.AddName("src");
  src.ino = 12;
  CachedDir deep;
  deep.parent = 1;
  deep.end = 3;
  deep.name = c.AddName("deep");
  deep.ino = 13;
  deep.unsettled = 1;
  CachedDir odd;
  odd.parent = 0;
  odd.end = 4;
  odd.name = c.AddName("a\nnewline");
  odd.ino = 14;
  c.dirs = {root, src, deep, odd};
  return c;
}

TEST(ScanCache, ItsBytesParseBackToTheSameRecord) {
  const ScanCache c = Sample();
  std::string why;
  auto back = ParseScanCache(ScanCacheBytes(c), &why);
  ASSERT_TRUE(back) << why;
  EXPECT_EQ(back->workspace, c.workspace);
  EXPECT_EQ(back->globs, c.globs);
  EXPECT_EQ(back->dirs, c.dirs);
  EXPECT_EQ(back->flags, c.flags);
  EXPECT_EQ(back->matches, c.matches);
  EXPECT_EQ(back->Name(back->dirs[3].name), "a\nnewline");
  EXPECT_EQ(back->Name(back->flags[1].name), "fifo");
  // Written again, the same bytes.
  EXPECT_EQ(ScanCacheBytes(*back), ScanCacheBytes(c));
}

TEST(ScanCache, ACutFileOrOneOfAnotherVersionIsNoCache) {
  const std::string bytes = ScanCacheBytes(Sample());
  // Every cut short of the whole file fails, and so does one byte more.
  for (std::size_t n = 0; n < bytes.size(); ++n) {
    EXPECT_FALSE(ParseScanCache(bytes.substr(0, n), nullptr)) << n;
  }
  EXPECT_FALSE(ParseScanCache(bytes + "x", nullptr));
  std::string why;
  std::string v1 = bytes;
  v1[std::strlen("cordon-scan-cache ")] = '1';
  EXPECT_FALSE(ParseScanCache(v1, &why));
  EXPECT_EQ(why, "not a scan cache of this version");
}

// One field of the sample changed: each breaks a rule the walk relies on.
TEST(ScanCache, ARecordOutOfRangeOrNotOneTreeIsNoCache) {
  auto refused = [](const std::function<void(ScanCache&)>& edit) {
    ScanCache c = Sample();
    edit(c);
    std::string why;
    const bool parsed = ParseScanCache(ScanCacheBytes(c), &why).has_value();
    return parsed ? std::string("parsed") : why;
  };
  EXPECT_EQ(refused([](ScanCache&) {}), "parsed");
  EXPECT_EQ(refused([](ScanCache& c) { c.workspace = "home/u"; }), "no workspace");
  EXPECT_EQ(refused([](ScanCache& c) { c.globs.push_back(""); }), "an empty glob");
  EXPECT_EQ(refused([](ScanCache& c) { c.dirs.clear(); }), "no root");
  // Names: a '/', "..", past the names, empty.
  EXPECT_EQ(refused([](ScanCache& c) { c.dirs[1].name = c.AddName("a/b"); }),
            "directories that are not one tree");
  EXPECT_EQ(refused([](ScanCache& c) { c.dirs[1].name = c.AddName(".."); }),
            "directories that are not one tree");
  EXPECT_EQ(refused([](ScanCache& c) { c.dirs[1].name = {0, 9999}; }), "a bad directory record");
  EXPECT_EQ(refused([](ScanCache& c) {
              c.dirs[1].name = {0, 0};
            }),
            "directories that are not one tree");
  EXPECT_EQ(refused([](ScanCache& c) { c.flags[0].name = c.AddName("x/y"); }),
            "a bad flagged entry");
  EXPECT_EQ(refused([](ScanCache& c) { c.matches[0].name = c.AddName("."); }), "a bad match");
  // Values: a link count of 0, a kind or link bit out of range, a time.
  EXPECT_EQ(refused([](ScanCache& c) { c.flags[0].nlink = 0; }), "a bad flagged entry");
  EXPECT_EQ(refused([](ScanCache& c) { c.flags[0].kind = 9; }), "a bad flagged entry");
  EXPECT_EQ(refused([](ScanCache& c) { c.matches[0].link = 2; }), "a bad match");
  EXPECT_EQ(refused([](ScanCache& c) { c.dirs[0].times.mtime_ns = 1000000000; }),
            "a bad directory record");
  EXPECT_EQ(refused([](ScanCache& c) { c.dirs[2].unsettled = 2; }), "a bad directory record");
  // Ranges past their arrays.
  EXPECT_EQ(refused([](ScanCache& c) { c.dirs[0].flags = {1, 2}; }), "a bad directory record");
  EXPECT_EQ(refused([](ScanCache& c) { c.dirs[0].matches = {0, 2}; }), "a bad directory record");
  // The tree: a root with a name or a parent, a subtree past its parent's,
  // a parent that is not the innermost open directory, an end before itself.
  EXPECT_EQ(refused([](ScanCache& c) { c.dirs[0].name = c.AddName("x"); }), "a bad root");
  EXPECT_EQ(refused([](ScanCache& c) { c.dirs[0].end = 3; }), "a bad root");
  EXPECT_EQ(refused([](ScanCache& c) { c.dirs[2].end = 4; }), "directories that are not one tree");
  EXPECT_EQ(refused([](ScanCache& c) { c.dirs[2].parent = 0; }),
            "directories that are not one tree");
  EXPECT_EQ(refused([](ScanCache& c) { c.dirs[3].parent = 1; }),
            "directories that are not one tree");
  EXPECT_EQ(refused([](ScanCache& c) { c.dirs[1].end = 1; }), "a bad directory record");
}

TEST(ScanCache, ADirectoryChangedInTheSecondBeforeTheScanIsNotSettled) {
  EXPECT_TRUE(SettledBefore({100, 0, 100, 0}, 102));
  EXPECT_FALSE(SettledBefore({100, 0, 101, 0}, 102));
  EXPECT_FALSE(SettledBefore({101, 0, 100, 0}, 102));
  EXPECT_FALSE(SettledBefore({200, 0, 200, 0}, 102));  // a clock set back
}

TEST(ScanCache, EachWorkspaceHasItsOwnFileInTheStateHome) {
  EXPECT_EQ(ScanCacheDir("/home/u/.local/state"), "/home/u/.local/state/cordon/scans");
  EXPECT_EQ(ScanCacheName("/a").size(), 64u);
  EXPECT_NE(ScanCacheName("/a"), ScanCacheName("/b"));
}

}  // namespace
}  // namespace cordon::policy
