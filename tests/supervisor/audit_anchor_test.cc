// A run's anchor (issue 27 item 5): the stretch of a log a run wrote,
// kept outside the log, shows what the chain alone cannot: records cut
// from the end, and a log written again whole with fresh hashes.
#include <gtest/gtest.h>

#include "policy/audit_record.h"
#include "policy/run_record.h"
#include "supervisor/audit/audit_log.h"
#include "tests/support/test_env.h"

namespace cordon::supervisor {
namespace {

using cordon::testing::ReadFile;
using cordon::testing::ScratchTree;
using cordon::testing::WriteFile;

// One session of `extra` decisions appended to the log at `path`; its anchor.
policy::AuditAnchor Session(const std::string& path, int extra, const std::string& run) {
  auto log = AuditLog::Open(path);
  EXPECT_TRUE(log.ok()) << Describe(log.error());
  EXPECT_TRUE(log.value()->Append("header", {{"run", run}}).ok());
  for (int i = 0; i < extra; ++i) {
    EXPECT_TRUE(log.value()->Append("decision", {{"n", i}}).ok());
  }
  EXPECT_TRUE(log.value()->Append("end", {{"exit_status", 0}}).ok());
  policy::AuditAnchor a = log.value()->Anchor();
  EXPECT_TRUE(log.value()->Close().ok());
  return a;
}

std::string WithoutLastLine(const std::string& s) {
  size_t cut = s.rfind('\n', s.size() - 2);
  return cut == std::string::npos ? std::string() : s.substr(0, cut + 1);
}

TEST(AuditAnchor, NamesTheRunsOwnStretchOfAContinuedLog) {
  ScratchTree t;
  const std::string path = t.Ws("audit.jsonl");
  policy::AuditAnchor first = Session(path, 2, "A");
  policy::AuditAnchor second = Session(path, 1, "B");
  EXPECT_EQ(first.first_seq, 1u);
  EXPECT_EQ(first.last_seq, 4u);
  EXPECT_EQ(second.first_seq, 5u);
  EXPECT_EQ(second.last_seq, 7u);
  const std::string bytes = ReadFile(path);
  EXPECT_TRUE(policy::VerifyAuditBytes(bytes).intact);
  EXPECT_EQ(policy::CheckAnchor(bytes, first), "");
  EXPECT_EQ(policy::CheckAnchor(bytes, second), "");
}

TEST(AuditAnchor, RecordsCutFromTheEndAreTruncationTheChainCannotSee) {
  ScratchTree t;
  const std::string path = t.Ws("audit.jsonl");
  policy::AuditAnchor a = Session(path, 3, "A");
  std::string bytes = ReadFile(path);
  for (int cut = 1; cut <= 4; ++cut) {
    bytes = WithoutLastLine(bytes);
    ASSERT_TRUE(policy::VerifyAuditBytes(bytes).intact || bytes.empty()) << "a shorter chain holds";
    EXPECT_EQ(policy::CheckAnchor(bytes, a).rfind("truncated: ", 0), 0u) << cut;
  }
}

TEST(AuditAnchor, ALogWrittenAgainWholeIsReplacement) {
  ScratchTree t;
  policy::AuditAnchor a = Session(t.Ws("audit.jsonl"), 2, "A");
  // A forger's log: the same shape and length, a valid chain, other records.
  Session(t.Ws("forged.jsonl"), 2, "A-forged");
  const std::string forged = ReadFile(t.Ws("forged.jsonl"));
  ASSERT_TRUE(policy::VerifyAuditBytes(forged).intact);
  EXPECT_EQ(policy::CheckAnchor(forged, a).rfind("replaced: ", 0), 0u);
  // The original still holds (the neighbour).
  EXPECT_EQ(policy::CheckAnchor(ReadFile(t.Ws("audit.jsonl")), a), "");
}

TEST(AuditAnchor, ParsesOnlyWhatItWrites) {
  policy::AuditAnchor a{3, 9, std::string(64, 'a'), std::string(64, 'b')};
  EXPECT_EQ(policy::ParseAnchor(policy::AnchorJson(a)), a);
  for (const char* bad :
       {R"({"first_seq":0,"last_seq":1,"first_hash":"x","last_hash":"y"})",
        R"({"first_seq":5,"last_seq":4})", R"([])", R"("x")",
        R"({"first_seq":2,"last_seq":1,"first_hash":"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa","last_hash":"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"})",
        R"({"first_seq":-1,"last_seq":1,"first_hash":"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa","last_hash":"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"})"}) {
    EXPECT_FALSE(policy::ParseAnchor(nlohmann::json::parse(bad))) << bad;
  }
}

TEST(RunRecord, RoundTripsAndRefusesWhatItDoesNotKnow) {
  policy::RunRecord r;
  r.meta.id = "20261206T140000Z-42";
  r.meta.workspace = "/home/u/proj\xff";
  r.meta.started_s = 1796000000;
  r.meta.argv = {"git", "checkout", "main"};
  r.audit_path = "/home/u/.local/state/cordon/runs/20261206T140000Z-42/audit.jsonl";
  r.anchor = policy::AuditAnchor{1, 12, std::string(64, 'c'), std::string(64, 'd')};
  r.ended_s = 1796000009;
  r.exit_status = 3;
  r.recoverable = true;
  std::string error;
  auto back = policy::ParseRunRecord(policy::RunRecordJson(r), &error);
  ASSERT_TRUE(back) << error;
  EXPECT_EQ(back->meta.workspace, r.meta.workspace);
  EXPECT_EQ(back->meta.argv, r.meta.argv);
  EXPECT_EQ(back->audit_path, r.audit_path);
  EXPECT_EQ(back->anchor, r.anchor);
  EXPECT_EQ(back->ended_s, r.ended_s);
  EXPECT_EQ(back->exit_status, 3);
  EXPECT_TRUE(back->recoverable);
  // A run still going: no end, no anchor.
  policy::RunRecord going = r;
  going.ended_s.reset();
  going.anchor.reset();
  back = policy::ParseRunRecord(policy::RunRecordJson(going), &error);
  ASSERT_TRUE(back) << error;
  EXPECT_FALSE(back->ended_s);
  EXPECT_FALSE(back->anchor);
  nlohmann::json j = nlohmann::json::parse(policy::RunRecordJson(r));
  for (auto edit : std::vector<std::function<void(nlohmann::json&)>>{
           [](nlohmann::json& x) { x["version"] = 2; },
           [](nlohmann::json& x) { x["audit"] = "relative/log"; },
           [](nlohmann::json& x) { x["audit"] = nullptr; },  // an anchor without a log
           [](nlohmann::json& x) { x["anchor"]["last_hash"] = "short"; },
           [](nlohmann::json& x) { x["meta"]["id"] = "../x"; },
           [](nlohmann::json& x) { x["ended"] = "soon"; },
           [](nlohmann::json& x) { x.erase("recoverable"); }}) {
    nlohmann::json bad = j;
    edit(bad);
    EXPECT_FALSE(policy::ParseRunRecord(bad.dump(), &error)) << bad.dump();
  }
  EXPECT_FALSE(policy::ParseRunRecord("{", &error));
}

TEST(RunRecord, TheRecordsOfOneRunAreReadFromASharedLog) {
  ScratchTree t;
  const std::string path = t.Ws("audit.jsonl");
  {
    auto log = AuditLog::Open(path);
    ASSERT_TRUE(log.ok());
    ASSERT_TRUE(log.value()->Append("header", {{"run", "A"}}).ok());
    ASSERT_TRUE(log.value()->Append("change", {{"change", "created"}, {"path", "/w/a%25"}, {"kept", false}}).ok());
    ASSERT_TRUE(log.value()->Append("end", {{"exit_status", 0}}).ok());
    ASSERT_TRUE(log.value()->Append("header", {{"run", "B"}}).ok());
    ASSERT_TRUE(log.value()->Append("change", {{"change", 7}, {"path", 3}}).ok());  // hand-made: no crash
    ASSERT_TRUE(log.value()->Append("decision", {{"result", "refused"}}).ok());
    ASSERT_TRUE(log.value()->Close().ok());
  }
  auto a = policy::RunRecordsIn(ReadFile(path), "A");
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].change, "created");
  EXPECT_EQ(a[0].path, "/w/a%");
  auto b = policy::RunRecordsIn(ReadFile(path), "B");
  ASSERT_EQ(b.size(), 2u);
  EXPECT_TRUE(b[1].refused);
  EXPECT_TRUE(policy::RunRecordsIn(ReadFile(path), "C").empty());
}

}  // namespace
}  // namespace cordon::supervisor
