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
#include <string>
#include <vector>

#include "base/fd.h"
#include "tests/support/test_env.h"

namespace cordon::supervisor {
namespace {

using ::cordon::policy::ScannedKind;
using ::cordon::policy::ScannedEntry;
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
              HasSubstr("more than 5 entries (limits.scanEntries)"));
  EXPECT_EQ(ScanWorkspace(t.ws(), {}, 10, 64).problem, "");
}

}  // namespace
}  // namespace cordon::supervisor
