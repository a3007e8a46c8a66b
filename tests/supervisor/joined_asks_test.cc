// One question per operation on one file (issue 26): a call restarted after
// a signal joins the pending question, the answer goes to the live call,
// an allowed-once is taken once, and a changed file is a new question.
#include "supervisor/approvals/joined_asks.h"

#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <thread>

#include "supervisor/audit/audit_log.h"
#include "tests/support/json_lines.h"
#include "tests/support/test_env.h"

namespace cordon::supervisor {
namespace {

using namespace std::chrono_literals;
using policy::ApprovalRequest;

ApprovalRequest Request(uint64_t id, uint64_t ino = 2, std::string path = "notes.txt") {
  ApprovalRequest r;
  r.request_id = id;
  r.preview = {std::move(path), 5, std::string(64, 'a'), 1, ino, 3, 4};
  r.preview_digest = r.preview.Digest();
  r.tool_pid = 42;
  r.tool_argv0 = "git";
  return r;
}

// Answers what the test says, when the test says so.
class HeldApprover final : public Approver {
 public:
  const char* Name() const override { return "held"; }
  std::atomic<int> decided{0};
  void Answer(Outcome o) { answer_.set_value(o); }

 protected:
  Outcome Decide(const ApprovalRequest&, std::chrono::steady_clock::time_point, int,
                 std::string*) override {
    ++decided;
    return answer_future_.get();
  }

 private:
  std::promise<Outcome> answer_;
  std::shared_future<Outcome> answer_future_ = answer_.get_future().share();
};

// A notification's liveness, as SECCOMP_IOCTL_NOTIF_ID_VALID would say.
struct Call {
  std::atomic<bool> live{true};
  std::function<bool()> valid() {
    return [this] { return live.load(); };
  }
};

void WaitFor(const std::function<bool()>& cond) {
  for (int i = 0; i < 5000 && !cond(); ++i) std::this_thread::sleep_for(1ms);
  ASSERT_TRUE(cond());
}

TEST(JoinedAsks, ARestartedCallJoinsAndTheAnswerGoesToIt) {
  testing::ScratchTree t;
  auto log = AuditLog::Open(t.Ws("a.jsonl"));
  ASSERT_TRUE(log.ok());
  std::shared_ptr<AuditLog> shared = std::move(log.value());
  auto approver = std::make_shared<HeldApprover>();
  approver->SetAuditLog(shared);
  JoinedAsks asks(approver);
  Call first, restarted;
  auto a = std::async(std::launch::async, [&] { return asks.Ask("unlink", Request(10), 30s, first.valid()); });
  WaitFor([&] { return approver->decided == 1; });
  first.live = false;  // SIGALRM: the kernel dropped it and restarts the syscall
  auto b = std::async(std::launch::async,
                      [&] { return asks.Ask("unlink", Request(11), 30s, restarted.valid()); });
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(approver->decided, 1) << "asked again for the restarted call";
  approver->Answer(Outcome::kAllowedOnce);
  JoinedAsks::Answer ra = a.get(), rb = b.get();
  EXPECT_FALSE(ra.granted) << "the grant went to a call that is gone";
  EXPECT_FALSE(ra.joined);
  EXPECT_TRUE(rb.granted);
  EXPECT_TRUE(rb.joined);
  EXPECT_EQ(rb.outcome, Outcome::kAllowedOnce);
  EXPECT_EQ(asks.size(), 0u);
  ASSERT_TRUE(shared->Close().ok());
  int requests = 0, joined = 0;
  for (const auto& r : testing::JsonLines(testing::ReadFile(t.Ws("a.jsonl")))) {
    if (r.value("event", "") == "request") ++requests;
    if (r.value("event", "") == "joined") {
      ++joined;
      EXPECT_EQ(r["request_id"], 11u);
      EXPECT_EQ(r["joins"], 10u);
    }
  }
  EXPECT_EQ(requests, 1);
  EXPECT_EQ(joined, 1);
}

TEST(JoinedAsks, AnAnswerNoCallWasLiveForGoesToTheRestartedCall) {
  auto approver = std::make_shared<HeldApprover>();
  JoinedAsks asks(approver);
  Call first, restarted;
  auto a = std::async(std::launch::async, [&] { return asks.Ask("unlink", Request(10), 30s, first.valid()); });
  WaitFor([&] { return approver->decided == 1; });
  first.live = false;
  approver->Answer(Outcome::kAllowedOnce);  // while the tool runs its signal handler
  EXPECT_FALSE(a.get().granted);
  EXPECT_EQ(asks.size(), 1u) << "the answer is kept for the restarted call";
  JoinedAsks::Answer rb = asks.Ask("unlink", Request(11), 30s, restarted.valid());
  EXPECT_TRUE(rb.granted);
  EXPECT_TRUE(rb.joined);
  EXPECT_EQ(approver->decided, 1);
  EXPECT_EQ(asks.size(), 0u);
}

TEST(JoinedAsks, AnAllowedOnceIsTakenOnce) {
  auto approver = std::make_shared<HeldApprover>();
  JoinedAsks asks(approver);
  Call c1, c2, c3;
  auto a = std::async(std::launch::async, [&] { return asks.Ask("unlink", Request(1), 30s, c1.valid()); });
  WaitFor([&] { return approver->decided == 1; });
  auto b = std::async(std::launch::async, [&] { return asks.Ask("unlink", Request(2), 30s, c2.valid()); });
  auto c = std::async(std::launch::async, [&] { return asks.Ask("unlink", Request(3), 30s, c3.valid()); });
  std::this_thread::sleep_for(50ms);
  approver->Answer(Outcome::kAllowedOnce);
  int granted = a.get().granted + b.get().granted + c.get().granted;
  EXPECT_EQ(granted, 1);
  EXPECT_EQ(approver->decided, 1);
}

TEST(JoinedAsks, ADenialGoesToEveryLiveCall) {
  auto approver = std::make_shared<HeldApprover>();
  JoinedAsks asks(approver);
  Call c1, c2;
  auto a = std::async(std::launch::async, [&] { return asks.Ask("unlink", Request(1), 30s, c1.valid()); });
  WaitFor([&] { return approver->decided == 1; });
  c1.live = false;
  auto b = std::async(std::launch::async, [&] { return asks.Ask("unlink", Request(2), 30s, c2.valid()); });
  std::this_thread::sleep_for(50ms);
  approver->Answer(Outcome::kDenied);
  EXPECT_EQ(a.get().outcome, Outcome::kDenied);
  JoinedAsks::Answer rb = b.get();
  EXPECT_EQ(rb.outcome, Outcome::kDenied);
  EXPECT_FALSE(rb.granted);
  EXPECT_EQ(asks.size(), 0u);
}

TEST(JoinedAsks, AJoinedCallGoneTooLeavesWithoutTheAnswer) {
  auto approver = std::make_shared<HeldApprover>();
  JoinedAsks asks(approver);
  Call c1, c2, c3;
  auto a = std::async(std::launch::async, [&] { return asks.Ask("unlink", Request(1), 30s, c1.valid()); });
  WaitFor([&] { return approver->decided == 1; });
  c1.live = false;
  auto b = std::async(std::launch::async, [&] { return asks.Ask("unlink", Request(2), 30s, c2.valid()); });
  std::this_thread::sleep_for(20ms);
  c2.live = false;  // interrupted again
  const bool left = b.wait_for(5s) == std::future_status::ready;
  EXPECT_TRUE(left) << "a gone call waits for nothing";
  if (left) EXPECT_EQ(b.get().outcome, Outcome::kStale);
  approver->Answer(Outcome::kAllowedOnce);
  EXPECT_FALSE(a.get().granted);
  EXPECT_TRUE(asks.Ask("unlink", Request(3), 30s, c3.valid()).granted);
  EXPECT_EQ(approver->decided, 1);
}

// What joins is the same operation on the same file, previewed the same:
// another file, another operation, or a changed file is asked about anew;
// so is the same file again once a live call had its answer.
TEST(JoinedAsks, OnlyTheSameOperationOnTheSameFileJoins) {
  struct Instant final : Approver {
    std::atomic<int> decided{0};
    const char* Name() const override { return "instant"; }
    Outcome Decide(const ApprovalRequest&, std::chrono::steady_clock::time_point, int,
                   std::string*) override {
      ++decided;
      return Outcome::kAllowedOnce;
    }
  };
  auto approver = std::make_shared<Instant>();
  JoinedAsks asks(approver);
  Call live;
  EXPECT_TRUE(asks.Ask("unlink", Request(1), 1s, live.valid()).granted);
  EXPECT_TRUE(asks.Ask("unlink", Request(2), 1s, live.valid()).granted);
  ApprovalRequest changed = Request(3);
  changed.preview.mtime_ns++;
  changed.preview_digest = changed.preview.Digest();
  EXPECT_TRUE(asks.Ask("unlink", changed, 1s, live.valid()).granted);
  EXPECT_TRUE(asks.Ask("unlink", Request(4, 9), 1s, live.valid()).granted);
  EXPECT_TRUE(asks.Ask("rmdir", Request(5), 1s, live.valid()).granted);
  EXPECT_EQ(approver->decided, 5);
  EXPECT_EQ(asks.size(), 0u);
}

}  // namespace
}  // namespace cordon::supervisor
