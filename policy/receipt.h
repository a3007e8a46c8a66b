// Receipts: a policy bundle (the policy file's exact bytes) may come with a
// receipt naming the SHA-256 it must have. The receipt is a JSON object with
// exactly one key:
//
//   {"policy_sha256": "<64 lowercase hex digits>"}
//
// Until the receipt checks out nothing is granted; a missing, unreadable,
// malformed or mismatching receipt is an error (cordon exits 125).
#pragma once

#include <string>
#include <string_view>

namespace cordon::policy {

// The digest a receipt names, or "" with `why` set when it is malformed.
std::string ParseReceipt(std::string_view receipt_text, std::string& why);

// Checks `bundle` (the policy bytes as read, once) against `receipt_text`.
// Returns "" when they match, else a one-line reason.
std::string CheckReceipt(std::string_view bundle, std::string_view receipt_text);

}  // namespace cordon::policy
