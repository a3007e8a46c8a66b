#include "policy/socket_name.h"

#include <gtest/gtest.h>

namespace cordon::policy {
namespace {

TEST(MirrorSocketName, Table) {
  struct Case {
    const char* written;
    const char* name;
    const char* mount_at;  // null: cannot be mirrored
    const char* cwd;
  } cases[] = {
      {"/ws/run/s.sock", "s.sock", "ws/run", "/"},
      {"/tmp/pymp-x/listener-y", "listener-y", "tmp/pymp-x", "/"},
      {"s.sock", "s.sock", "cwd", "/cwd"},
      {"./s.sock", "s.sock", "cwd", "/cwd"},
      {"sub/dir/s.sock", "s.sock", "cwd/sub/dir", "/cwd"},
      {"//ws///run/./s.sock", "s.sock", "ws/run", "/"},   // the kernel passes over them too
      {"/ws/../etc/s.sock", "s.sock", nullptr, nullptr},  // would climb the scratch tree
      {"../s.sock", "s.sock", nullptr, nullptr},
      {"/s.sock", "s.sock", nullptr, nullptr},      // the scratch root itself
      {"/ws/s.sock/", "s.sock", nullptr, nullptr},  // a trailing "/": the kernel's ENOENT
      {"/ws/other", "s.sock", nullptr, nullptr},    // not the name located
      {"/ws/.", ".", nullptr, nullptr},
      {"", "s.sock", nullptr, nullptr},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.written);
    auto got = MirrorSocketName(c.written, c.name);
    if (c.mount_at == nullptr) {
      EXPECT_FALSE(got.has_value());
      continue;
    }
    ASSERT_TRUE(got.has_value());
    EXPECT_EQ(got->mount_at, c.mount_at);
    EXPECT_EQ(got->cwd, c.cwd);
  }
}

}  // namespace
}  // namespace cordon::policy
