// SHA-256 in policy/ is plain C++ (no libcrypto, no I/O): FIPS 180-2's
// vectors, and every padding boundary (55, 56, 63, 64 bytes and two blocks).
#include "policy/digest.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace cordon::policy {
namespace {

TEST(Sha256Hex, StandardVectorsAndPaddingBoundaries) {
  struct Case {
    std::string in;
    const char* hex;
  };
  const std::vector<Case> cases = {
      {"", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
      {"abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
      {"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
       "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"},
      {std::string(1000000, 'a'), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"},
      {std::string(1, 'a'), "ca978112ca1bbdcafac231b39a23dc4da786eff8147c4e72b9807785afee48bb"},
      {std::string(55, 'a'), "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318"},
      {std::string(56, 'a'), "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a"},
      {std::string(63, 'a'), "7d3e74a05d7db15bce4ad9ec0658ea98e3f06eeecf16b4c6fff2da457ddc2f34"},
      {std::string(64, 'a'), "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb"},
      {std::string(65, 'a'), "635361c48bb9eab14198e76ea8ab7f1a41685d6ad62aa9146d301d4f17eb0ae0"},
      {std::string(119, 'a'), "31eba51c313a5c08226adf18d4a359cfdfd8d2e816b13f4af952f7ea6584dcfb"},
      {std::string(120, 'a'), "2f3d335432c70b580af0e8e1b3674a7c020d683aa5f73aaaedfdc55af904c21c"},
      {std::string(128, 'a'), "6836cf13bac400e9105071cd6af47084dfacad4e5e302c94bfed24e013afb73e"},
  };
  for (const Case& c : cases) EXPECT_EQ(Sha256Hex(c.in), c.hex) << c.in.size() << " bytes";
}

TEST(DigestEquals, ComparesWholeDigests) {
  EXPECT_TRUE(DigestEquals("ab", "ab"));
  EXPECT_FALSE(DigestEquals("ab", "ac"));
  EXPECT_FALSE(DigestEquals("ab", "abc"));
}

}  // namespace
}  // namespace cordon::policy
