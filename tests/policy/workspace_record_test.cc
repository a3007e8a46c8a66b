// The ownership record's canonical form and integrity, owner digests,
// session ids, and the policy digest a restored session must match.
#include "policy/workspace_record.h"

#include <gtest/gtest.h>

#include "policy/policy_digest.h"

namespace cordon::policy {
namespace {

WorkspaceRecord Sample() { return {"session-1", 1000, 1700000000, std::string(64, 'a')}; }

TEST(WorkspaceRecord, RoundTrips) {
  Result<WorkspaceRecord> r = ParseRecord(SerializeRecord(Sample()));
  ASSERT_TRUE(r.ok()) << Describe(r.error());
  EXPECT_EQ(r->session, "session-1");
  EXPECT_EQ(r->owner_uid, 1000u);
  EXPECT_EQ(r->created, 1700000000);
  EXPECT_EQ(r->policy_digest, std::string(64, 'a'));
}

TEST(WorkspaceRecord, AnyEditedFieldFailsTheIntegrityCheck) {
  const std::string good = SerializeRecord(Sample());
  for (auto [from, to] : std::vector<std::pair<std::string, std::string>>{
           {"\"session\":\"session-1\"", "\"session\":\"session-2\""},
           {"\"owner_uid\":1000", "\"owner_uid\":1001"},
           {"\"created\":1700000000", "\"created\":1700000001"},
           {"\"policy_digest\":\"aaaa", "\"policy_digest\":\"baaa"},
           {"\"integrity\":\"", "\"integrity\":\"0"}}) {
    SCOPED_TRACE(from);
    std::string bad = good;
    size_t at = bad.find(from);
    ASSERT_NE(at, std::string::npos);
    bad.replace(at, from.size(), to);
    Result<WorkspaceRecord> r = ParseRecord(bad);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().err, EBADMSG);
  }
}

TEST(WorkspaceRecord, RefusesMalformedRecords) {
  for (const char* text : {"", "[]", "{}", "not json",
                           R"({"version":2,"session":"a","owner_uid":0,"created":0,"policy_digest":"","integrity":""})",
                           R"({"version":1,"session":"a","owner_uid":-1,"created":0,"policy_digest":"","integrity":""})"}) {
    SCOPED_TRACE(text);
    EXPECT_FALSE(ParseRecord(text).ok());
  }
  std::string extra = SerializeRecord(Sample());
  extra.insert(1, "\"extra\":1,");
  EXPECT_FALSE(ParseRecord(extra).ok());
}

TEST(WorkspaceRecord, OwnerDigestSeparatesOwnersAndSessions) {
  EXPECT_EQ(OwnerDigest(1000, "a").size(), 64u);
  EXPECT_EQ(OwnerDigest(1000, "a"), OwnerDigest(1000, "a"));
  EXPECT_NE(OwnerDigest(1000, "a"), OwnerDigest(1001, "a"));
  EXPECT_NE(OwnerDigest(1000, "a"), OwnerDigest(1000, "b"));
  EXPECT_NE(OwnerDigest(1, "00"), OwnerDigest(10, "0"));
}

TEST(WorkspaceRecord, SessionIds) {
  for (const char* ok : {"a", "A-1", "host:7@x.y_z", "0123456789"}) EXPECT_TRUE(ValidSessionId(ok)) << ok;
  for (std::string bad : {std::string(), std::string("a/b"), std::string("a b"),
                          std::string("a\n"), std::string("\xff"), std::string(129, 'a')}) {
    EXPECT_FALSE(ValidSessionId(bad)) << bad;
  }
  EXPECT_TRUE(ValidSessionId(std::string(128, 'a')));
}

TEST(PolicyDigest, ChangesWithWhatThePolicyGrantsOnly) {
  Policy p;
  p.workspace = "/w";
  const std::string base = PolicyDigest(p);
  EXPECT_EQ(base.size(), 64u);
  Policy q = p;
  q.profile_reason = "another reason";
  q.dropped.push_back({"/missing", "No such file"});
  EXPECT_EQ(PolicyDigest(q), base) << "explanations are not grants";
  q = p;
  q.profile = Profile::kWorkspaceWrite;
  EXPECT_NE(PolicyDigest(q), base);
  q = p;
  q.workspace = "/v";
  EXPECT_NE(PolicyDigest(q), base);
  q = p;
  q.paths.push_back(PathRule::ReadOnly("/opt"));
  EXPECT_NE(PolicyDigest(q), base);
  Policy r = q;
  r.paths[0].access = Access::kReadWrite;
  EXPECT_NE(PolicyDigest(r), PolicyDigest(q));
  q = p;
  q.network = Network::kAllow;
  EXPECT_NE(PolicyDigest(q), base);
  q = p;
  q.limits.max_delete_bytes = 1;
  EXPECT_NE(PolicyDigest(q), base);
  // The decisions, not only the paths: each of these weakens or changes
  // what a restored session would get.
  q = p;
  q.sensitive_delete = SensitiveDelete::kAllow;
  EXPECT_NE(PolicyDigest(q), base);
  q = p;
  q.links = LinkMode::kKernel;
  EXPECT_NE(PolicyDigest(q), base);
  q = p;
  q.protected_patterns.clear();
  EXPECT_NE(PolicyDigest(q), base);
  q = p;
  q.allow_bypass = true;
  EXPECT_NE(PolicyDigest(q), base);
  q = p;
  q.tools.push_back({});
  q.tools.back().name = "rg";
  q.tools.back().path = "/usr/bin/rg";
  EXPECT_NE(PolicyDigest(q), base);
  Policy pinned = q;
  pinned.tools.back().identity.size = 4242;
  EXPECT_EQ(PolicyDigest(pinned), PolicyDigest(q)) << "a binary's identity is checked at exec";
  q = p;
  q.protected_paths.push_back("/w/.git");
  EXPECT_EQ(PolicyDigest(q), base) << "what the workspace holds is not the policy";
  q = p;
  q.workspace = "/w\xff";
  Policy q2 = p;
  q2.workspace = "/w\xfe";
  EXPECT_NE(PolicyDigest(q), PolicyDigest(q2)) << "non-UTF-8 paths stay distinct";
}

// The digest's bytes are what every managed workspace recorded: a policy
// that did not change must keep its digest whatever the code that writes it
// (a restored session with another digest is refused). Pinned for a policy
// with each kind of field, a non-UTF-8 path and a pinned tool.
TEST(PolicyDigest, BytesAreStable) {
  Policy p;
  p.profile = Profile::kWorkspaceWrite;
  p.workspace = "/w";
  p.paths = {PathRule::ReadOnly("/opt"), PathRule::ReadWrite("/var/out"),
             PathRule::Denied("/w/.env"), PathRule::ReadOnlyNoExec("/data/\xff")};
  p.paths[0].source = "--ro";  // explanations are not in the digest
  p.base_paths = {PathRule::ReadOnlyNoExec("/home/u/.gitconfig")};
  p.tools.push_back({"rg", "/usr/bin/rg", {}, {}, "/tools/0"});
  p.links = LinkMode::kKernel;
  p.sensitive_delete = SensitiveDelete::kAsk;
  p.protected_patterns = {".git/config", ".envrc"};
  EXPECT_EQ(CanonicalPolicyJson(p), R"({"allow_bypass":false,"limits":{"max_delete_bytes":20971520,"max_tree_depth":64,)"
            R"("max_tree_entries":10000},"links":"kernel","network":"none","paths":[)"
            R"({"access":"read-only","exec":true,"path":"/opt"},)"
            R"({"access":"read-write","exec":true,"path":"/var/out"},)"
            R"({"access":"denied","exec":false,"path":"/w/.env"},)"
            R"({"access":"read-only","exec":false,"path":"hex:2f646174612fff"}],)"
            R"("private_tmp":true,"profile":"workspace-write",)"
            R"("protected_patterns":[".git/config",".envrc"],"sandbox_enabled":true,)"
            R"("sensitive_delete":"ask","tools":[{"name":"rg","path":"/usr/bin/rg"}],)"
            R"("workspace":"/w"})");
  EXPECT_EQ(PolicyDigest(p), "173c2eb39401c968297ef954eab002d2c1d6bc42d2390856566eb7ac2a1c5de8");
}

}  // namespace
}  // namespace cordon::policy
