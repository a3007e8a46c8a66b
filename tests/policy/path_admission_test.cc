// Lexical path admission, table-driven: each rule has a row that fails if
// the rule is removed and a row for the honest operation next to it.
#include "policy/path_admission.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <string>

namespace cordon::policy {
namespace {

AdmissionTable Table(Access workspace = Access::kReadWrite) {
  AdmissionTable t;
  EXPECT_TRUE(t.SetWorkspace("/w/ws", workspace));
  EXPECT_TRUE(t.Add("/usr", Access::kReadOnly));
  EXPECT_TRUE(t.Add("/etc", Access::kReadOnly));
  EXPECT_TRUE(t.Add("/etc/shadow", Access::kDenied));
  EXPECT_TRUE(t.Add("/dev/null", Access::kReadWrite));
  EXPECT_TRUE(t.Add("/w/ws/secret", Access::kDenied));
  EXPECT_TRUE(t.Add("/w/ws/vendor", Access::kReadOnly));
  return t;
}

struct Row {
  const char* path;
  const char* base;
  AdmitOp op;
  AdmitVerdict verdict;
  PathClass cls;
  int err;
};

constexpr AdmitOp R = AdmitOp::kRead;
constexpr AdmitOp M = AdmitOp::kMutate;
constexpr AdmitVerdict kOk = AdmitVerdict::kAdmit;
constexpr AdmitVerdict kNo = AdmitVerdict::kRefuse;

TEST(PathAdmission, Table) {
  const Row rows[] = {
      // Inside the workspace: reads and mutations.
      {"/w/ws/a.txt", nullptr, R, kOk, PathClass::kWorkspace, 0},
      {"/w/ws/a.txt", nullptr, M, kOk, PathClass::kWorkspace, 0},
      {"/w/ws", nullptr, M, kOk, PathClass::kWorkspace, 0},
      {"a.txt", "/w/ws", M, kOk, PathClass::kWorkspace, 0},
      {"sub/./b", "/w/ws", M, kOk, PathClass::kWorkspace, 0},
      {"//w///ws//a/", nullptr, M, kOk, PathClass::kWorkspace, 0},
      // Raw "..": a mutation is refused as written, even when it would
      // resolve inside; a read is left to the kernel (physical paths).
      {"/w/ws/a/../b", nullptr, M, kNo, PathClass::kMalformed, EACCES},
      {"a/../b", "/w/ws", M, kNo, PathClass::kMalformed, EACCES},
      {"a/..", "/w/ws", M, kNo, PathClass::kMalformed, EACCES},
      {".././x/../y", "/w/ws/sub", M, kNo, PathClass::kMalformed, EACCES},
      {"/w/ws/a/../b", nullptr, R, kOk, PathClass::kReadOnly, 0},
      {"a/../b", "/w/ws", R, kOk, PathClass::kReadOnly, 0},
      {"../a/../b", "/w/ws/sub", R, kOk, PathClass::kReadOnly, 0},
      // A relative path's leading ".." climb its base, the kernel's physical
      // name of the cwd or dirfd ("cmake ..", "gcc -I../include"); the
      // result is judged like any other path.
      {"..", "/w/ws/sub", R, kOk, PathClass::kWorkspace, 0},
      {"../b", "/w/ws/sub", M, kOk, PathClass::kWorkspace, 0},
      {"./..//./b", "/w/ws/sub", M, kOk, PathClass::kWorkspace, 0},
      {"../../ws/b", "/w/ws/sub", M, kOk, PathClass::kWorkspace, 0},
      {"../../x", "/w/ws/sub", M, kNo, PathClass::kOutside, EACCES},
      {"../secret/k", "/w/ws/sub", R, kNo, PathClass::kDenied, EACCES},
      {"../vendor/lib.c", "/w/ws/sub", M, kNo, PathClass::kReadOnly, EACCES},
      {"../../../../../etc/passwd", "/w/ws", R, kOk, PathClass::kReadOnly, 0},
      {"../../../../../etc/shadow", "/w/ws", R, kNo, PathClass::kDenied, EACCES},
      // A compiler's "/usr/lib/gcc/.../../../crti.o" is a read like any
      // other; the same spelling is refused for a mutation.
      {"/usr/lib/gcc/x/12/../../crti.o", nullptr, R, kOk, PathClass::kReadOnly, 0},
      {"/usr/lib/gcc/x/12/../../crti.o", nullptr, M, kNo, PathClass::kMalformed, EACCES},
      {"/usr/../w/ws/a.txt", nullptr, M, kNo, PathClass::kMalformed, EACCES},
      // ... but names that merely contain dots are names.
      {"a/..b/...", "/w/ws", M, kOk, PathClass::kWorkspace, 0},
      {".hidden", "/w/ws", M, kOk, PathClass::kWorkspace, 0},
      // A sibling sharing the prefix is not inside.
      {"/w/wsx/a", nullptr, R, kNo, PathClass::kOutside, EACCES},
      {"/w/ws2", nullptr, M, kNo, PathClass::kOutside, EACCES},
      // Outside: reads and mutations refused.
      {"/home/u/.ssh/id_rsa", nullptr, R, kNo, PathClass::kOutside, EACCES},
      {"/tmp/x", nullptr, M, kNo, PathClass::kOutside, EACCES},
      {"x", "/tmp", M, kNo, PathClass::kOutside, EACCES},
      // The read-only set: reads only.
      {"/usr/bin/rg", nullptr, R, kOk, PathClass::kReadOnly, 0},
      {"/usr/bin/rg", nullptr, M, kNo, PathClass::kReadOnly, EACCES},
      {"/w/ws/vendor/lib.c", nullptr, R, kOk, PathClass::kReadOnly, 0},
      {"/w/ws/vendor/lib.c", nullptr, M, kNo, PathClass::kReadOnly, EACCES},
      // Denied holes win over their allowed parents.
      {"/etc/passwd", nullptr, R, kOk, PathClass::kReadOnly, 0},
      {"/etc/shadow", nullptr, R, kNo, PathClass::kDenied, EACCES},
      {"/w/ws/secret/k", nullptr, R, kNo, PathClass::kDenied, EACCES},
      // Declared read-write paths.
      {"/dev/null", nullptr, M, kOk, PathClass::kReadWrite, 0},
      {"/dev/zero", nullptr, R, kNo, PathClass::kOutside, EACCES},
      // Malformed.
      {"", "/w/ws", R, kNo, PathClass::kMalformed, ENOENT},
      {"rel", nullptr, R, kNo, PathClass::kMalformed, EINVAL},
      {"rel", "relative/base", R, kNo, PathClass::kMalformed, EINVAL},
  };
  AdmissionTable t = Table();
  for (const Row& row : rows) {
    SCOPED_TRACE(std::string(row.path) + " base=" + (row.base ? row.base : "null") +
                 (row.op == M ? " mutate" : " read"));
    Admission a = AdmitPath(t, row.op, row.path, row.base);
    EXPECT_EQ(a.verdict, row.verdict) << a.reason;
    EXPECT_EQ(a.cls, row.cls) << PathClassName(a.cls);
    EXPECT_EQ(a.err, row.err);
    EXPECT_NE(a.reason, nullptr);
  }
}

TEST(PathAdmission, ReadOnlyWorkspaceRefusesMutationsButReads) {
  AdmissionTable t = Table(Access::kReadOnly);
  EXPECT_EQ(AdmitPath(t, R, "/w/ws/a", nullptr).verdict, kOk);
  Admission a = AdmitPath(t, M, "/w/ws/a", nullptr);
  EXPECT_EQ(a.verdict, kNo);
  EXPECT_EQ(a.err, EACCES);
  EXPECT_STREQ(a.reason, "mutation in a read-only workspace");
}

TEST(PathAdmission, EmbeddedNulIsMalformed) {
  AdmissionTable t = Table();
  std::string p("/w/ws/a\0/../../etc/shadow", 26);
  Admission a = AdmitPath(t, R, p, nullptr);
  EXPECT_EQ(a.err, EINVAL);
  EXPECT_STREQ(a.reason, "embedded NUL");
  EXPECT_EQ(AdmitPath(t, R, std::string_view("/w/ws/a"), nullptr).verdict, kOk);
}

TEST(PathAdmission, OverLongPathsAreRefused) {
  AdmissionTable t = Table();
  std::string ok = "/w/ws/" + std::string(kAdmissionMaxPath - 7, 'a');  // 4095 bytes
  ASSERT_EQ(ok.size(), kAdmissionMaxPath - 1);
  EXPECT_EQ(AdmitPath(t, R, ok, nullptr).verdict, kOk);
  std::string too_long = ok + "b";
  Admission a = AdmitPath(t, R, too_long, nullptr);
  EXPECT_EQ(a.err, ENAMETOOLONG);
  // Short enough alone, too long once joined to its base.
  std::string base = "/w/ws/" + std::string(3000, 'd');
  std::string rel(1500, 'r');
  EXPECT_EQ(AdmitPath(t, R, rel, base.c_str()).err, ENAMETOOLONG);
  EXPECT_EQ(AdmitPath(t, R, rel.substr(0, 1000), base.c_str()).verdict, kOk);
}

TEST(PathAdmission, NormalizeIsLexical) {
  char out[kAdmissionMaxPath];
  ASSERT_EQ(NormalizePath("a//./b/", "/w/ws/", out), 9);
  EXPECT_STREQ(out, "/w/ws/a/b");
  ASSERT_EQ(NormalizePath("/", nullptr, out), 1);
  EXPECT_STREQ(out, "/");
  ASSERT_EQ(NormalizePath(".", "/", out), 1);
  EXPECT_STREQ(out, "/");
  EXPECT_EQ(NormalizePath("x/../y", "/", out), -EACCES);
  ASSERT_EQ(NormalizePath("../b", "/w/ws/a", out), 7);
  EXPECT_STREQ(out, "/w/ws/b");
  ASSERT_EQ(NormalizePath("../../..", "/w/ws", out), 1) << "never above the root";
  EXPECT_STREQ(out, "/");
  ASSERT_EQ(NormalizePath("..", "/", out), 1);
  EXPECT_STREQ(out, "/");
  EXPECT_EQ(NormalizePath("../x/../y", "/w/ws/a", out), -EACCES);
  EXPECT_EQ(NormalizePath("x", "/a/../b", out), -EINVAL) << "a base must be normal";
}

TEST(PathAdmission, AnyParentSegmentIsSeen) {
  EXPECT_TRUE(HasParentSegment(".."));
  EXPECT_TRUE(HasParentSegment("../a"));
  EXPECT_TRUE(HasParentSegment("a/../b"));
  EXPECT_TRUE(HasParentSegment("/a/.."));
  EXPECT_TRUE(HasParentSegment("a//../"));
  EXPECT_FALSE(HasParentSegment("a/..b/.../c."));
  EXPECT_FALSE(HasParentSegment("./a"));
  EXPECT_FALSE(HasParentSegment(""));
}

TEST(PathAdmission, TableRejectsMalformedRules) {
  AdmissionTable t;
  EXPECT_FALSE(t.SetWorkspace("relative", Access::kReadWrite));
  EXPECT_FALSE(t.SetWorkspace("/", Access::kReadWrite)) << "the root is not a workspace";
  EXPECT_FALSE(t.SetWorkspace("/w/ws", Access::kDenied));
  EXPECT_FALSE(t.Add("/a/../b", Access::kReadOnly));
  EXPECT_FALSE(t.Add("/a/", Access::kReadOnly));
  EXPECT_FALSE(t.Add("/a//b", Access::kReadOnly));
  EXPECT_FALSE(t.has_workspace());
  EXPECT_EQ(t.size(), 0u);
  EXPECT_TRUE(t.Add("/", Access::kReadOnly));
  EXPECT_EQ(AdmitPath(t, R, "/anything", nullptr).cls, PathClass::kReadOnly);
  for (std::size_t i = 1; i < kAdmissionMaxRules; ++i) ASSERT_TRUE(t.Add("/r", Access::kReadOnly));
  EXPECT_FALSE(t.Add("/one-too-many", Access::kReadOnly));
}

TEST(PathAdmission, NoRulesMeansNothingIsAdmitted) {
  AdmissionTable t;
  EXPECT_EQ(AdmitPath(t, R, "/usr/bin/ls", nullptr).cls, PathClass::kOutside);
  EXPECT_EQ(AdmitPath(t, R, "/usr/bin/ls", nullptr).verdict, kNo);
}

}  // namespace
}  // namespace cordon::policy
