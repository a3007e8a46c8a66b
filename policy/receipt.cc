#include "policy/receipt.h"

#include <nlohmann/json.hpp>

#include "policy/digest.h"

namespace cordon::policy {

std::string ParseReceipt(std::string_view text, std::string& why) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) {
    why = "receipt is not valid JSON";
    return {};
  }
  if (!j.is_object() || j.size() != 1 || !j.contains("policy_sha256")) {
    why = "receipt must be {\"policy_sha256\": \"<hex>\"} and nothing else";
    return {};
  }
  const auto& d = j["policy_sha256"];
  if (!d.is_string()) {
    why = "receipt policy_sha256 must be a string";
    return {};
  }
  std::string hex = d.get<std::string>();
  bool ok = hex.size() == 64;
  for (char c : hex) ok = ok && ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'));
  if (!ok) {
    why = "receipt policy_sha256 must be 64 lowercase hex digits";
    return {};
  }
  return hex;
}

std::string CheckReceipt(std::string_view bundle, std::string_view receipt_text) {
  std::string why;
  std::string want = ParseReceipt(receipt_text, why);
  if (want.empty()) return why;
  std::string have = Sha256Hex(bundle);
  if (!DigestEquals(have, want)) {
    return "policy digest " + have + " does not match the receipt's " + want;
  }
  return {};
}

}  // namespace cordon::policy
