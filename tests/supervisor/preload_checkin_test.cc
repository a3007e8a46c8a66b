// Which exec'd images checked in with the preload: the ledger keyed by pid
// and exec generation, the check-in record's decoding, and the doctor's
// probe on a real dynamic and a real static binary.
#include "supervisor/preload_checkin.h"

#include <gtest/gtest.h>

#include <cstring>

#include "preload/wire.h"
#include "supervisor/preload_setup.h"

namespace cordon::supervisor {
namespace {

TEST(PreloadCheckins, EachExecOfAPidIsAnImageOfItsOwn) {
  PreloadCheckins c;
  c.Exec(10, "/bin/sh");
  EXPECT_TRUE(c.CheckIn(10));
  c.Exec(10, "/static/tool");  // sh execs a static binary: no check-in
  c.Exec(11, "/usr/bin/cat");
  EXPECT_TRUE(c.CheckIn(11));
  auto images = c.Images();
  ASSERT_EQ(images.size(), 3u);
  EXPECT_TRUE(images[0].checked_in);
  EXPECT_EQ(images[0].generation, 1u);
  EXPECT_FALSE(images[1].checked_in) << "the static image ran without the preload";
  EXPECT_EQ(images[1].generation, 2u);
  EXPECT_EQ(images[1].path, "/static/tool");
  EXPECT_TRUE(images[2].checked_in);
  EXPECT_EQ(c.unmatched(), 0u);
}

// A second record for one image (a tool repeating or faking it) is not
// taken for another image, and a pid never seen to exec marks nothing.
TEST(PreloadCheckins, ExtraCheckInsMarkNothing) {
  PreloadCheckins c;
  c.Exec(10, "/static/tool");
  c.Exec(20, "/bin/sh");
  EXPECT_TRUE(c.CheckIn(20));
  EXPECT_FALSE(c.CheckIn(20));
  EXPECT_FALSE(c.CheckIn(99));
  auto images = c.Images();
  EXPECT_FALSE(images[0].checked_in);
  EXPECT_TRUE(images[1].checked_in);
  EXPECT_EQ(c.unmatched(), 2u);
}

TEST(PreloadCheckins, TheRecordIsDecodedAndNotCountedAsACall) {
  wire::Report r{};
  r.magic = wire::kReportMagic;
  r.version = wire::kReportVersion;
  r.call = static_cast<uint16_t>(wire::Call::kCheckIn);
  r.pid = 42;
  std::strcpy(r.path, "/usr/bin/cat");
  int32_t pid = 0;
  ASSERT_TRUE(CheckInPid(&r, sizeof r, &pid));
  EXPECT_EQ(pid, 42);
  EXPECT_FALSE(CheckInPid(&r, sizeof r - 1, &pid)) << "malformed";
  std::string line;
  ASSERT_TRUE(DecodeReport(&r, sizeof r, &line));
  EXPECT_NE(line.find("pid 42 checked in as /usr/bin/cat"), std::string::npos) << line;
  ReportTally t;
  EXPECT_TRUE(t.Add(&r, sizeof r));
  EXPECT_EQ(t.received(), 0u);
  EXPECT_EQ(t.checkins(), 1u);
  r.call = static_cast<uint16_t>(wire::Call::kOpen);
  EXPECT_FALSE(CheckInPid(&r, sizeof r, &pid));
}

// `cordon doctor`'s probe: the dynamic probe checks in, the static one
// cannot take the preload at all.
TEST(ProbePreloadCheckIn, DynamicChecksInStaticCannot) {
  std::string why;
  EXPECT_TRUE(ProbePreloadCheckIn(PROBE_DYNAMIC, &why)) << why;
  EXPECT_FALSE(ProbePreloadCheckIn(PROBE_STATIC, &why));
  EXPECT_NE(why.find("statically linked"), std::string::npos) << why;
}

}  // namespace
}  // namespace cordon::supervisor
