// policy::Decide on the kinds of special file: a FIFO and a socket hold no
// content, so their metadata (mode, owner, times) may change where a
// regular file's may; a device's may not. A FIFO is made where a regular
// file may be, and one the run made is opened at either end. Everything
// else stays refused for all three as a special file. One row per rule, as
// decide_test.cc.
#include <gtest/gtest.h>

#include <cerrno>
#include <vector>

#include "policy/decide.h"
#include "tests/policy/decide_rows.h"

namespace cordon::policy {
namespace {

using namespace decide_rows;  // NOLINT(google-build-using-namespace): the table's words

std::vector<Row> Rows() {
  std::vector<Row> rows = {
      // --- metadata ---
      Allow("metadata: a FIFO", R(kMeta, K::kFifo)),
      Allow("metadata: a socket (Python's forkserver chmods its listener)", R(kMeta, K::kSocket)),
      Allow("metadata: a FIFO, nofollow", R(kMeta, K::kFifo).nofollow()),
      Allow("metadata: a socket made by this run in a shared directory",
            R(kMeta, K::kSocket).shared()),
      Refuse("metadata: a device", R(kMeta, K::kSpecial), EACCES),
      Refuse("metadata: a device made in the run", R(kMeta, K::kSpecial).born(), EACCES),
      Refuse("metadata: truncate of a FIFO: the kernel's EINVAL", R(kMeta, K::kFifo).trunc(),
             EINVAL),
      Refuse("metadata: truncate of a socket", R(kMeta, K::kSocket).trunc(), EINVAL),
      Refuse("metadata: a hard-linked FIFO", R(kMeta, K::kFifo).nlink(2), EACCES),
      Refuse("metadata: a protected FIFO", R(kMeta, K::kFifo).prot(), EACCES),
      Refuse("metadata: a socket matching a deny glob", R(kMeta, K::kSocket).glob(), EACCES),
      Refuse("metadata: a socket in a shared directory not made by this run",
             R(kMeta, K::kSocket).shared().notown(), EACCES),
      // --- a FIFO the run makes (mkfifo, make's jobserver): where a file may be ---
      Allow("create: a FIFO (mknod)", R(kCreate, K::kAbsent).make(K::kFifo)),
      Refuse("create: a FIFO in a shared directory", R(kCreate, K::kAbsent).shared().make(K::kFifo),
             EACCES),
      Refuse("create: a FIFO where a file is granted",
             R(kCreate, K::kAbsent).file_grant().make(K::kFifo), EACCES),
      Refuse("create: a protected FIFO", R(kCreate, K::kAbsent).prot().make(K::kFifo), EACCES),
      Refuse("create: a FIFO matching a deny glob", R(kCreate, K::kAbsent).glob().make(K::kFifo),
             EACCES),
      Allow("open for writing: a FIFO the run made", R(kOpen, K::kFifo).born()),
      Allow("brokered read: a FIFO the run made", R(kRead, K::kFifo).born()),
      Refuse("open for writing: a FIFO the run made, hard-linked",
             R(kOpen, K::kFifo).born().nlink(2), EACCES),
      Refuse("brokered read: a FIFO the run made, hard-linked", R(kRead, K::kFifo).born().nlink(2),
             EACCES),
      Refuse("open for writing: a FIFO the run made at a protected path",
             R(kOpen, K::kFifo).born().prot(), EACCES),
      Refuse("open for writing: a pinned FIFO", R(kOpen, K::kFifo).born().pinned(), EACCES),
      Refuse("brokered read: a FIFO the run made, a deny glob's match",
             R(kRead, K::kFifo).born().glob(), EACCES),
      Refuse("open for writing: a socket made in the run", R(kOpen, K::kSocket).born(), EACCES),
      Refuse("open for writing: a device made in the run", R(kOpen, K::kSpecial).born(), EACCES),
  };
  // What stays refused for every kind of special file.
  for (K kind : {K::kFifo, K::kSocket, K::kSpecial}) {
    rows.push_back(Refuse("open for writing: a special file", R(kOpen, kind), EACCES));
    rows.push_back(Refuse("brokered read: a special file", R(kRead, kind), EACCES));
    rows.push_back(Refuse("delete: a special file of the user's", R(kDel, kind).can_ask(), EACCES));
    rows.push_back(Allow("delete: a special file made in the run", R(kDel, kind).born()));
  }
  // A FIFO is made where a file may be (above); a device or socket is not.
  for (K kind : {K::kSocket, K::kSpecial}) {
    rows.push_back(
        Refuse("create: a special file (mknod)", R(kCreate, K::kAbsent).make(kind), EACCES));
  }
  return rows;
}

TEST(DecideKinds, Table) { ExpectRows(Rows()); }

TEST(DecideKinds, EveryKindOfSpecialFileIsOneForEntryRefusal) {
  for (K kind : {K::kFifo, K::kSocket, K::kSpecial}) {
    EntryFacts e;
    e.kind = kind;
    ASSERT_NE(EntryRefusal(e), nullptr) << static_cast<int>(kind);
    EXPECT_STREQ(EntryRefusal(e), "special file");
    EXPECT_TRUE(IsSpecial(kind));
  }
  EXPECT_FALSE(IsSpecial(K::kRegular));
  EXPECT_FALSE(IsSpecial(K::kDirectory));
  EXPECT_FALSE(IsSpecial(K::kSymlink));
}

}  // namespace
}  // namespace cordon::policy
