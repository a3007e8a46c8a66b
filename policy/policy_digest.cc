#include "policy/policy_digest.h"

#include "policy/digest.h"
#include "policy/policy_json.h"

namespace cordon::policy {

std::string CanonicalPolicyJson(const Policy& p) {
  return PolicyToJson(p, PolicyJsonView::kDigest).dump();
}

std::string PolicyDigest(const Policy& p) { return Sha256Hex(CanonicalPolicyJson(p)); }

}  // namespace cordon::policy
