// libFuzzer target: the policy parser on arbitrary bytes. It must never
// crash, leak or hit undefined behaviour, and an input with errors must not
// come back half-applied as if it were valid.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "policy/policy_parser.h"
#include "policy/protected_paths.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  cordon::policy::Policy p;
  auto errors = cordon::policy::ParsePolicy(text, p);
  for (const auto& e : errors) {
    if (e.message.empty()) std::abort();  // every error says something
    (void)cordon::policy::FormatPolicyError("fuzz.json", e);
  }
  if (errors.empty()) {
    // A valid policy's paths are absolute and normal: Validate agrees.
    for (const auto& r : p.paths) {
      if (!cordon::policy::IsAbsoluteNormal(r.path)) std::abort();
    }
    (void)cordon::policy::IsProtected(p, ".git/hooks/x");
  }
  return 0;
}
