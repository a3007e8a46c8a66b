// Directory listings for the workspace walks: every entry of a big
// directory, the saved last call where a short reply is the end, and the
// filesystem asked again at a mount point. The tmpfs and proc mounts are
// made in a forked child's own mount namespace; the child's exit status
// carries the verdict.
#include "supervisor/walk/dir_listing.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <set>
#include <string>
#include <vector>

#include "base/fd.h"
#include "tests/support/child_process.h"
#include "tests/support/test_env.h"

namespace cordon::testing {
namespace {

using policy::DirEntry;
using policy::EntryType;
using supervisor::ListDir;
using supervisor::ListDirectory;
using supervisor::ListNames;
using supervisor::OpenSubdir;
using supervisor::ShortReadEndsListing;

std::set<std::string> List(int fd, bool short_read_ends, std::size_t len) {
  std::vector<char> buf(len);
  std::set<std::string> names;
  ::lseek(fd, 0, SEEK_SET);
  int err = ListDirectory(fd, short_read_ends, buf.data(), buf.size(), [&](const dirent64& e) {
    names.insert(e.d_name);
    return true;
  });
  EXPECT_EQ(err, 0);
  return names;
}

void Touch(const std::string& path) {
  Fd fd(::open(path.c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0644));
  ASSERT_TRUE(fd.valid()) << path;
}

// Runs `body` in a child with a private mount namespace and a tmpfs at
// `dir`; the child's exit status is body's return value (0 = pass).
int InTmpfs(const std::string& dir, int (*body)(const std::string&)) {
  return InPrivateMountNamespace([&] {
    if (::mount("tmpfs", dir.c_str(), "tmpfs", 0, "size=16m") != 0) return 102;
    return body(dir);
  });
}

TEST(ListDirectory, ReadsEveryEntryOfADirectoryBiggerThanTheBuffer) {
  ScratchTree t;
  std::set<std::string> want;
  const std::string pad(100, 'n');
  for (int i = 0; i < 2000; ++i) {
    std::string name = pad + std::to_string(i);
    Touch(t.Ws(name));
    want.insert(name);
  }
  Fd fd(::open(t.ws().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  ASSERT_TRUE(fd.valid());
  // 2,000 records of ~128 bytes: several calls with either buffer.
  for (std::size_t len : {std::size_t{4096}, std::size_t{32 * 1024}}) {
    EXPECT_EQ(List(fd.get(), ShortReadEndsListing(fd.get()), len), want) << len;
    EXPECT_EQ(List(fd.get(), false, len), want) << len;
  }
}

TEST(ListDirectory, StopsEarlyWhenAskedTo) {
  ScratchTree t;
  for (int i = 0; i < 10; ++i) Touch(t.Ws("f" + std::to_string(i)));
  Fd fd(::open(t.ws().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  ASSERT_TRUE(fd.valid());
  char buf[4096];
  int seen = 0;
  EXPECT_EQ(ListDirectory(fd.get(), false, buf, sizeof buf, [&](const dirent64&) {
              return ++seen < 3;
            }),
            0);
  EXPECT_EQ(seen, 3);
}

// Whether a listing makes another call after a short reply: while the
// first reply is being read, the fd number is made to name another
// directory, whose entry only a further getdents64 can return.
TEST(ListDirectory, AShortReplyEndsTheListingOnlyWhereTrusted) {
  ScratchTree t;
  for (const char* n : {"a", "b", "c"}) Touch(t.Ws(n));
  ASSERT_EQ(::mkdir(t.Out("other").c_str(), 0755), 0);
  Touch(t.Out("other/late"));
  for (bool short_read_ends : {true, false}) {
    Fd fd(::open(t.ws().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    ASSERT_TRUE(fd.valid());
    std::set<std::string> names;
    bool swapped = false;
    char buf[32 * 1024];
    int err = ListDirectory(fd.get(), short_read_ends, buf, sizeof buf, [&](const dirent64& e) {
      names.insert(e.d_name);
      if (!swapped) {
        swapped = true;
        Fd other(::open(t.Out("other").c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
        EXPECT_EQ(::dup3(other.get(), fd.get(), O_CLOEXEC), fd.get());
      }
      return true;
    });
    EXPECT_EQ(err, 0);
    EXPECT_EQ(names.count("a") + names.count("b") + names.count("c"), 3u);
    EXPECT_EQ(names.count("late"), short_read_ends ? 0u : 1u) << short_read_ends;
  }
}

// A subdirectory on the same filesystem inherits the parent's answer; a
// mount point of another kind (proc: one reply per call) is asked again.
int MountPointIsAskedAgain(const std::string& dir) {
  if (::mkdir((dir + "/plain").c_str(), 0755) != 0) return 1;
  if (::mkdir((dir + "/proc").c_str(), 0755) != 0) return 1;
  if (::symlink("plain", (dir + "/link").c_str()) != 0) return 1;
  if (::mount("proc", (dir + "/proc").c_str(), "proc", 0, nullptr) != 0) return 2;
  Fd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!fd || !ShortReadEndsListing(fd.get())) return 3;
  supervisor::Subdir plain = OpenSubdir(fd.get(), "plain", true);
  if (!plain.fd || !plain.short_read_ends) return 4;
  supervisor::Subdir proc = OpenSubdir(fd.get(), "proc", true);
  if (!proc.fd || proc.short_read_ends) return 5;
  supervisor::Subdir unsure = OpenSubdir(fd.get(), "plain", false);
  if (!unsure.fd || unsure.short_read_ends) return 6;
  supervisor::Subdir link = OpenSubdir(fd.get(), "link", true);
  if (link.fd || (link.err != ELOOP && link.err != ENOTDIR)) return 7;
  return 0;
}

TEST(OpenSubdir, AMountPointOfAnotherFilesystemIsAskedAgain) {
  ScratchTree t;
  EXPECT_EQ(InTmpfs(t.ws(), MountPointIsAskedAgain), 0)
      << "4: same filesystem lost the answer; 5: proc mount inherited it; 6: an unsure parent "
         "passed one on; 7: a link was entered";
}

TEST(ListDir, ReportsDirectoriesAndFilesAndLeavesSymlinksUnknown) {
  ScratchTree t;
  WriteFile(t.Ws("file"), "x");
  ASSERT_EQ(::mkdir(t.Ws("dir").c_str(), 0755), 0);
  ASSERT_EQ(::symlink("dir", t.Ws("link").c_str()), 0);
  std::vector<DirEntry> e = ListDir(t.ws());
  ASSERT_EQ(e.size(), 3u);  // sorted by name, no "." or ".."
  EXPECT_EQ(e[0].name, "dir");
  EXPECT_EQ(e[0].type, EntryType::kDirectory);
  EXPECT_EQ(e[1].name, "file");
  EXPECT_EQ(e[1].type, EntryType::kOther);
  EXPECT_EQ(e[2].name, "link");
  EXPECT_EQ(e[2].type, EntryType::kUnknown) << "a symlink's target decides: stat it";
  EXPECT_FALSE(e[0].symlink);
  EXPECT_FALSE(e[1].symlink);
  EXPECT_TRUE(e[2].symlink);
}

// The plan skips a link that leads to a denied path (policy/fs_plan.h): the
// lister says where each link leads, through every hop, and "" for one that
// leads nowhere.
TEST(ListDir, GivesEachSymlinksRealTarget) {
  ScratchTree t;
  ASSERT_EQ(::mkdir(t.Ws("dir").c_str(), 0755), 0);
  WriteFile(t.Ws("dir/file"), "x");
  ASSERT_EQ(::symlink("dir/file", t.Ws("a").c_str()), 0);
  ASSERT_EQ(::symlink("a", t.Ws("b").c_str()), 0);  // a link to a link
  ASSERT_EQ(::symlink(".", t.Ws("c").c_str()), 0);  // the directory itself
  ASSERT_EQ(::symlink("missing", t.Ws("d").c_str()), 0);
  char real[PATH_MAX];
  ASSERT_NE(::realpath(t.ws().c_str(), real), nullptr);
  const std::string ws = real;
  std::vector<DirEntry> e = ListDir(t.ws());
  ASSERT_EQ(e.size(), 5u);
  EXPECT_EQ(e[0].target, ws + "/dir/file");
  EXPECT_EQ(e[1].target, ws + "/dir/file");
  EXPECT_EQ(e[2].target, ws);
  EXPECT_TRUE(e[3].symlink);
  EXPECT_EQ(e[3].target, "") << "a dangling link";
  EXPECT_FALSE(e[4].symlink);
  EXPECT_EQ(e[4].target, "") << "only links carry a target";
}

TEST(ListNames, ListsEveryNameFromTheStartEachTime) {
  ScratchTree t;
  WriteFile(t.Ws("a"), "x");
  ASSERT_EQ(::mkdir(t.Ws("b").c_str(), 0755), 0);
  Fd dir(::open(t.ws().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  ASSERT_TRUE(dir);
  for (int pass = 0; pass < 2; ++pass) {
    auto names = ListNames(dir.get());
    ASSERT_TRUE(names.ok());
    std::sort(names->begin(), names->end());
    EXPECT_EQ(*names, (std::vector<std::string>{"a", "b"})) << "pass " << pass;
  }
}

}  // namespace
}  // namespace cordon::testing
