// The preview, digest and rules-approver answer of the metadata, link and
// directory-rename bypasses (policy/bypass.h): the call's arguments are in
// the digest, so an answer for one change grants no other; each travels as
// JSON and back unchanged; the rules approver answers only its own op and,
// with "args", only those arguments.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/fd.h"
#include "policy/approval.h"
#include "policy/digest.h"
#include "supervisor/approvals/rules_approver.h"
#include "supervisor/attr_apply.h"
#include "supervisor/delete_preview.h"
#include "tests/support/test_env.h"

namespace cordon::supervisor {
namespace {

using namespace cordon::policy;
using namespace std::chrono_literals;
using cordon::testing::ScratchTree;
using cordon::testing::WriteFile;

ApprovalRequest Attr(uint64_t id, const char* op, std::string args, std::string path = "f") {
  ApprovalRequest r;
  r.request_id = id;
  r.preview = {std::move(path), 5, "", 1, 2, 3, 4};
  r.preview.bypass = op;
  r.preview.bypass_rule = "protected path";
  r.preview.args = std::move(args);
  r.preview_digest = r.preview.Digest();
  return r;
}

TEST(AttrArgsText, NamesEveryArgument) {
  AttrArgs a;
  a.op = AttrOp::kMode;
  a.mode = 0644;
  EXPECT_EQ(AttrArgsText(a), "mode 0644");
  a.op = AttrOp::kOwner;
  a.uid = static_cast<uid_t>(-1);
  a.gid = 5;
  EXPECT_EQ(AttrArgsText(a), "owner -1:5");
  a.op = AttrOp::kTimes;
  EXPECT_EQ(AttrArgsText(a), "atime UTIME_NOW mtime UTIME_NOW") << "NULL: both now";
  a.times_given = true;
  a.times[0] = {12, 5};
  a.times[1] = {0, UTIME_OMIT};
  EXPECT_EQ(AttrArgsText(a), "atime 12.000000005 mtime UTIME_OMIT");
  a.op = AttrOp::kXattr;
  a.xattr_name = "user.k";
  EXPECT_EQ(AttrArgsText(a), "remove user.k");
  a.xattr_set = true;
  a.xattr_value = "v1";
  EXPECT_EQ(AttrArgsText(a), "set user.k sha256=" + Sha256Hex("v1") + " size=2 flags=0");
  EXPECT_EQ(AttrBypassOp(AttrOp::kOther), "") << "a truncate is no bypass op";
}

TEST(AttrBypassPreview, TheArgumentsAreInTheDigestAndTravelAsJson) {
  const ApprovalRequest r = Attr(1, "chmod", "mode 0600");
  EXPECT_NE(r.preview.Digest(), Attr(1, "chmod", "mode 0644").preview.Digest());
  EXPECT_NE(r.preview.Digest(), Attr(1, "chown", "mode 0600").preview.Digest());
  EXPECT_NE(Attr(1, "utimes", "atime 1.000000000 mtime UTIME_OMIT").preview.Digest(),
            Attr(1, "utimes", "atime 1.000000000 mtime UTIME_NOW").preview.Digest());
  EXPECT_EQ(BypassOperation(r.preview), "chmod mode 0600");
  for (const char* op : {"chmod", "chown", "utimes", "xattr"}) {
    const ApprovalRequest a = Attr(2, op, "x");
    auto back = DeletePreview::FromJson(a.preview.ToJson());
    ASSERT_TRUE(back) << op;
    EXPECT_EQ(back->args, "x");
    EXPECT_EQ(back->Digest(), a.preview.Digest()) << op;
  }
  nlohmann::json bad = r.preview.ToJson();
  bad.erase("args");
  EXPECT_FALSE(DeletePreview::FromJson(bad)) << "a metadata change without its arguments";
  bad = r.preview.ToJson();
  bad["op"] = "open";
  EXPECT_FALSE(DeletePreview::FromJson(bad)) << "arguments on an op that takes none";
  bad = r.preview.ToJson();
  bad["op"] = "symlink";
  EXPECT_FALSE(DeletePreview::FromJson(bad)) << "no such bypass operation";
  bad = r.preview.ToJson();
  bad["directory"] = true;
  EXPECT_FALSE(DeletePreview::FromJson(bad)) << "directory is a rename's";
}

TEST(AttrBypassPreview, ADirectoryRenameAndALinkAreTheirOwnAnswers) {
  ApprovalRequest r = Attr(1, "rename", "", "d");
  r.preview.to.rel_path = "e";
  DeletePreview dir = r.preview;
  dir.directory = true;
  EXPECT_NE(dir.Digest(), r.preview.Digest()) << "a directory moved is not a file moved";
  EXPECT_EQ(BypassOperation(dir), "rename directory to e");
  auto back = DeletePreview::FromJson(dir.ToJson());
  ASSERT_TRUE(back);
  EXPECT_TRUE(back->directory);
  EXPECT_EQ(back->Digest(), dir.Digest());
  DeletePreview link = r.preview;
  link.bypass = "link";
  EXPECT_NE(link.Digest(), r.preview.Digest());
  EXPECT_EQ(BypassOperation(link), "link to e");
  back = DeletePreview::FromJson(link.ToJson());
  ASSERT_TRUE(back);
  EXPECT_EQ(back->Digest(), link.Digest());
  link.to.ino = 9;
  EXPECT_FALSE(DeletePreview::FromJson(link.ToJson())) << "a link never replaces a file";
}

TEST(RulesApprover, MetadataAndLinkOpsAndTheirArguments) {
  std::string err;
  auto a = RulesApprover::FromText(R"([{"glob": "f", "op": "bypass-chmod", "args": "mode 0600"},
      {"glob": "g", "op": "bypass-chown"}, {"glob": "t", "op": "bypass-utimes"},
      {"glob": "x", "op": "bypass-xattr"}, {"glob": "any", "op": "bypass"},
      {"glob": "n*", "op": "bypass-link"}])",
                                   &err);
  ASSERT_TRUE(a) << err;
  EXPECT_EQ(a->Ask(Attr(1, "chmod", "mode 0600"), 1s), Outcome::kAllowedOnce);
  EXPECT_EQ(a->Ask(Attr(2, "chmod", "mode 0644"), 1s), Outcome::kDenied) << "another mode";
  EXPECT_EQ(a->Ask(Attr(3, "chown", "mode 0600"), 1s), Outcome::kDenied) << "another op";
  EXPECT_EQ(a->Ask(Attr(4, "chown", "owner 1:1", "g"), 1s), Outcome::kAllowedOnce)
      << "no args: any";
  EXPECT_EQ(a->Ask(Attr(5, "chmod", "mode 0600", "g"), 1s), Outcome::kDenied) << "another op";
  EXPECT_EQ(a->Ask(Attr(6, "utimes", "atime UTIME_NOW mtime UTIME_NOW", "t"), 1s),
            Outcome::kAllowedOnce);
  EXPECT_EQ(a->Ask(Attr(7, "xattr", "remove user.k", "x"), 1s), Outcome::kAllowedOnce);
  EXPECT_EQ(a->Ask(Attr(8, "utimes", "atime UTIME_NOW mtime UTIME_NOW", "x"), 1s),
            Outcome::kDenied);
  uint64_t id = 10;
  for (const char* op : {"chmod", "chown", "utimes", "xattr"}) {
    EXPECT_EQ(a->Ask(Attr(id++, op, "y", "any"), 1s), Outcome::kAllowedOnce) << "bypass: " << op;
  }
  auto link = [](uint64_t id, std::string from, std::string to) {
    ApprovalRequest r = Attr(id, "link", "", std::move(from));
    r.preview.args.clear();
    r.preview.to.rel_path = std::move(to);
    r.preview_digest = r.preview.Digest();
    return r;
  };
  EXPECT_EQ(a->Ask(link(20, "notes", "notes.pem"), 1s), Outcome::kAllowedOnce);
  EXPECT_EQ(a->Ask(link(21, "notes", "other.pem"), 1s), Outcome::kDenied) << "one end only";
  for (const char* bad :
       {R"([{"glob": "f", "op": "bypass-chmod", "args": 1}])",
        R"([{"glob": "f", "op": "bypass-chmod", "args": ""}])",
        R"([{"glob": "f", "args": "mode 0600"}])", R"([{"glob": "f", "op": "bypass-truncate"}])"}) {
    EXPECT_FALSE(RulesApprover::FromText(bad, &err)) << bad;
  }
}

// On real files: a metadata change's preview is the identity of a file
// with one name or of a directory, with its arguments; a hard-linked file
// or unprintable arguments are not previewed; the recheck is the identity.
TEST(AttrBypassPreview, MadeOnTheHeldFileOrDirectory) {
  ScratchTree t;
  WriteFile(t.Ws("f"), "hello");
  ASSERT_EQ(::mkdir(t.Ws("d").c_str(), 0755), 0);
  Fd f(::open(t.Ws("f").c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC));
  Fd d(::open(t.Ws("d").c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC));
  auto p = MakeBypassPreview(f.get(), "f", "chmod", 0, "protected path", "mode 0600");
  ASSERT_TRUE(p.ok()) << Describe(p.error());
  EXPECT_EQ(p->args, "mode 0600");
  EXPECT_FALSE(p->directory);
  EXPECT_TRUE(Recheck(f.get(), -1, nullptr, p.value()).ok());
  auto q = MakeBypassPreview(d.get(), "d", "utimes", 0, "denied path", "atime 1.0 mtime 2.0");
  ASSERT_TRUE(q.ok()) << Describe(q.error());
  EXPECT_TRUE(q->directory);
  EXPECT_FALSE(MakeBypassPreview(f.get(), "f", "chmod", 0, "r", "mode\n0600").ok())
      << "unprintable arguments";
  EXPECT_FALSE(MakeBypassPreview(f.get(), "f", "chmod", 0, "r", "").ok()) << "no arguments";
  ASSERT_EQ(::chmod(t.Ws("f").c_str(), 0600), 0);
  EXPECT_FALSE(Recheck(f.get(), -1, nullptr, p.value()).ok()) << "ctime changed";
  ASSERT_EQ(::link(t.Ws("f").c_str(), t.Ws("f2").c_str()), 0);
  EXPECT_FALSE(MakeBypassPreview(f.get(), "f", "chmod", 0, "r", "mode 0600").ok())
      << "a hard-linked file";
  // A directory moved: its identity, to a free name; a link's source must
  // be a file.
  Fd dr(::open(t.Ws("d").c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  auto mv = MakeRenamePreview(dr.get(), "d", -1, "e", "read-only path");
  ASSERT_TRUE(mv.ok()) << Describe(mv.error());
  EXPECT_TRUE(mv->directory);
  EXPECT_EQ(mv->to.rel_path, "e");
  EXPECT_FALSE(MakeRenamePreview(dr.get(), "d", -1, "e", "r", "link").ok()) << "a directory";
}

}  // namespace
}  // namespace cordon::supervisor
