// The audit log's hash chain: intact logs verify; any single edited byte,
// a removed record, two swapped records or a truncated last record are
// named by line.
#include "supervisor/audit/audit_log.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "tests/support/test_env.h"

namespace cordon::supervisor {
namespace {

using namespace cordon::policy;  // the request, preview and record formats

using cordon::testing::ReadFile;
using cordon::testing::ScratchTree;
using cordon::testing::WriteFile;

std::vector<std::string> Lines(const std::string& s) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos < s.size()) {
    size_t nl = s.find('\n', pos);
    out.push_back(s.substr(pos, nl - pos + 1));
    pos = nl + 1;
  }
  return out;
}

std::string Join(const std::vector<std::string>& lines) {
  std::string s;
  for (const auto& l : lines) s += l;
  return s;
}

// A small real log: header plus three records, written through AuditLog.
std::string MakeLog(const std::string& path) {
  auto log = AuditLog::Open(path);
  EXPECT_TRUE(log.ok()) << Describe(log.error());
  Policy p;
  p.workspace = "/w";
  EXPECT_TRUE(log.value()->Append("header", SessionHeader(p, "landlock+notify", {"rm", "x"})).ok());
  EXPECT_TRUE(log.value()->Append("decision", {{"op", "unlink"}, {"path", "a"}}).ok());
  EXPECT_TRUE(log.value()->Append("hint", {{"op", "open"}, {"path", "b"}}).ok());
  EXPECT_TRUE(log.value()->Append("approval", {{"event", "outcome"}, {"outcome", "denied"}}).ok());
  EXPECT_TRUE(log.value()->Close().ok());
  return ReadFile(path);
}

TEST(AuditLog, UntouchedLogVerifies) {
  ScratchTree t;
  std::string bytes = MakeLog(t.Ws("audit.jsonl"));
  auto r = VerifyAuditLog(t.Ws("audit.jsonl"));
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->intact) << r->why;
  EXPECT_EQ(r->records, 4u);
  auto header = nlohmann::json::parse(Lines(bytes)[0]);
  EXPECT_EQ(header["kind"], "header");
  EXPECT_EQ(header["seq"], 1);
  EXPECT_EQ(header["prev"], std::string(64, '0'));
  EXPECT_EQ(header["cordon_version"], CORDON_VERSION);
  EXPECT_EQ(header["rung"], "landlock+notify");
  EXPECT_EQ(header["argv"], nlohmann::json({"rm", "x"}));
  EXPECT_EQ(header["policy"]["workspace"], "/w");
  EXPECT_EQ(header["profile"], "read-only");
  EXPECT_FALSE(header["profile_reason"].get<std::string>().empty());
}

TEST(AuditLog, EveryEditedByteNamesItsRecord) {
  ScratchTree t;
  std::string bytes = MakeLog(t.Ws("audit.jsonl"));
  std::vector<std::string> lines = Lines(bytes);
  size_t line_no = 1, in_line = 0;
  for (size_t i = 0; i < bytes.size(); ++i) {
    for (unsigned char delta : {1, 0x20, 0x80}) {
      std::string edited = bytes;
      edited[i] = static_cast<char>(static_cast<unsigned char>(edited[i]) ^ delta);
      VerifyReport r = VerifyAuditBytes(edited);
      ASSERT_FALSE(r.intact) << "byte " << i << " ^ " << int{delta} << " went unnoticed";
      EXPECT_EQ(r.broken_line, line_no) << "byte " << i << " ^ " << int{delta} << ": " << r.why;
    }
    if (++in_line == lines[line_no - 1].size()) {
      ++line_no;
      in_line = 0;
    }
  }
}

TEST(AuditLog, RemovedSwappedAndTruncatedRecordsAreNamed) {
  ScratchTree t;
  std::vector<std::string> lines = Lines(MakeLog(t.Ws("audit.jsonl")));
  for (size_t k = 0; k < lines.size(); ++k) {
    auto removed = lines;
    removed.erase(removed.begin() + static_cast<long>(k));
    VerifyReport r = VerifyAuditBytes(Join(removed));
    if (k + 1 == lines.size()) {
      // A log is verified up to its end: dropping the last record leaves a
      // shorter valid log (the "end" record and fsync on close cover that).
      EXPECT_TRUE(r.intact);
      continue;
    }
    EXPECT_FALSE(r.intact) << "removing record " << k + 1;
    EXPECT_EQ(r.broken_line, k + 1) << r.why;
  }
  for (size_t k = 0; k + 1 < lines.size(); ++k) {
    auto swapped = lines;
    std::swap(swapped[k], swapped[k + 1]);
    VerifyReport r = VerifyAuditBytes(Join(swapped));
    EXPECT_FALSE(r.intact) << "swapping records " << k + 1 << " and " << k + 2;
    EXPECT_EQ(r.broken_line, k + 1) << r.why;
  }
  std::string all = Join(lines);
  for (size_t cut = 1; cut < lines.back().size(); ++cut) {
    VerifyReport r = VerifyAuditBytes(all.substr(0, all.size() - cut));
    EXPECT_FALSE(r.intact) << "cut " << cut;
    EXPECT_EQ(r.broken_line, lines.size()) << r.why;
  }
}

TEST(AuditLog, EmptyOrHeaderlessLogIsBroken) {
  EXPECT_FALSE(VerifyAuditBytes("").intact);
  ScratchTree t;
  auto log = AuditLog::Open(t.Ws("a.jsonl"));
  ASSERT_TRUE(log.ok());
  ASSERT_TRUE(log.value()->Append("decision", {{"op", "x"}}).ok());
  ASSERT_TRUE(log.value()->Close().ok());
  VerifyReport r = VerifyAuditBytes(ReadFile(t.Ws("a.jsonl")));
  EXPECT_FALSE(r.intact);
  EXPECT_EQ(r.broken_line, 1u);
}

TEST(AuditLog, ReopeningContinuesTheChainButRefusesATamperedLog) {
  ScratchTree t;
  std::string path = t.Ws("audit.jsonl");
  MakeLog(path);
  {
    auto log = AuditLog::Open(path);
    ASSERT_TRUE(log.ok());
    ASSERT_TRUE(log.value()->Append("header", {{"session", 2}}).ok());
  }
  auto r = VerifyAuditLog(path);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->intact) << r->why;
  EXPECT_EQ(r->records, 5u);

  std::string bytes = ReadFile(path);
  bytes[bytes.find("unlink")] = 'U';
  WriteFile(path, bytes);
  auto again = AuditLog::Open(path);
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.error().err, EBADMSG);
  EXPECT_EQ(ReadFile(path), bytes) << "a tampered log is not extended";
}

TEST(AuditLog, ReservedFieldsAndClosedLogAreRefused) {
  ScratchTree t;
  auto log = AuditLog::Open(t.Ws("a.jsonl"));
  ASSERT_TRUE(log.ok());
  EXPECT_EQ(log.value()->Append("header", {{"prev", "x"}}).error().err, EINVAL);
  EXPECT_EQ(log.value()->Append("header", {{"hash", "x"}}).error().err, EINVAL);
  EXPECT_TRUE(log.value()->Append("header", {{"ok", true}}).ok());
  ASSERT_TRUE(log.value()->Close().ok());
  EXPECT_EQ(log.value()->Append("decision", {}).error().err, EBADF);
  EXPECT_TRUE(VerifyAuditBytes(ReadFile(t.Ws("a.jsonl"))).intact);
}

TEST(AuditLog, NonUtf8FieldsStillVerify) {
  ScratchTree t;
  auto log = AuditLog::Open(t.Ws("a.jsonl"));
  ASSERT_TRUE(log.ok());
  ASSERT_TRUE(log.value()->Append("header", {{"path", std::string("bad\xff\xfe name")}}).ok());
  ASSERT_TRUE(log.value()->Close().ok());
  EXPECT_TRUE(VerifyAuditBytes(ReadFile(t.Ws("a.jsonl"))).intact);
}

TEST(AuditLog, ConcurrentAppendsKeepOneChain) {
  ScratchTree t;
  auto log = AuditLog::Open(t.Ws("a.jsonl"));
  ASSERT_TRUE(log.ok());
  ASSERT_TRUE(log.value()->Append("header", {}).ok());
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&log, i] {
      for (int j = 0; j < 50; ++j) {
        ASSERT_TRUE(log.value()->Append("decision", {{"thread", i}, {"n", j}}).ok());
      }
    });
  }
  for (auto& th : threads) th.join();
  ASSERT_TRUE(log.value()->Close().ok());
  VerifyReport r = VerifyAuditBytes(ReadFile(t.Ws("a.jsonl")));
  EXPECT_TRUE(r.intact) << r.why;
  EXPECT_EQ(r.records, 401u);
}

}  // namespace
}  // namespace cordon::supervisor
