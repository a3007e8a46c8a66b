// The launch scan (supervisor/walk/launch_scan.h): one walk of the whole
// workspace that lists deny-glob matches, hard-linked regular files and
// special files, and says when it could not see the whole tree.
#include "supervisor/walk/launch_scan.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <ctime>
#include <string>
#include <thread>
#include <vector>

#include "base/fd.h"
#include "policy/scan_cache.h"
#include "supervisor/walk/scan_cache_file.h"
#include "tests/support/test_env.h"

namespace cordon::supervisor {
namespace {

using ::cordon::policy::ScannedEntry;
using ::cordon::policy::ScannedKind;
using ::cordon::testing::ScratchTree;
using ::cordon::testing::WriteFile;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

std::vector<std::string> Paths(const std::vector<ScannedEntry>& v) {
  std::vector<std::string> out;
  for (const ScannedEntry& e : v) out.push_back(e.path);
  std::sort(out.begin(), out.end());
  return out;
}

const ScannedEntry* Find(const LaunchScan& s, const std::string& path) {
  for (const ScannedEntry& e : s.entries) {
    if (e.path == path) return &e;
  }
  return nullptr;
}

TEST(ScanWorkspace, ListsLinkedAndSpecialFilesAtAnyDepthAndNothingElse) {
  ScratchTree t;
  const std::string ws = t.ws();
  for (const char* d : {"a", "a/b", ".git", ".git/objects", "dev"}) {
    ASSERT_EQ(::mkdir((ws + "/" + d).c_str(), 0755), 0) << d;
  }
  WriteFile(ws + "/plain.txt", "x");
  WriteFile(ws + "/.git/objects/obj", "x");
  WriteFile(t.Out("secret"), "x");
  ASSERT_EQ(::link(t.Out("secret").c_str(), (ws + "/a/b/linked").c_str()), 0);
  WriteFile(ws + "/one", "x");
  ASSERT_EQ(::link((ws + "/one").c_str(), (ws + "/.git/objects/two").c_str()), 0);
  ASSERT_EQ(::symlink("plain.txt", (ws + "/lnk").c_str()), 0);
  ASSERT_EQ(::mkfifo((ws + "/dev/fifo").c_str(), 0644), 0);
  Fd sock(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_un sa{};
  sa.sun_family = AF_UNIX;
  const std::string sock_path = ws + "/dev/sock";
  ASSERT_LT(sock_path.size(), sizeof sa.sun_path);
  std::copy(sock_path.begin(), sock_path.end(), sa.sun_path);
  ASSERT_EQ(::bind(sock.get(), reinterpret_cast<sockaddr*>(&sa), sizeof sa), 0);

  LaunchScan s = ScanWorkspace(ws, {}, 1000, 64);
  EXPECT_EQ(s.problem, "");
  EXPECT_THAT(s.matches, IsEmpty());
  EXPECT_THAT(Paths(s.entries), ElementsAre(ws + "/.git/objects/two", ws + "/a/b/linked",
                                            ws + "/dev/fifo", ws + "/dev/sock", ws + "/one"));
  EXPECT_EQ(Find(s, ws + "/a/b/linked")->nlink, 2u);
  EXPECT_EQ(Find(s, ws + "/one")->ino, Find(s, ws + "/.git/objects/two")->ino);
  EXPECT_EQ(Find(s, ws + "/dev/fifo")->kind, ScannedKind::kFifo);
  EXPECT_EQ(Find(s, ws + "/dev/sock")->kind, ScannedKind::kSocket);
}

TEST(ScanWorkspace, AGlobMatchTakesItsOtherNamesWithIt) {
  ScratchTree t;
  const std::string ws = t.ws();
  ASSERT_EQ(::mkdir((ws + "/notes").c_str(), 0755), 0);
  WriteFile(ws + "/.env", "x");
  ASSERT_EQ(::link((ws + "/.env").c_str(), (ws + "/notes/innocent.txt").c_str()), 0);
  LaunchScan s = ScanWorkspace(ws, {"**/.env"}, 1000, 64);
  EXPECT_EQ(s.problem, "");
  EXPECT_THAT(s.matches, ElementsAre(ws + "/.env", ws + "/notes/innocent.txt"));
}

TEST(ScanWorkspace, PastItsBoundItSaysSo) {
  ScratchTree t;
  for (int i = 0; i < 10; ++i) WriteFile(t.Ws("f" + std::to_string(i)), "x");
  EXPECT_THAT(ScanWorkspace(t.ws(), {}, 5, 64).problem,
              HasSubstr("more than 5 entries; raise limits.scanEntries"));
  EXPECT_EQ(ScanWorkspace(t.ws(), {}, 10, 64).problem, "");
}

// The cache (policy/scan_cache.h). A scan that "starts" ten seconds from
// now takes every directory made by the test as settled
// (policy::SettledBefore), as a real workspace's directories are.
ScanFrom Later(const policy::ScanCache* cache) { return {cache, std::time(nullptr) + 10}; }

policy::ScanCache CacheOf(LaunchScan s) { return std::move(s.next); }

// A tree of four directories: the root, a, a/b and c.
void MakeTree(const ScratchTree& t) {
  for (const char* d : {"a", "a/b", "c"}) ASSERT_EQ(::mkdir(t.Ws(d).c_str(), 0755), 0) << d;
  WriteFile(t.Ws("a/b/file"), "x");
  WriteFile(t.Ws("c/file"), "x");
}

// The timestamps of a directory changed right after it was recorded may
// fall in the same clock tick; a real scan's SettledBefore covers that, a
// test that fakes settled directories waits out the tick.
void NextTick() { std::this_thread::sleep_for(std::chrono::milliseconds(50)); }

TEST(ScanWorkspaceCache, ASecondScanOfAnUnchangedTreeListsNoDirectory) {
  ScratchTree t;
  MakeTree(t);
  LaunchScan first = ScanWorkspace(t.ws(), {}, 1000, 64, Later(nullptr));
  ASSERT_EQ(first.problem, "");
  EXPECT_EQ(first.dirs_listed, 4u);
  EXPECT_EQ(first.next.dirs.size(), 4u);
  const policy::ScanCache cache = CacheOf(first);
  LaunchScan second = ScanWorkspace(t.ws(), {}, 1000, 64, Later(&cache));
  EXPECT_EQ(second.problem, "");
  EXPECT_EQ(second.dirs_listed, 0u);
  EXPECT_EQ(second.dirs_reused, 4u);
  EXPECT_FALSE(second.changed);  // nothing to write back
  // The bound still counts the entries the cache holds.
  EXPECT_THAT(ScanWorkspace(t.ws(), {}, 4, 64, Later(&cache)).problem,
              HasSubstr("more than 4 entries; raise limits.scanEntries"));
  EXPECT_THAT(ScanWorkspace(t.ws(), {}, 1000, 1, Later(&cache)).problem,
              HasSubstr("raise limits.treeDepth"));
}

// A leaf (no subdirectory, nothing flagged) is taken from the cache on a
// stat through its parent: its entries still count against both bounds.
TEST(ScanWorkspaceCache, ALeafTakenFromTheCacheStillCountsAgainstTheBounds) {
  ScratchTree t;
  ASSERT_EQ(::mkdir(t.Ws("c").c_str(), 0755), 0);
  WriteFile(t.Ws("c/file"), "x");
  LaunchScan first = ScanWorkspace(t.ws(), {}, 1000, 64, Later(nullptr));
  ASSERT_EQ(first.problem, "");
  const policy::ScanCache cache = CacheOf(first);
  LaunchScan again = ScanWorkspace(t.ws(), {}, 1000, 64, Later(&cache));
  EXPECT_EQ(again.problem, "");
  EXPECT_EQ(again.dirs_listed, 0u);
  EXPECT_EQ(again.dirs_reused, 2u);
  EXPECT_THAT(ScanWorkspace(t.ws(), {}, 1000, 1, Later(&cache)).problem,
              HasSubstr("deeper than 1 levels in 'c'; raise limits.treeDepth"));
  EXPECT_THAT(ScanWorkspace(t.ws(), {}, 1, 64, Later(&cache)).problem,
              HasSubstr("more than 1 entries; raise limits.scanEntries"));
}

TEST(ScanWorkspaceCache, ALinkPlantedInAnUnchangedDirectoryIsCaughtByTheNextScan) {
  ScratchTree t;
  MakeTree(t);
  WriteFile(t.Out("secret"), "x");
  LaunchScan first = ScanWorkspace(t.ws(), {}, 1000, 64, Later(nullptr));
  const policy::ScanCache c1 = CacheOf(first);
  LaunchScan second = ScanWorkspace(t.ws(), {}, 1000, 64, Later(&c1));
  ASSERT_EQ(second.dirs_listed, 0u);  // a/b unchanged, not listed
  ASSERT_FALSE(second.changed);       // so the cache stays c1
  NextTick();
  ASSERT_EQ(::link(t.Out("secret").c_str(), t.Ws("a/b/planted").c_str()), 0);
  LaunchScan third = ScanWorkspace(t.ws(), {}, 1000, 64, Later(&c1));
  EXPECT_EQ(third.problem, "");
  EXPECT_THAT(Paths(third.entries), ElementsAre(t.Ws("a/b/planted")));
  EXPECT_EQ(third.dirs_listed, 1u);  // a/b alone
  EXPECT_EQ(third.dirs_reused, 3u);
  EXPECT_TRUE(third.changed);
  // And the scan after that keeps it from the cache, stat'ed again.
  const policy::ScanCache c3 = CacheOf(third);
  LaunchScan fourth = ScanWorkspace(t.ws(), {}, 1000, 64, Later(&c3));
  EXPECT_EQ(fourth.dirs_listed, 0u);
  EXPECT_THAT(Paths(fourth.entries), ElementsAre(t.Ws("a/b/planted")));
  EXPECT_EQ(Find(fourth, t.Ws("a/b/planted"))->nlink, 2u);
}

TEST(ScanWorkspaceCache, AFlaggedFileWhoseOtherNameWentIsNoLongerFlagged) {
  ScratchTree t;
  MakeTree(t);
  WriteFile(t.Out("secret"), "x");
  ASSERT_EQ(::link(t.Out("secret").c_str(), t.Ws("c/linked").c_str()), 0);
  LaunchScan first = ScanWorkspace(t.ws(), {}, 1000, 64, Later(nullptr));
  ASSERT_THAT(Paths(first.entries), ElementsAre(t.Ws("c/linked")));
  const policy::ScanCache cache = CacheOf(first);
  ASSERT_EQ(::unlink(t.Out("secret").c_str()), 0);  // c itself does not change
  LaunchScan second = ScanWorkspace(t.ws(), {}, 1000, 64, Later(&cache));
  EXPECT_EQ(second.dirs_listed, 0u);
  EXPECT_THAT(second.entries, IsEmpty());
  EXPECT_TRUE(second.changed);
}

TEST(ScanWorkspaceCache, AGlobMatchIsKeptAndACacheOfOtherGlobsOrAnotherWorkspaceIsNot) {
  ScratchTree t;
  MakeTree(t);
  WriteFile(t.Ws("a/.env"), "x");
  const std::vector<std::string> globs = {"**/.env"};
  LaunchScan first = ScanWorkspace(t.ws(), globs, 1000, 64, Later(nullptr));
  ASSERT_THAT(first.matches, ElementsAre(t.Ws("a/.env")));
  const policy::ScanCache cache = CacheOf(first);
  LaunchScan again = ScanWorkspace(t.ws(), globs, 1000, 64, Later(&cache));
  EXPECT_EQ(again.dirs_listed, 0u);
  EXPECT_THAT(again.matches, ElementsAre(t.Ws("a/.env")));
  EXPECT_EQ(ScanWorkspace(t.ws(), {"**/none"}, 1000, 64, Later(&cache)).dirs_listed, 4u);
  policy::ScanCache other = cache;
  other.workspace = t.root();
  EXPECT_EQ(ScanWorkspace(t.ws(), globs, 1000, 64, Later(&other)).dirs_listed, 4u);
}

TEST(ScanWorkspaceCache, ADirectoryChangedJustBeforeTheScanIsNotKept) {
  ScratchTree t;
  MakeTree(t);
  // A real start: the directories the test just made are a second old at most.
  LaunchScan s = ScanWorkspace(t.ws(), {}, 1000, 64);
  EXPECT_EQ(s.dirs_listed, 4u);
  ASSERT_EQ(s.next.dirs.size(), 4u);
  for (const policy::CachedDir& d : s.next.dirs) EXPECT_EQ(d.unsettled, 1u);
  // So the next scan lists them again, though none changed.
  const policy::ScanCache cache = CacheOf(s);
  EXPECT_EQ(ScanWorkspace(t.ws(), {}, 1000, 64, Later(&cache)).dirs_listed, 4u);
}

// The file (supervisor/walk/scan_cache_file.h).
TEST(ScanCacheFile, ACorruptCacheMeansAFullWalkAndAGoodOneNone) {
  ScratchTree t;
  MakeTree(t);
  WriteFile(t.Out("secret"), "x");
  ASSERT_EQ(::link(t.Out("secret").c_str(), t.Ws("a/linked").c_str()), 0);
  const std::string dir = t.root() + "/state/cordon/scans";
  const std::string file = dir + "/" + policy::ScanCacheName(t.ws());
  // The first scan makes the directory and the file, this user's alone.
  CachedLaunchScan made = ScanWorkspaceCached(t.ws(), {}, 1000, 64, dir);
  EXPECT_EQ(made.scan.dirs_listed, 4u);
  struct stat st;
  ASSERT_EQ(::stat(dir.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0700u);
  ASSERT_EQ(::stat(file.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
  EXPECT_EQ(::access(t.Ws(".cordon").c_str(), F_OK), -1);  // nothing in the workspace
  // A cache of settled directories, as a later run would find it.
  const std::string good =
      policy::ScanCacheBytes(CacheOf(ScanWorkspace(t.ws(), {}, 1000, 64, Later(nullptr))));
  WriteFile(file, good);
  ASSERT_EQ(::chmod(file.c_str(), 0600), 0);
  CachedLaunchScan warm = ScanWorkspaceCached(t.ws(), {}, 1000, 64, dir);
  EXPECT_EQ(warm.scan.dirs_listed, 0u);
  EXPECT_EQ(warm.cache_note, "");
  EXPECT_THAT(Paths(warm.scan.entries), ElementsAre(t.Ws("a/linked")));
  // Cut, of another version, or its flag records overwritten: a full walk,
  // the link found.
  std::string v1 = good;
  v1[std::strlen("cordon-scan-cache ")] = '1';
  for (const std::string& bad : {good.substr(0, good.size() - 3), v1,
                                 good.substr(0, good.size() - 100) + std::string(100, 'x')}) {
    WriteFile(file, bad);
    ASSERT_EQ(::chmod(file.c_str(), 0600), 0);
    CachedLaunchScan cold = ScanWorkspaceCached(t.ws(), {}, 1000, 64, dir);
    EXPECT_EQ(cold.scan.dirs_listed, 4u) << bad;
    EXPECT_THAT(cold.cache_note, HasSubstr("ignored"));
    EXPECT_THAT(Paths(cold.scan.entries), ElementsAre(t.Ws("a/linked")));
  }
  // One others may write vouches for nothing.
  WriteFile(file, good);
  ASSERT_EQ(::chmod(file.c_str(), 0622), 0);
  EXPECT_EQ(ScanWorkspaceCached(t.ws(), {}, 1000, 64, dir).scan.dirs_listed, 4u);
}

}  // namespace
}  // namespace cordon::supervisor
