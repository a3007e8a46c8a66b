// Landlock's audit records, sorted into one run's account
// (policy/landlock_audit.h): the text as the kernel writes it, the run's
// domain told from every other by its creator's pid, and the SYSCALL record
// that names the denied process.
#include "policy/landlock_audit.h"

#include <gtest/gtest.h>

#include <string>

namespace cordon::policy {
namespace {

struct TextRow {
  const char* name;
  std::string payload;
  bool parses;
  uint64_t serial;
  const char* key;
  const char* value;
};

void PrintTo(const TextRow& r, std::ostream* os) { *os << r.name; }

class AuditTextTest : public ::testing::TestWithParam<TextRow> {};

TEST_P(AuditTextTest, Parses) {
  const TextRow& r = GetParam();
  std::optional<AuditText> t = ParseAuditText(r.payload);
  ASSERT_EQ(t.has_value(), r.parses) << r.payload;
  if (!r.parses) return;
  EXPECT_EQ(t->serial, r.serial);
  const std::string* v = t->Find(r.key);
  ASSERT_NE(v, nullptr) << r.key;
  EXPECT_EQ(*v, r.value);
}

INSTANTIATE_TEST_SUITE_P(
    Rows, AuditTextTest,
    ::testing::Values(
        TextRow{"quoted_path",
                "audit(1729738800.349:44): domain=195ba459b blockers=fs.refer path=\"/usr/bin\" "
                "dev=\"vda2\" ino=351",
                true, 44, "path", "/usr/bin"},
        TextRow{"bare_number", "audit(1.2:7): domain=1a blockers=fs.read_file ino=351", true, 7,
                "ino", "351"},
        // A path with a space is hex, unquoted; it comes back decoded.
        TextRow{"hex_path", "audit(1.2:8): domain=1a blockers=fs.read_file path=2F6120620A", true,
                8, "path", "/a b\n"},
        // Hex only where the kernel writes untrusted strings: a domain id
        // that looks like hex stays as it is.
        TextRow{"hex_domain_kept", "audit(1.2:9): domain=1A2B blockers=fs.read_file", true, 9,
                "domain", "1A2B"},
        TextRow{"odd_hex_kept", "audit(1.2:9): path=ABC", true, 9, "path", "ABC"},
        TextRow{"single_quoted_msg", "audit(1.2:260): pid=1 uid=0 msg='cordon: end of it'", true,
                260, "msg", "cordon: end of it"},
        TextRow{"trailing_nul_and_newline", std::string("audit(1.2:3): a=b\n\0", 19), true, 3, "a",
                "b"},
        TextRow{"no_prefix", "type=1423 msg=audit(1.2:3): a=b", false, 0, "", ""},
        TextRow{"no_serial", "audit(1.2): a=b", false, 0, "", ""},
        TextRow{"serial_not_a_number", "audit(1.2:x3): a=b", false, 0, "", ""},
        TextRow{"unclosed_quote", "audit(1.2:3): path=\"/usr", false, 0, "", ""},
        TextRow{"token_without_value", "audit(1.2:3): a=b junk", false, 0, "", ""},
        TextRow{"empty_key", "audit(1.2:3): =b", false, 0, "", ""}),
    [](const ::testing::TestParamInfo<TextRow>& i) { return std::string(i.param.name); });

constexpr const char* kAccess =
    "audit(1.1:10): domain=aaa blockers=fs.read_file path=\"/root/.bashrc\" dev=\"vda\" ino=9";
constexpr const char* kAllocated =
    "audit(1.1:10): domain=aaa status=allocated mode=enforcing pid=500 uid=0 exe=\"/c\" comm=\"c\"";
constexpr const char* kSyscall =
    "audit(1.1:10): arch=c000003e syscall=257 success=no exit=-13 ppid=499 pid=501 "
    "comm=\"cat\" exe=\"/usr/bin/cat\" key=(null)";
constexpr const char* kFreed = "audit(1.1:11): domain=aaa status=deallocated denials=1";

TEST(LandlockRecords, TheRunsDenialWithTheProcessThatMadeIt) {
  LandlockRecords r;
  r.SetCreator(500);
  r.Feed(kAuditLandlockAccess, kAccess);
  r.Feed(kAuditLandlockDomain, kAllocated);
  r.Feed(kAuditSyscall, kSyscall);
  EXPECT_FALSE(r.Deallocated());
  r.Feed(kAuditLandlockDomain, kFreed);
  EXPECT_TRUE(r.Deallocated());
  LandlockAccount a = r.Account();
  ASSERT_EQ(a.denials.size(), 1u);
  const LandlockDenial& d = a.denials[0];
  EXPECT_EQ(d.blockers, "fs.read_file");
  ASSERT_EQ(d.object.size(), 3u);
  EXPECT_EQ(d.object[0].first, "path");
  EXPECT_EQ(d.object[0].second, "/root/.bashrc");
  EXPECT_EQ(d.pid, 501);
  EXPECT_EQ(d.comm, "cat");
  EXPECT_EQ(d.exe, "/usr/bin/cat");
  EXPECT_EQ(d.syscall, "257");
  EXPECT_EQ(a.kernel_denials, 1u);
  EXPECT_FALSE(a.ambiguous);
}

// The tool may deny before cordon knows its pid: the records are held.
TEST(LandlockRecords, TheCreatorMayBeNamedAfterTheRecords) {
  LandlockRecords r;
  r.Feed(kAuditLandlockAccess, kAccess);
  r.Feed(kAuditLandlockDomain, kAllocated);
  r.SetCreator(500);
  EXPECT_EQ(r.Account().denials.size(), 1u);
}

TEST(LandlockRecords, AnotherDomainsDenialsAreNotTheRuns) {
  LandlockRecords r;
  r.SetCreator(777);
  r.Feed(kAuditLandlockAccess, kAccess);
  r.Feed(kAuditLandlockDomain, kAllocated);
  r.Feed(kAuditLandlockAccess, "audit(1.1:12): domain=aaa blockers=fs.write_file path=\"/x\"");
  EXPECT_TRUE(r.Account().denials.empty());
  // Its freeing is not the run's either.
  r.Feed(kAuditLandlockDomain, kFreed);
  EXPECT_FALSE(r.Account().kernel_denials.has_value());
}

// A domain first seen before the reader started never names its creator:
// its records are never the run's.
TEST(LandlockRecords, AnUnnamedDomainIsNeverTheRuns) {
  LandlockRecords r;
  r.SetCreator(500);
  r.Feed(kAuditLandlockAccess, kAccess);
  EXPECT_TRUE(r.Account().denials.empty());
  EXPECT_TRUE(r.Deallocated()) << "nothing of the run's to wait for";
}

// A reused pid: two domains name the same creator. Neither is attached.
TEST(LandlockRecords, TwoDomainsForOneCreatorAttachNone) {
  LandlockRecords r;
  r.SetCreator(500);
  r.Feed(kAuditLandlockAccess, kAccess);
  r.Feed(kAuditLandlockDomain, kAllocated);
  r.Feed(kAuditLandlockAccess, "audit(1.1:20): domain=bbb blockers=fs.read_file path=\"/y\"");
  r.Feed(kAuditLandlockDomain, "audit(1.1:20): domain=bbb status=allocated pid=500");
  LandlockAccount a = r.Account();
  EXPECT_TRUE(a.ambiguous);
  EXPECT_TRUE(a.denials.empty());
}

TEST(LandlockRecords, PastTheBoundDenialsAreCountedNotKept) {
  LandlockRecords r(2);
  r.SetCreator(500);
  r.Feed(kAuditLandlockAccess, kAccess);
  r.Feed(kAuditLandlockDomain, kAllocated);
  for (int i = 0; i < 3; ++i) {
    r.Feed(kAuditLandlockAccess,
           "audit(1.1:3" + std::to_string(i) + "): domain=aaa blockers=fs.read_file path=\"/z\"");
  }
  LandlockAccount a = r.Account();
  EXPECT_EQ(a.denials.size(), 2u);
  EXPECT_EQ(a.dropped, 2u);
}

TEST(LandlockRecords, TheEndMarkerIsSeenOnlyAsSent) {
  LandlockRecords r;
  const std::string marker = LandlockMarker("RUN1");
  EXPECT_FALSE(r.SawMarker(marker));
  r.Feed(kAuditUser, "audit(1.1:40): pid=1 uid=0 msg='" + LandlockMarker("RUN2") + "'");
  EXPECT_FALSE(r.SawMarker(marker));
  r.Feed(kAuditUser, "audit(1.1:41): pid=1 uid=0 msg='" + marker + "'");
  EXPECT_TRUE(r.SawMarker(marker));
}

// Records of other types, and text that does not parse, change nothing.
TEST(LandlockRecords, OtherRecordsAreIgnored) {
  LandlockRecords r;
  r.SetCreator(500);
  r.Feed(1400 /*AVC*/, kAccess);
  r.Feed(kAuditLandlockAccess, "garbage");
  r.Feed(kAuditLandlockDomain, "audit(1.1:10): domain=aaa status=allocated pid=notanumber");
  EXPECT_TRUE(r.Account().denials.empty());
}

}  // namespace
}  // namespace cordon::policy
