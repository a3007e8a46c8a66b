// Compiled twice: into `cordon` (CORDON_TEST_HOOKS undefined: 0) and into
// `cordon_testhooks` (1). Nothing else differs between the two binaries.
#include "tools/test_hooks.h"

#include <cstdlib>

#ifndef CORDON_TEST_HOOKS
#define CORDON_TEST_HOOKS 0
#endif

namespace cordon::tools {

const bool kHonoursTestHooks = CORDON_TEST_HOOKS != 0;

bool ReadNetTestHooks(NetTestHooks* out, std::string* error) {
  const char* range = std::getenv("CORDON_TEST_PUBLIC_RANGE");
  const char* table = std::getenv("CORDON_TEST_RESOLVER");
  for (const char* name : {"CORDON_TEST_PUBLIC_RANGE", "CORDON_TEST_RESOLVER"}) {
    if (std::getenv(name) != nullptr && !kHonoursTestHooks) {
      *error = std::string(name) +
               " is a test-only setting, and this build of cordon does not honour it (unset it)";
      return false;
    }
  }
  if (range != nullptr) {
    out->also_public = policy::ParseIpPrefix(range);
    if (!out->also_public) {
      *error = std::string("CORDON_TEST_PUBLIC_RANGE=") + range + ": not an address prefix";
      return false;
    }
  }
  if (table != nullptr) out->resolver_table = table;
  return true;
}

}  // namespace cordon::tools
