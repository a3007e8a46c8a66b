// Issue 27 item 5: Landlock's own records of a run's denials (ABI 7) go
// into the run's log where cordon can read them, and the log says where it
// cannot. Kernel audit is a machine-wide switch cordon never touches; these
// tests turn it on for their duration and back to what it was, which is why
// they live in a binary of their own that ctest runs alone (RUN_SERIAL):
// no other test runs while audit is on. The real cordon binary, a static
// probe (no preload, so the kernel is what refuses), the log read after.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <linux/audit.h>
#include <linux/netlink.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "supervisor/kernel_audit.h"
#include "tests/support/child_process.h"
#include "tests/support/test_env.h"

namespace cordon::testing {
namespace {

using ::testing::HasSubstr;

// AUDIT_GET, or AUDIT_SET of `enabled` when `set`: the state before, -1 when
// the kernel would not say.
int AuditEnabled(bool set = false, uint32_t enabled = 0) {
  const int s = ::socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_AUDIT);
  if (s < 0) return -1;
  const timeval timeout{2, 0};
  ::setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  audit_status st{};
  st.mask = AUDIT_STATUS_ENABLED;
  st.enabled = enabled;
  const std::string_view payload =
      set ? std::string_view(reinterpret_cast<const char*>(&st), sizeof st) : std::string_view();
  int result = -1;
  if (supervisor::SendToKernelAudit(s, set ? AUDIT_SET : AUDIT_GET, set ? NLM_F_ACK : 0, payload)) {
    alignas(nlmsghdr) char buf[8192];
    for (int i = 0; i < 4 && result < 0; ++i) {
      const ssize_t n = ::recv(s, buf, sizeof buf, 0);
      if (n < static_cast<ssize_t>(NLMSG_LENGTH(0))) break;
      const auto* h = reinterpret_cast<const nlmsghdr*>(buf);
      if (h->nlmsg_type == NLMSG_ERROR) {
        int err = 0;
        std::memcpy(&err, NLMSG_DATA(h), sizeof err);
        if (set) result = err == 0 ? 1 : -1;
        if (err != 0 || set) break;
      } else if (!set && h->nlmsg_type == AUDIT_GET) {
        audit_status st{};
        std::memcpy(&st, NLMSG_DATA(h), std::min(sizeof st, static_cast<size_t>(n) - NLMSG_HDRLEN));
        result = static_cast<int>(st.enabled);
      }
    }
  }
  ::close(s);
  return result;
}

class LandlockRecordsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    before_ = AuditEnabled();
    ASSERT_GE(before_, 0) << "kernel audit cannot be asked here (CI machines have it, off)";
    if (before_ == 0) ASSERT_EQ(AuditEnabled(true, 1), 1) << "could not turn kernel audit on";
    ASSERT_NE(AuditEnabled(), 0);
  }
  void TearDown() override {
    if (before_ == 0) EXPECT_EQ(AuditEnabled(true, 0), 1) << "kernel audit left on";
  }

  // `cordon run` of `argv` with its log at LOG; the log's records.
  std::vector<nlohmann::json> Run(const std::string& log, std::vector<std::string> argv,
                                  const std::string& launcher = "", RunResult* result = nullptr) {
    std::vector<std::string> args = {"run", "--workspace", t_.ws(), "--audit", log, "--"};
    args.insert(args.end(), argv.begin(), argv.end());
    RunResult r = RunCordon(args, t_.ws(), {}, launcher);
    if (result != nullptr) *result = r;
    return Records(log);
  }
  static std::vector<nlohmann::json> Records(const std::string& log) {
    std::vector<nlohmann::json> out;
    std::istringstream in(ReadFile(log));
    for (std::string line; std::getline(in, line);) out.push_back(nlohmann::json::parse(line));
    return out;
  }
  static std::vector<nlohmann::json> OfKind(const std::vector<nlohmann::json>& rs,
                                            const char* kind) {
    std::vector<nlohmann::json> out;
    for (const nlohmann::json& r : rs) {
      if (r["kind"] == kind) out.push_back(r);
    }
    return out;
  }

  int before_ = -1;
  ScratchTree t_;
};

TEST_F(LandlockRecordsTest, AStaticToolsKernelDenialIsInTheRunsLog) {
  WriteFile(t_.Out("secret.txt"), "s\n");
  const std::string log = t_.root() + "/run.jsonl";
  RunResult r;
  std::vector<nlohmann::json> rs = Run(log, {PROBE_STATIC, "read", t_.Out("secret.txt")}, "", &r);
  EXPECT_EQ(r.status, 13) << "EACCES from Landlock: " << r.err;
  ASSERT_FALSE(rs.empty());
  EXPECT_EQ(rs.front()["landlock_records"], "attached");
  std::vector<nlohmann::json> ll = OfKind(rs, "landlock");
  ASSERT_EQ(ll.size(), 1u) << ReadFile(log);
  EXPECT_EQ(ll[0]["blockers"], "fs.read_file");
  EXPECT_EQ(ll[0]["object"]["path"], t_.Out("secret.txt"));
  EXPECT_EQ(ll[0]["comm"], "probe_static");
  EXPECT_EQ(ll[0]["syscall"], "openat");
  const nlohmann::json& end = rs.back();
  ASSERT_EQ(end["kind"], "end");
  EXPECT_EQ(end["landlock"]["attached"], 1);
  EXPECT_EQ(end["landlock"]["kernel_count"], 1);
  EXPECT_EQ(end["landlock"]["complete"], true) << end.dump();
  EXPECT_EQ(RunCordon({"audit", "verify", log}).status, 0);
  RunResult show = RunCordon({"runs", "show"}, t_.ws());
  EXPECT_EQ(show.status, 0) << show.err;
  EXPECT_THAT(show.out,
              HasSubstr("refused by the kernel    " + t_.Out("secret.txt") + " (fs.read_file)"));
  EXPECT_THAT(show.out, HasSubstr("1 by the kernel (Landlock's own records)"));
}

// The honest neighbour: a read the policy grants leaves no kernel record,
// and the run's account says so, whole.
TEST_F(LandlockRecordsTest, AGrantedReadLeavesNone) {
  WriteFile(t_.Ws("mine.txt"), "m\n");
  const std::string log = t_.root() + "/run.jsonl";
  RunResult r;
  std::vector<nlohmann::json> rs = Run(log, {PROBE_STATIC, "read", t_.Ws("mine.txt")}, "", &r);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(OfKind(rs, "landlock").empty());
  EXPECT_EQ(rs.back()["landlock"]["attached"], 0);
  EXPECT_EQ(rs.back()["landlock"]["complete"], true) << rs.back().dump();
}

// Two runs deny at once: each log holds its own denial and not the other's
// (the run's domain is told by its creator's pid). The denial comes after a
// second exec (sh, then the probe), which the kernel logs only because the
// run asked it to (LOG_NEW_EXEC_ON).
TEST_F(LandlockRecordsTest, ConcurrentRunsEachGetTheirOwn) {
  WriteFile(t_.Out("a.txt"), "a\n");
  WriteFile(t_.Out("b.txt"), "b\n");
  const std::string cmd = std::string("sleep 0.3; ") + PROBE_STATIC + " read " + t_.root();
  std::vector<std::unique_ptr<BackgroundCordon>> runs;
  for (const char* name : {"a", "b"}) {
    runs.push_back(std::make_unique<BackgroundCordon>(std::vector<std::string>{
        "run", "--workspace", t_.ws(), "--ro", ProbeDir(), "--audit",
        t_.root() + "/" + name + ".jsonl", "--", "sh", "-c", cmd + "/outside/" + name + ".txt"}));
  }
  for (auto& run : runs) run->Wait();
  for (const char* name : {"a", "b"}) {
    std::vector<nlohmann::json> ll = OfKind(Records(t_.root() + "/" + name + ".jsonl"), "landlock");
    ASSERT_EQ(ll.size(), 1u) << name;
    EXPECT_EQ(ll[0]["object"]["path"], t_.Out(std::string(name) + ".txt"));
  }
}

// Without a log the run asks the kernel to log nothing of its tool's, and
// there is nothing to attach to.
TEST_F(LandlockRecordsTest, WhereCordonCannotReadThemTheLogSaysWhy) {
  const std::string log = t_.root() + "/run.jsonl";
  // Docker's default capabilities hold neither CAP_AUDIT_CONTROL nor
  // CAP_AUDIT_READ (tests/helpers/container_launcher.c).
  std::vector<nlohmann::json> rs =
      Run(log, {PROBE_STATIC, "read", "/etc/shadow"}, CONTAINER_LAUNCHER);
  ASSERT_FALSE(rs.empty());
  EXPECT_THAT(rs.front()["landlock_records"].get<std::string>(), HasSubstr("not attached: "));
  EXPECT_TRUE(OfKind(rs, "landlock").empty());
  EXPECT_FALSE(rs.back().contains("landlock"));
  RunResult doctor = RunCordon({"doctor", "--json"});
  nlohmann::json j = nlohmann::json::parse(doctor.out, nullptr, false);
  EXPECT_EQ(j["kernel_audit"], "on");
  EXPECT_EQ(j["landlock_records_attached"], true);
}

}  // namespace
}  // namespace cordon::testing
