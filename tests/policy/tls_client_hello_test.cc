// The web proxy's ClientHello reader (policy/tls_client_hello.h).
#include "policy/tls_client_hello.h"

#include <gtest/gtest.h>

#include <string>

namespace cordon::policy {
namespace {

std::string U16(size_t v) { return {static_cast<char>(v >> 8), static_cast<char>(v & 0xff)}; }
std::string U24(size_t v) { return std::string(1, static_cast<char>(v >> 16)) + U16(v & 0xffff); }

std::string SniExtension(const std::string& name) {
  std::string entry = std::string(1, '\0') + U16(name.size()) + name;
  std::string body = U16(entry.size()) + entry;
  return U16(0) + U16(body.size()) + body;
}

// A ClientHello with the given extensions, in `records` TLS records.
std::string Hello(const std::string& extensions, int records = 1) {
  std::string body = U16(0x0303) + std::string(32, 'r') + std::string(1, '\0') +  // no session id
                     U16(2) + U16(0x1301) + std::string(1, '\1') + std::string(1, '\0') +
                     U16(extensions.size()) + extensions;
  std::string msg = std::string(1, '\1') + U24(body.size()) + body;
  std::string out;
  size_t per = (msg.size() + records - 1) / records;
  for (size_t pos = 0; pos < msg.size(); pos += per) {
    std::string frag = msg.substr(pos, per);
    out += std::string(1, '\x16') + U16(0x0301) + U16(frag.size()) + frag;
  }
  return out;
}

TEST(ClientHello, ReadsTheServerName) {
  const std::string other = U16(10) + U16(4) + U16(2) + U16(29);  // supported_groups
  std::string hello = Hello(other + SniExtension("Example.COM"));
  std::string sni;
  size_t used = 0;
  ASSERT_EQ(ParseClientHelloSni(hello + "trailing", &sni, &used), HelloParse::kOk);
  EXPECT_EQ(sni, "Example.COM");
  EXPECT_EQ(used, hello.size());
  EXPECT_TRUE(SniMatches(sni, "example.com", false));
  EXPECT_TRUE(SniMatches("example.com.", "example.com", false));
  EXPECT_FALSE(SniMatches(sni, "example.org", false));
  EXPECT_FALSE(SniMatches("", "example.com", false)) << "a name must be sent for a name";
  EXPECT_TRUE(SniMatches("", "93.184.216.34", true)) << "none is sent for an address";
  EXPECT_FALSE(SniMatches("example.com", "93.184.216.34", true));
}

TEST(ClientHello, EveryPrefixNeedsMoreAndSplitRecordsAreJoined) {
  std::string hello = Hello(SniExtension("a.example.net"), 3);
  std::string sni;
  for (size_t n = 1; n < hello.size(); ++n) {
    ASSERT_EQ(ParseClientHelloSni(hello.substr(0, n), &sni), HelloParse::kNeedMore) << n;
  }
  ASSERT_EQ(ParseClientHelloSni(hello, &sni), HelloParse::kOk);
  EXPECT_EQ(sni, "a.example.net");
}

TEST(ClientHello, RefusesWhatIsNotAWellFormedHello) {
  std::string sni;
  EXPECT_EQ(ParseClientHelloSni("GET / HTTP/1.1\r\n", &sni), HelloParse::kNotTls);
  EXPECT_EQ(ParseClientHelloSni(std::string("\x17\x03\x03\x00\x01x", 6), &sni), HelloParse::kNotTls);
  // Two server_name extensions, an empty name, a NUL in the name.
  EXPECT_EQ(ParseClientHelloSni(Hello(SniExtension("a.com") + SniExtension("b.com")), &sni),
            HelloParse::kMalformed);
  EXPECT_EQ(ParseClientHelloSni(Hello(SniExtension("")), &sni), HelloParse::kMalformed);
  EXPECT_EQ(ParseClientHelloSni(Hello(SniExtension(std::string("a\0b.com", 7))), &sni),
            HelloParse::kMalformed);
  // An extension longer than what holds it.
  std::string bad = Hello(U16(0) + U16(200) + "xx");
  EXPECT_EQ(ParseClientHelloSni(bad, &sni), HelloParse::kMalformed);
  // No extensions at all: a hello without a name.
  std::string bare = Hello("");
  bare = bare.substr(0, bare.size() - 2);  // drop the empty extensions vector
  bare[4] = static_cast<char>(bare.size() - 5);
  bare[8] = static_cast<char>(bare.size() - 9);
  ASSERT_EQ(ParseClientHelloSni(bare, &sni), HelloParse::kOk);
  EXPECT_EQ(sni, "");
}

}  // namespace
}  // namespace cordon::policy
