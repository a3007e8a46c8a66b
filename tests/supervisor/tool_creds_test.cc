// ReadToolCreds parses /proc/TID/status; UmaskCache never hands out a umask
// a pending umask(2) may already have replaced.
#include "supervisor/tool_creds.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <future>
#include <thread>

namespace cordon::supervisor {
namespace {

const auto kValid = [] { return true; };

class UmaskGuard {
 public:
  UmaskGuard() : old_(::umask(022)) {}
  ~UmaskGuard() { ::umask(old_); }

 private:
  mode_t old_;
};

TEST(ToolCredsTest, ReadsTheThreadsIdsAndUmask) {
  UmaskGuard g;
  ::umask(027);
  auto c = ReadToolCreds(::gettid());
  ASSERT_TRUE(c) << Describe(c.error());
  EXPECT_EQ(c->tgid, ::getpid());
  EXPECT_EQ(c->fsuid, ::geteuid());
  EXPECT_EQ(c->fsgid, ::getegid());
  EXPECT_EQ(c->umask, 027u);
  EXPECT_FALSE(ReadToolCreds(0x7ffffff0)) << "no such thread";
}

TEST(UmaskCacheTest, FollowsANotifiedUmaskChange) {
  UmaskGuard g;
  UmaskCache cache;
  EXPECT_EQ(cache.Get(::gettid(), kValid).value(), 022u);
  cache.OnUmask(::gettid(), 077);
  ::umask(077);
  EXPECT_EQ(cache.Get(::gettid(), kValid).value(), 077u);
}

TEST(UmaskCacheTest, CachesNothingWhileAUmaskMayStillBeRunning) {
  UmaskGuard g;
  UmaskCache cache;
  // Another thread's umask(077) was notified but has not run yet: the value
  // read now is the old one and must not be kept.
  std::promise<pid_t> tid;
  std::promise<void> done;
  std::thread other([&] {
    tid.set_value(::gettid());
    done.get_future().wait();
  });
  cache.OnUmask(tid.get_future().get(), 077);
  EXPECT_EQ(cache.Get(::gettid(), kValid).value(), 022u);
  EXPECT_EQ(cache.Get(::gettid(), kValid).value(), 022u);
  ::umask(077);  // it runs (threads share the umask)
  EXPECT_EQ(cache.Get(::gettid(), kValid).value(), 077u);
  done.set_value();
  other.join();
}

TEST(UmaskCacheTest, AGoneThreadIsStale) {
  UmaskCache cache;
  auto m = cache.Get(::gettid(), [] { return false; });
  ASSERT_FALSE(m);
  EXPECT_EQ(m.error().err, ESRCH);
}

}  // namespace
}  // namespace cordon::supervisor
