// Delete preview and recheck on real files: only a regular single-link file
// up to 20 MiB is previewed; any change between preview and recheck refuses.
#include "supervisor/delete_preview.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include "policy/digest.h"
#include "base/fd.h"
#include "tests/support/test_env.h"

namespace cordon::supervisor {
namespace {

using cordon::testing::ScratchTree;
using cordon::testing::WriteFile;

class PreviewTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_.reset(::open(t_.ws().c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC)); }
  // Opened the way the supervisor will: from the workspace fd, no follow.
  Fd Open(const char* name) {
    return Fd(::openat(dir_.get(), name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  }
  ScratchTree t_;
  Fd dir_;
};

TEST_F(PreviewTest, DescribesTheHeldFile) {
  WriteFile(t_.Ws("notes.txt"), "hello");
  Fd fd = Open("notes.txt");
  auto p = MakePreview(fd.get(), "notes.txt");
  ASSERT_TRUE(p.ok()) << Describe(p.error());
  struct stat st;
  ASSERT_EQ(::stat(t_.Ws("notes.txt").c_str(), &st), 0);
  EXPECT_EQ(p->rel_path, "notes.txt");
  EXPECT_EQ(p->size, 5u);
  EXPECT_EQ(p->sha256, policy::Sha256Hex("hello"));
  EXPECT_EQ(p->dev, st.st_dev);
  EXPECT_EQ(p->ino, st.st_ino);
  EXPECT_EQ(p->mtime_ns, int64_t{st.st_mtim.tv_sec} * 1000000000 + st.st_mtim.tv_nsec);
  EXPECT_TRUE(Recheck(fd.get(), dir_.get(), "notes.txt", *p).ok()) << "unchanged file passes";
}

TEST_F(PreviewTest, RefusesWhatDoesNotQualify) {
  WriteFile(t_.Ws("linked"), "x");
  ASSERT_EQ(::link(t_.Ws("linked").c_str(), t_.Ws("linked2").c_str()), 0);
  ASSERT_EQ(::mkdir(t_.Ws("dir").c_str(), 0755), 0);
  WriteFile(t_.Ws("target"), "x");
  ASSERT_EQ(::symlink("target", t_.Ws("link").c_str()), 0);
  ASSERT_EQ(::mkfifo(t_.Ws("fifo").c_str(), 0644), 0);
  Fd big(::open(t_.Ws("big").c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0644));
  ASSERT_EQ(::ftruncate(big.get(), (21 << 20)), 0);
  Fd exact(::open(t_.Ws("exact").c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0644));
  ASSERT_EQ(::ftruncate(exact.get(), (20 << 20)), 0);

  EXPECT_EQ(MakePreview(Open("linked").get(), "linked").error().err, EMLINK);
  EXPECT_EQ(MakePreview(Open("dir").get(), "dir").error().err, EPERM);
  EXPECT_FALSE(Open("link").valid()) << "O_NOFOLLOW refuses the symlink itself";
  Fd link_fd(::openat(dir_.get(), "link", O_PATH | O_NOFOLLOW | O_CLOEXEC));
  EXPECT_FALSE(MakePreview(link_fd.get(), "link").ok()) << "an O_PATH symlink fd is no file";
  EXPECT_EQ(MakePreview(Open("fifo").get(), "fifo").error().err, EPERM);
  EXPECT_EQ(MakePreview(Open("big").get(), "big").error().err, EFBIG);
  EXPECT_TRUE(MakePreview(Open("exact").get(), "exact").ok()) << "20 MiB exactly qualifies";
  EXPECT_TRUE(MakePreview(Open("target").get(), "target").ok());
  EXPECT_EQ(MakePreview(Open("target").get(), "bad\nname").error().err, EINVAL);
  EXPECT_EQ(MakePreview(Open("target").get(), "bad\x1b[2Jname").error().err, EINVAL);
  EXPECT_EQ(MakePreview(Open("target").get(), "bad\xffname").error().err, EINVAL);
  EXPECT_EQ(MakePreview(Open("target").get(), "/abs").error().err, EINVAL);
}

TEST_F(PreviewTest, ChangedContentIsRefused) {
  WriteFile(t_.Ws("f"), "hello");
  Fd fd = Open("f");
  auto p = MakePreview(fd.get(), "f");
  ASSERT_TRUE(p.ok());
  // Same size, mtime put back (ctime still moves, and the hash differs).
  struct stat st;
  ASSERT_EQ(::fstat(fd.get(), &st), 0);
  Fd w(::open(t_.Ws("f").c_str(), O_WRONLY | O_CLOEXEC));
  ASSERT_EQ(::pwrite(w.get(), "J", 1, 0), 1);
  timespec times[2] = {st.st_atim, st.st_mtim};
  ASSERT_EQ(::futimens(w.get(), times), 0);
  auto r = Recheck(fd.get(), dir_.get(), "f", *p);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().err, ESTALE);
}

TEST_F(PreviewTest, ContentHashAloneCatchesAnEditWithRestoredTimes) {
  WriteFile(t_.Ws("f"), "hello");
  Fd fd = Open("f");
  auto p = MakePreview(fd.get(), "f");
  ASSERT_TRUE(p.ok());
  policy::DeletePreview forged = *p;
  forged.sha256 = policy::Sha256Hex("other");
  EXPECT_EQ(Recheck(fd.get(), dir_.get(), "f", forged).error().err, ESTALE);
  EXPECT_TRUE(Recheck(fd.get(), dir_.get(), "f", *p).ok());
}

TEST_F(PreviewTest, ReplacedOrLinkedOrRemovedNameIsRefused) {
  WriteFile(t_.Ws("f"), "hello");
  Fd fd = Open("f");
  auto p = MakePreview(fd.get(), "f");
  ASSERT_TRUE(p.ok());
  // Another inode renamed over the name: the held fd is unchanged, the entry is not.
  WriteFile(t_.Ws("new"), "hello");
  ASSERT_EQ(::rename(t_.Ws("f").c_str(), t_.Ws("moved").c_str()), 0);
  ASSERT_EQ(::rename(t_.Ws("new").c_str(), t_.Ws("f").c_str()), 0);
  EXPECT_EQ(Recheck(fd.get(), dir_.get(), "f", *p).error().err, ESTALE);
  ASSERT_EQ(::unlink(t_.Ws("f").c_str()), 0);
  EXPECT_EQ(Recheck(fd.get(), dir_.get(), "f", *p).error().err, ESTALE) << "name gone";
}

TEST_F(PreviewTest, NewHardLinkIsRefused) {
  WriteFile(t_.Ws("f"), "hello");
  Fd fd = Open("f");
  auto p = MakePreview(fd.get(), "f");
  ASSERT_TRUE(p.ok());
  ASSERT_EQ(::link(t_.Ws("f").c_str(), t_.Ws("f2").c_str()), 0);
  EXPECT_EQ(Recheck(fd.get(), dir_.get(), "f", *p).error().err, ESTALE);
}

TEST_F(PreviewTest, GrownFileIsRefused) {
  WriteFile(t_.Ws("f"), "hello");
  Fd fd = Open("f");
  auto p = MakePreview(fd.get(), "f");
  ASSERT_TRUE(p.ok());
  WriteFile(t_.Ws("f"), "hello, more");
  EXPECT_EQ(Recheck(fd.get(), dir_.get(), "f", *p).error().err, ESTALE);
}

// An empty directory (rmdir, issue 26): path and identity, no content; an
// entry made or removed since the preview, or another directory under the
// name, refuses.
TEST_F(PreviewTest, DirectoryPreviewIsItsIdentity) {
  ASSERT_EQ(::mkdir(t_.Ws("d").c_str(), 0755), 0);
  Fd fd(::openat(dir_.get(), "d", O_RDONLY | O_NOFOLLOW | O_DIRECTORY | O_CLOEXEC));
  auto p = MakeDirPreview(fd.get(), "d");
  ASSERT_TRUE(p.ok()) << Describe(p.error());
  EXPECT_TRUE(p->directory);
  EXPECT_EQ(p->size, 0u);
  EXPECT_EQ(p->sha256, "");
  EXPECT_EQ(p->ToJson()["kind"], "directory");
  auto round = policy::DeletePreview::FromJson(p->ToJson());
  ASSERT_TRUE(round.has_value());
  EXPECT_EQ(round->Digest(), p->Digest());
  policy::DeletePreview as_file = *p;
  as_file.directory = false;
  EXPECT_NE(as_file.Digest(), p->Digest()) << "a directory's preview is not a file's";
  EXPECT_TRUE(Recheck(fd.get(), dir_.get(), "d", *p).ok());
  WriteFile(t_.Ws("d/new"), "x");
  EXPECT_EQ(Recheck(fd.get(), dir_.get(), "d", *p).error().err, ESTALE) << "an entry was made";
  ASSERT_EQ(::unlink(t_.Ws("d/new").c_str()), 0);
  EXPECT_EQ(Recheck(fd.get(), dir_.get(), "d", *p).error().err, ESTALE);
  auto again = MakeDirPreview(fd.get(), "d");
  ASSERT_TRUE(again.ok());
  ASSERT_EQ(::rename(t_.Ws("d").c_str(), t_.Ws("e").c_str()), 0);
  ASSERT_EQ(::mkdir(t_.Ws("d").c_str(), 0755), 0);
  EXPECT_EQ(Recheck(fd.get(), dir_.get(), "d", *again).error().err, ESTALE) << "another directory";
  WriteFile(t_.Ws("f"), "x");
  Fd file = Open("f");
  EXPECT_EQ(MakeDirPreview(file.get(), "f").error().err, ENOTDIR);
}

}  // namespace
}  // namespace cordon::supervisor
