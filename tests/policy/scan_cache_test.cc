// The launch scan's cache record (policy/scan_cache.h): its text round-trips,
// and anything cut, edited or of another version does not parse, so the
// scan walks the whole tree rather than trust it.
#include "policy/scan_cache.h"

#include <gtest/gtest.h>

#include <string>

namespace cordon::policy {
namespace {

ScanCache Sample() {
  ScanCache c;
  c.workspace = "/home/u/ws with space";
  c.globs = {"**/.env"};
  CachedDir root;
  root.dev = 2049;
  root.ino = 11;
  root.times = {1700000000, 5, 1700000001, 999999999};
  root.entries = 4;
  root.subdirs = {"src", "a\nnewline"};
  root.flagged = {{"notes.txt", ScannedKind::kLinkedFile, 77, 2}, {"fifo", ScannedKind::kFifo, 78, 1}};
  root.matches = {{".env", false}};
  CachedDir src;
  src.rel = "src";
  src.dev = 2049;
  src.ino = 12;
  src.entries = 0;
  c.dirs = {src, root};  // any order: the text sorts them
  return c;
}

TEST(ScanCache, ItsTextParsesBackToTheSameRecord) {
  const ScanCache c = Sample();
  std::string why;
  auto back = ParseScanCache(ScanCacheText(c), &why);
  ASSERT_TRUE(back) << why;
  EXPECT_EQ(back->workspace, c.workspace);
  EXPECT_EQ(back->globs, c.globs);
  ASSERT_EQ(back->dirs.size(), 2u);
  EXPECT_EQ(back->dirs[0].rel, "");
  EXPECT_EQ(back->dirs[0].times, c.dirs[1].times);
  EXPECT_EQ(back->dirs[0].entries, 4u);
  EXPECT_EQ(back->dirs[0].subdirs, (std::vector<std::string>{"a\nnewline", "src"}));
  ASSERT_EQ(back->dirs[0].flagged.size(), 2u);
  EXPECT_EQ(back->dirs[0].flagged[1], (CachedFlag{"notes.txt", ScannedKind::kLinkedFile, 77, 2}));
  EXPECT_EQ(back->dirs[0].flagged[0].kind, ScannedKind::kFifo);
  EXPECT_EQ(back->dirs[0].matches, (std::vector<CachedMatch>{{".env", false}}));
  EXPECT_EQ(back->dirs[1], c.dirs[0]);
  // Written again, the same bytes.
  EXPECT_EQ(ScanCacheText(*back), ScanCacheText(c));
}

TEST(ScanCache, ACutOrEditedFileIsNoCache) {
  const std::string text = ScanCacheText(Sample());
  // Every cut short of the whole file fails: the end line counts the dirs.
  for (std::size_t n = 0; n < text.size(); ++n) {
    EXPECT_FALSE(ParseScanCache(text.substr(0, n), nullptr)) << n;
  }
  auto edited = [&](const std::string& from, const std::string& to) {
    std::string t = text;
    const std::size_t at = t.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    t.replace(at, from.size(), to);
    std::string why;
    EXPECT_FALSE(ParseScanCache(t, &why)) << from << " -> " << to;
    return why;
  };
  EXPECT_EQ(edited("cordon-scan-cache 1", "cordon-scan-cache 2"), "not a scan cache of this version");
  edited("end 2", "end 1");
  edited("end 2\n", "end 2\nsub 1:x\n");
  edited("sub 3:src", "sub 3:..");
  edited("sub 3:src", "sub 4:a/bc");
  edited("sub 3:src", "sub 9:src");
  edited("flag linked 77 2", "flag linked 77 0");
  edited("flag linked 77 2", "flag hardlink 77 2");
  edited("flag linked 77 2", "flag linked -77 2");
  edited("flag linked 77 2", "flag linked 077 2");
  edited("match 0", "match 2");
  edited(" 5 1700000001", " 1000000000 1700000001");
  edited("dir 2049 12 0 0 0 0 0 3:src", "dir 2049 12 0 0 0 0 0 0:");  // the root twice
  edited("dir 2049 12 0 0 0 0 0 3:src", "dir 2049 12 0 0 0 0 0 4:/src");
  edited("dir 2049 12 0 0 0 0 0 3:src", "dir 2049 12 0 0 0 0 0 5:src/.");
  edited("workspace 21:/home/u", "workspace 21:home/u/");
  edited("sub 9:a\nnewline\nsub 3:src", "sub 3:src\nsub 9:a\nnewline");  // out of order
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
