// Settings only the test build of cordon honours. `cordon_testhooks` is
// built from the same sources as `cordon` with CORDON_TEST_HOOKS=1
// (tools/CMakeLists.txt; only test_hooks.cc differs); the release `cordon`
// refuses to run when one of them is set, rather than ignore it.
//   CORDON_TEST_PUBLIC_RANGE=PREFIX  addresses the web proxy counts as public
//                                    (a test's loopback server, 127.0.0.1/32)
//   CORDON_TEST_RESOLVER=FILE        the web proxy's answers for names, from FILE
//                                    (supervisor/net/resolver.h, TableResolver)
#pragma once

#include <optional>
#include <string>

#include "policy/net_address.h"

namespace cordon::tools {

// Whether this binary is the test build.
extern const bool kHonoursTestHooks;

struct NetTestHooks {
  std::optional<policy::IpPrefix> also_public;
  std::string resolver_table;  // empty: the system's resolver
};

// From the environment: false with a one-line *error when a hook is set
// and this build does not honour it, or its value is malformed.
bool ReadNetTestHooks(NetTestHooks* out, std::string* error);

}  // namespace cordon::tools
