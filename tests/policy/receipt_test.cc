#include "policy/receipt.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "policy/digest.h"

namespace cordon::policy {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;

std::string ReceiptFor(std::string_view bundle) {
  return R"({"policy_sha256": ")" + Sha256Hex(bundle) + "\"}";
}

TEST(CheckReceipt, MatchingDigestPasses) {
  EXPECT_THAT(CheckReceipt("{}\n", ReceiptFor("{}\n")), IsEmpty());
}

TEST(CheckReceipt, RefusalsTable) {
  std::string good = Sha256Hex("{}\n");
  std::string upper = good;
  for (char& ch : upper) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  struct Case {
    std::string receipt;
    const char* why;
  } cases[] = {
      {ReceiptFor("{} \n"), "does not match"},  // one byte changed
      {"", "not valid JSON"},
      {good, "not valid JSON"},  // a bare hex line is not the format
      {R"({"policy_sha256": 5})", "must be a string"},
      {R"({"policy_sha256": "abc"})", "64 lowercase hex"},
      {R"({"policy_sha256": ")" + upper + "\"}", "64 lowercase hex"},
      {R"({"policy_sha256": ")" + good + R"(", "extra": 1})", "nothing else"},
      {R"({"sha": ")" + good + "\"}", "nothing else"},
  };
  for (const auto& c : cases) {
    EXPECT_THAT(CheckReceipt("{}\n", c.receipt), HasSubstr(c.why)) << c.receipt;
  }
}

}  // namespace
}  // namespace cordon::policy
