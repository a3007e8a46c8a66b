#include "supervisor/capless_pool.h"

#include <gtest/gtest.h>
#include <sys/capability.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <future>

namespace cordon::supervisor {
namespace {

bool ThreadHoldsNone() {
  cap_t cur = cap_get_proc(), none = cap_init();
  bool empty = cap_compare(cur, none) == 0;
  cap_free(cur);
  cap_free(none);
  return empty;
}

TEST(CaplessPool, JobsRunWithoutCapabilities) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to hold capabilities in the first place";
  ASSERT_FALSE(ThreadHoldsNone()) << "control: this thread holds capabilities";
  CaplessPool pool;
  std::promise<bool> none;
  ASSERT_TRUE(pool.Submit([&] { none.set_value(ThreadHoldsNone()); }));
  EXPECT_TRUE(none.get_future().get());
  EXPECT_FALSE(ThreadHoldsNone()) << "the submitting thread keeps its own";
}

// A job that blocks (a connect waiting out a SYN) holds up no other.
TEST(CaplessPool, ABlockedJobHoldsUpNoOther) {
  CaplessPool pool;
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  std::promise<void> first_started, second_done;
  ASSERT_TRUE(pool.Submit([&] {
    first_started.set_value();
    released.wait();
  }));
  first_started.get_future().wait();
  ASSERT_TRUE(pool.Submit([&] { second_done.set_value(); }));
  EXPECT_EQ(second_done.get_future().wait_for(std::chrono::seconds(10)), std::future_status::ready);
  release.set_value();
  pool.Stop();
}

// Calls one after another reuse the threads: no thread per call. (A thread
// still finishing its job when the next one comes makes another: under load
// a few, never one a call.)
TEST(CaplessPool, ThreadsAreKeptAndReused) {
  CaplessPool pool;
  for (int i = 0; i < 100; ++i) {
    std::promise<void> done;
    ASSERT_TRUE(pool.Submit([&] { done.set_value(); }));
    done.get_future().wait();
  }
  EXPECT_LE(pool.threads(), 16u) << "a thread per call";
  pool.Stop();
  std::atomic<bool> ran{false};
  EXPECT_FALSE(pool.Submit([&] { ran = true; })) << "no job once stopped";
  EXPECT_FALSE(ran.load());
}

}  // namespace
}  // namespace cordon::supervisor
