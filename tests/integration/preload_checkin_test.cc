// The preload's check-in under the real `cordon run`: every exec the
// supervisor sees is one image, and each image whose preload did not check
// in (a static binary, a program started with LD_PRELOAD cleared) is named
// at --log-level info and in the audit log (`preload: absent`), while the
// kernel layers still hold for it. The honest neighbour, a dynamic program
// that took the preload, is not named.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <sys/stat.h>

#include <sstream>
#include <string>
#include <vector>

#include "tests/support/test_env.h"

namespace cordon::testing {
namespace {

class PreloadCheckIn : public ::testing::Test {
 protected:
  void SetUp() override { WriteFile(t_.Out("secret.txt"), "needle secret\n"); }

  // cordon [--log-level LEVEL] run --workspace ws --ro probes [--audit LOG] -- CMD...
  RunResult Run(const std::vector<std::string>& cmd, const std::string& level, bool audit) {
    std::vector<std::string> args;
    if (!level.empty()) args.insert(args.end(), {"--log-level", level});
    args.insert(args.end(), {"run", "--workspace", t_.ws(), "--ro", ProbeDir(), "--profile",
                             "workspace-write"});
    if (audit) args.insert(args.end(), {"--audit", log_});
    args.push_back("--");
    args.insert(args.end(), cmd.begin(), cmd.end());
    return RunCordon(args);
  }

  // The audit log's `preload` records.
  std::vector<nlohmann::json> PreloadRecords() {
    std::vector<nlohmann::json> out;
    std::istringstream in(ReadFile(log_));
    for (std::string line; std::getline(in, line);) {
      auto j = nlohmann::json::parse(line, nullptr, false);
      if (!j.is_discarded() && j.value("kind", "") == "preload") out.push_back(std::move(j));
    }
    return out;
  }
  static int AbsentFor(const std::vector<nlohmann::json>& records, const std::string& path) {
    int n = 0;
    for (const auto& j : records) {
      n += j.value("preload", "") == "absent" && j.value("path", "") == path;
    }
    return n;
  }
  static bool Has(const std::string& hay, const std::string& needle) {
    return hay.find(needle) != std::string::npos;
  }
  static std::string WithoutLine(const std::string& path) {
    return "ran without the preload: " + path + " (pid ";
  }

  ScratchTree t_;
  std::string log_ = t_.Out("audit.jsonl");
};

// A dynamic shell starts the static probe, which tries to write outside,
// and the dynamic probe, which writes inside.
TEST_F(PreloadCheckIn, TheStaticImageIsNamedTheDynamicOneIsNot) {
  const std::string script = std::string(PROBE_STATIC) + " write " + t_.Out("secret.txt") +
                             "; " + PROBE_DYNAMIC + " write " + t_.Ws("plain.txt") + "; true";
  RunResult r = Run({"/bin/sh", "-c", script}, "info", true);
  EXPECT_EQ(r.status, 0) << r.err;
  // The kernel held for the image without the preload; the neighbour wrote.
  EXPECT_EQ(ReadFile(t_.Out("secret.txt")), "needle secret\n");
  struct stat st;
  EXPECT_EQ(::stat(t_.Ws("plain.txt").c_str(), &st), 0) << r.err;
  EXPECT_TRUE(Has(r.err, WithoutLine(PROBE_STATIC))) << r.err;
  EXPECT_TRUE(Has(r.err, "the kernel layers still held")) << r.err;
  EXPECT_FALSE(Has(r.err, WithoutLine(PROBE_DYNAMIC))) << r.err;
  EXPECT_FALSE(Has(r.err, "ran without the preload: /bin/sh")) << r.err;
  EXPECT_FALSE(Has(r.err, "ran without the preload: /usr/bin/sh")) << r.err;
  EXPECT_TRUE(Has(r.err, "exec'd images checked in, 1 ran without it")) << r.err;

  auto records = PreloadRecords();
  EXPECT_EQ(AbsentFor(records, PROBE_STATIC), 1) << ReadFile(log_);
  EXPECT_EQ(AbsentFor(records, PROBE_DYNAMIC), 0) << ReadFile(log_);
  int summaries = 0;
  for (const auto& j : records) {
    if (j.value("preload", "") != "summary") continue;
    ++summaries;
    EXPECT_EQ(j.value("absent", -1), 1) << j.dump();
    EXPECT_GE(j.value("checked_in", 0), 2) << "the shell and the dynamic probe: " << j.dump();
  }
  EXPECT_EQ(summaries, 1) << ReadFile(log_);
  EXPECT_EQ(RunCordon({"audit", "verify", log_}).status, 0);
}

// A program that clears LD_PRELOAD for what it starts: the dynamic probe
// runs without the preload, is named, and is still fenced by the kernel.
TEST_F(PreloadCheckIn, AChildStartedWithoutLdPreloadIsNamed) {
  RunResult r = Run({"/bin/sh", "-c",
                     std::string("/usr/bin/env -u LD_PRELOAD ") + PROBE_DYNAMIC + " write " +
                         t_.Out("secret.txt") + "; true"},
                    "info", true);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(ReadFile(t_.Out("secret.txt")), "needle secret\n");
  EXPECT_TRUE(Has(r.err, WithoutLine(PROBE_DYNAMIC))) << r.err;
  EXPECT_FALSE(Has(r.err, "ran without the preload: /usr/bin/env")) << "env took it: " << r.err;
  EXPECT_EQ(AbsentFor(PreloadRecords(), PROBE_DYNAMIC), 1) << ReadFile(log_);
}

// execvp tries each PATH entry: the names that are no executable file fail
// and start no image, so they are not counted; the exec that runs is.
TEST_F(PreloadCheckIn, FailedExecsOfAPathSearchAreNoImages) {
  const std::string name = std::string(PROBE_STATIC).substr(ProbeDir().size() + 1);
  RunResult r = Run({"/bin/sh", "-c",
                     "PATH=/nonexistent-a:/nonexistent-b:" + ProbeDir() + " /usr/bin/env " + name +
                         " write " + t_.Ws("s.txt") + "; nosuchcommand; true"},
                    "info", false);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(Has(r.err, WithoutLine(PROBE_STATIC))) << r.err;
  EXPECT_TRUE(Has(r.err, "exec'd images checked in, 1 ran without it")) << r.err;
  EXPECT_FALSE(Has(r.err, "nonexistent")) << r.err;
}

// Every image checked in: nothing is named, and the summary says so.
TEST_F(PreloadCheckIn, DynamicImagesAloneNameNothing) {
  RunResult r = Run({"/bin/sh", "-c", std::string(PROBE_DYNAMIC) + " write " + t_.Ws("a.txt") +
                                          "; " + PROBE_DYNAMIC + " write " + t_.Ws("b.txt")},
                    "info", false);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_FALSE(Has(r.err, "ran without the preload")) << r.err;
  EXPECT_TRUE(Has(r.err, "exec'd images checked in, 0 ran without it")) << r.err;
}

// A static tool takes no preload at all: the audit log says so for it, and
// the kernel holds.
TEST_F(PreloadCheckIn, AStaticToolIsRecordedAsAbsent) {
  RunResult r = Run({PROBE_STATIC, "write", t_.Out("secret.txt")}, "", true);
  EXPECT_NE(r.status, 0);
  EXPECT_EQ(ReadFile(t_.Out("secret.txt")), "needle secret\n");
  auto records = PreloadRecords();
  ASSERT_EQ(AbsentFor(records, PROBE_STATIC), 1) << ReadFile(log_);
  for (const auto& j : records) {
    if (j.value("path", "") == PROBE_STATIC) {
      EXPECT_TRUE(Has(j.value("why", ""), "statically linked")) << j.dump();
    }
  }
}

// Nobody reads the account (no audit log, default level): no line, and the
// tool pays for no check-in (the preload reports refusals alone).
TEST_F(PreloadCheckIn, AQuietRunSaysNothing) {
  RunResult r = Run({"/bin/sh", "-c", std::string(PROBE_STATIC) + " write " + t_.Ws("s.txt")},
                    "", false);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_FALSE(Has(r.err, "ran without the preload")) << r.err;
  EXPECT_FALSE(Has(r.err, "preload check-in")) << r.err;
}

// A tool writing junk on the report channel is counted as malformed and
// changes nothing in the account of the images.
TEST_F(PreloadCheckIn, JunkOnTheChannelChangesNothing) {
  RunResult r = Run({"/bin/bash", "-c",
                     std::string("printf junk >&\"$CORDON_REPORT_FD\"; ") + PROBE_STATIC + " write " +
                         t_.Ws("s.txt") + "; true"},
                    "info", true);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(Has(r.err, "1 malformed")) << r.err;
  EXPECT_TRUE(Has(r.err, WithoutLine(PROBE_STATIC))) << r.err;
  EXPECT_TRUE(Has(r.err, "exec'd images checked in, 1 ran without it")) << r.err;
}

// `cordon doctor` starts a dynamic program with the preload and says whether
// it checked in, and that static binaries run without it.
TEST(PreloadDoctor, SaysThePreloadChecksInAndStaticBinariesGoWithout) {
  RunResult r = RunCordon({"doctor"});
  EXPECT_NE(r.out.find("  check-in             yes ("), std::string::npos) << r.out << r.err;
  EXPECT_NE(r.out.find("static and musl binaries run without it"), std::string::npos) << r.out;
  r = RunCordon({"doctor", "--json"});
  auto j = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.out;
  EXPECT_EQ(j.value("preload_checks_in", false), true) << r.out;
}

}  // namespace
}  // namespace cordon::testing
