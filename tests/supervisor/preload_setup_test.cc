// cordon's side of the preload: the ELF loader check on real binaries, the
// environment it builds, and the report decoding and tally.
#include "supervisor/preload_setup.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstring>

#include "preload/wire.h"
#include "tests/support/test_env.h"

namespace cordon::supervisor {
namespace {

using cordon::testing::ScratchTree;
using cordon::testing::WriteFile;

TEST(UsesGlibcLoader, DynamicProbeYesStaticProbeNo) {
  std::string why;
  EXPECT_TRUE(UsesGlibcLoader(PROBE_DYNAMIC, &why)) << why;
  EXPECT_FALSE(UsesGlibcLoader(PROBE_STATIC, &why));
  EXPECT_NE(why.find("statically linked"), std::string::npos) << why;
  EXPECT_TRUE(UsesGlibcLoader("/bin/sh", &why)) << why;
}

TEST(UsesGlibcLoader, ScriptsAreJudgedByTheirInterpreter) {
  ScratchTree t;
  WriteFile(t.Ws("dyn.sh"), "#!/bin/sh\necho hi\n");
  WriteFile(t.Ws("static.sh"), std::string("#! ") + PROBE_STATIC + " exit 0\n");
  WriteFile(t.Ws("loop.sh"), "#!" + t.Ws("loop.sh") + "\n");
  std::string why;
  EXPECT_TRUE(UsesGlibcLoader(t.Ws("dyn.sh"), &why)) << why;
  EXPECT_FALSE(UsesGlibcLoader(t.Ws("static.sh"), &why));
  EXPECT_FALSE(UsesGlibcLoader(t.Ws("loop.sh"), &why));
  EXPECT_NE(why.find("too many levels"), std::string::npos) << why;
}

TEST(UsesGlibcLoader, NonElfAndMissingFilesAreNot) {
  ScratchTree t;
  WriteFile(t.Ws("text"), "hello, not an ELF file at all\n");
  WriteFile(t.Ws("short"), "\x7f" "ELF");
  std::string why;
  EXPECT_FALSE(UsesGlibcLoader(t.Ws("text"), &why));
  EXPECT_FALSE(UsesGlibcLoader(t.Ws("short"), &why));
  EXPECT_FALSE(UsesGlibcLoader(t.Ws("missing"), &why));
  EXPECT_NE(why.find("No such file"), std::string::npos) << why;
}

TEST(PreloadEnv, CarriesThePolicyAndStripsCallerSettings) {
  policy::Policy p;
  p.workspace = "/w/ws";
  p.profile = policy::Profile::kWorkspaceWrite;
  p.paths.push_back(policy::PathRule::Denied("/w/ws/secret"));
  PreloadEnv env;
  std::string why;
  ASSERT_TRUE(MakePreloadEnv(p, "/opt/libcordon_preload.so", "/usr/lib/libother.so",
                             {.log_refusals = true, .refused_only = true}, &env, &why))
      << why;
  auto has = [&](const std::string& e) {
    return std::find(env.set.begin(), env.set.end(), e) != env.set.end();
  };
  EXPECT_TRUE(has("LD_PRELOAD=/opt/libcordon_preload.so:/usr/lib/libother.so"));
  EXPECT_TRUE(has("CORDON_PRELOAD_WORKSPACE=/w/ws"));
  EXPECT_TRUE(has("CORDON_PRELOAD_WORKSPACE_MODE=rw"));
  EXPECT_TRUE(has("CORDON_LOG=1"));
  EXPECT_TRUE(has("CORDON_REPORT_MODE=refused"));
  bool deny_listed = false;
  for (const auto& e : env.set) {
    if (e.rfind("CORDON_PRELOAD_DENY=", 0) == 0) deny_listed = e.find("/w/ws/secret") != std::string::npos;
  }
  EXPECT_TRUE(deny_listed);
  std::vector<std::string> tool_env = {"PATH=/usr/bin", "CORDON_PRELOAD_WORKSPACE=/", "CORDON_LOG=0",
                                       "LD_PRELOAD=/evil.so", "CORDON_REPORT_FD=3"};
  ApplyPreloadEnv(&tool_env, env.set);
  for (const auto& e : tool_env) {
    EXPECT_NE(e, "CORDON_PRELOAD_WORKSPACE=/");
    EXPECT_NE(e, "LD_PRELOAD=/evil.so");
    EXPECT_NE(e, "CORDON_LOG=0");
    EXPECT_NE(e, "CORDON_REPORT_FD=3");
  }
  EXPECT_EQ(tool_env[0], "PATH=/usr/bin");

  p.paths.push_back(policy::PathRule::ReadOnly("/odd:path"));
  EXPECT_FALSE(MakePreloadEnv(p, "/opt/libcordon_preload.so", "", {}, &env, &why));
  EXPECT_NE(why.find("/odd:path"), std::string::npos) << why;
}

TEST(PreloadLibrary, IsFound) {
  std::string lib = FindPreloadLibrary();
  ASSERT_FALSE(lib.empty());
  struct stat st;
  EXPECT_EQ(::stat(lib.c_str(), &st), 0);
}

wire::Report Record(int pid, uint32_t image, wire::Call call, uint64_t seq, uint64_t dropped) {
  wire::Report r;
  std::memset(&r, 0, sizeof r);
  r.magic = wire::kReportMagic;
  r.version = wire::kReportVersion;
  r.call = static_cast<uint16_t>(call);
  r.pid = pid;
  r.image = image;
  r.seq = seq;
  r.dropped = dropped;
  r.op = 1;
  r.verdict = static_cast<uint8_t>(wire::ReportVerdict::kRefused);
  r.err = EACCES;
  std::strcpy(r.path, "/x/y");
  return r;
}

TEST(ReportDecoding, TextJsonAndMalformed) {
  wire::Report r = Record(42, 1, wire::Call::kOpenat, 7, 0);
  std::string line;
  ASSERT_TRUE(DecodeReport(&r, sizeof r, &line));
  EXPECT_NE(line.find("pid 42"), std::string::npos) << line;
  EXPECT_NE(line.find("openat(\"/x/y\")"), std::string::npos) << line;
  EXPECT_NE(line.find("refused"), std::string::npos) << line;
  nlohmann::json j;
  ASSERT_TRUE(DecodeReportJson(&r, sizeof r, &j));
  line = j.dump();
  EXPECT_NE(line.find("\"trusted\":false"), std::string::npos) << line;
  EXPECT_NE(line.find("\"verdict\":\"refused\""), std::string::npos) << line;
  EXPECT_FALSE(DecodeReport(&r, sizeof r - 1, &line));
  r.magic = 0;
  EXPECT_FALSE(DecodeReport(&r, sizeof r, &line));
}

TEST(ReportTally, DropsExplainMissingRecords) {
  ReportTally t;
  // Process 1 made 5 calls: records 1, 2 and 5 arrived, 3 and 4 were
  // dropped (record 5 says so), and its exit record says 5.
  for (uint64_t seq : {1, 2}) {
    auto r = Record(1, 9, wire::Call::kOpen, seq, 0);
    EXPECT_TRUE(t.Add(&r, sizeof r));
  }
  auto r5 = Record(1, 9, wire::Call::kOpen, 5, 2);
  auto exit1 = Record(1, 9, wire::Call::kExit, 5, 2);
  t.Add(&r5, sizeof r5);
  t.Add(&exit1, sizeof exit1);
  EXPECT_EQ(t.received(), 3u);
  EXPECT_EQ(t.dropped(), 2u);
  EXPECT_EQ(t.unaccounted(), 0u);
  // Process 2 claims 4 calls but only 1 arrived and it admits no drops.
  auto a = Record(2, 9, wire::Call::kOpen, 1, 0);
  auto exit2 = Record(2, 9, wire::Call::kExit, 4, 0);
  t.Add(&a, sizeof a);
  t.Add(&exit2, sizeof exit2);
  EXPECT_EQ(t.unaccounted(), 3u);
  EXPECT_FALSE(t.Add(&a, 3));
  EXPECT_EQ(t.malformed(), 1u);
  EXPECT_NE(t.Summary().find("4 received"), std::string::npos) << t.Summary();
}

}  // namespace
}  // namespace cordon::supervisor
