// `cordon doctor` tells the truth about this machine: its JSON names the
// rung a run gets here, and whether the kernel's audit subsystem, where
// Landlock ABI 7 logs its own denials, is on, as an independent reader
// (python over NETLINK_AUDIT) sees it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/support/test_env.h"

namespace cordon::testing {
namespace {

// AUDIT_GET from python: "on", "off" or "unavailable".
std::string AuditStateFromPython() {
  const char* script =
      "import socket,struct\n"
      "try:\n"
      "  s=socket.socket(socket.AF_NETLINK,socket.SOCK_RAW,9); s.settimeout(1)\n"
      "  s.send(struct.pack('=LHHLL',16,1000,1,1,0))\n"
      "  for _ in range(4):\n"
      "    d=s.recv(8192); t=struct.unpack('=H',d[4:6])[0]\n"
      "    if t==2 and struct.unpack('=i',d[16:20])[0]!=0: print('unavailable'); break\n"
      "    if t==1000: print('on' if struct.unpack('=L',d[20:24])[0] else 'off'); break\n"
      "except OSError: print('unavailable')\n";
  FILE* p = ::popen(("python3 - <<'EOF'\n" + std::string(script) + "EOF\n").c_str(), "r");
  if (p == nullptr) return "popen failed";
  char buf[64] = {};
  std::string out = std::fgets(buf, sizeof buf, p) ? buf : "";
  ::pclose(p);
  while (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

TEST(Doctor, JsonNamesTheRungAndTheKernelAuditAsTheKernelSaysIt) {
  RunResult r = RunCordon({"doctor", "--json"});
  ASSERT_EQ(r.status, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.out;
  EXPECT_EQ(j["rung"], "landlock+notify");
  ASSERT_GE(j["landlock_abi"].get<int>(), 7) << "CI machines have Landlock ABI 7";
  RunResult text = RunCordon({"doctor"});
  EXPECT_THAT(text.out, ::testing::HasSubstr("landlock denial log"));
  if (InContainerPass()) {
    // Docker's capabilities hold no CAP_AUDIT_CONTROL to ask the kernel.
    EXPECT_EQ(j["kernel_audit"], "unavailable");
    EXPECT_EQ(j["landlock_records_attached"], false);
    EXPECT_EQ(j["pidfd_getfd"], false);
    EXPECT_EQ(j["serves_undumpable_tools"], false);
    return;
  }
  EXPECT_EQ(j["kernel_audit"], AuditStateFromPython());
  // As root in the initial PID namespace, audit on is all a run needs
  // (tests/machine/ turns it on).
  EXPECT_EQ(j["landlock_records_attached"], j["kernel_audit"] == "on");
  EXPECT_EQ(j["pidfd_getfd"], true) << "bare, as root";
  EXPECT_EQ(j["serves_undumpable_tools"], true) << "bare, as root";
}

// Under Docker's default seccomp profile and capabilities (the test
// launcher), pidfd_getfd is refused: doctor says cordon falls back, and what
// a tool then meets.
TEST(Doctor, SaysWhichFallbackIsInUseUnderTheDockerDefaultProfile) {
  RunResult r = RunCordon({"doctor", "--json"}, "", {}, CONTAINER_LAUNCHER);
  nlohmann::json j = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.out << r.err;
  EXPECT_EQ(j["pidfd_getfd"], false);
  EXPECT_EQ(j["serves_undumpable_tools"], false);
  RunResult text = RunCordon({"doctor"}, "", {}, CONTAINER_LAUNCHER);
  EXPECT_THAT(text.out, ::testing::HasSubstr("prctl(PR_SET_DUMPABLE, 0) is refused"));
  EXPECT_THAT(text.out, ::testing::HasSubstr("through /proc/PID/fd"));
  EXPECT_THAT(text.out, ::testing::HasSubstr("EBADF"));
}

}  // namespace
}  // namespace cordon::testing
