// Issue 25's pure checks: which addresses are public (every non-global
// range as a literal, in inet_aton's spellings, and in each IPv6 form that
// embeds an IPv4 address), the early URL refusal, and the hosts list. One
// row per rule and per honest neighbour.
#include <gtest/gtest.h>

#include "policy/net_address.h"
#include "policy/web_url.h"

namespace cordon::policy {
namespace {

struct Row {
  const char* literal;
  bool global;
  const char* range;  // the range named when not global
};

TEST(NetAddress, EveryNonGlobalRangeAndItsPublicNeighbour) {
  const Row rows[] = {
      {"0.0.0.0", false, "0.0.0.0/8"},
      {"10.1.2.3", false, "10.0.0.0/8"},
      {"100.64.0.1", false, "100.64.0.0/10"},
      {"100.128.0.1", true, ""},  // just past CGNAT
      {"127.0.0.1", false, "127.0.0.0/8"},
      {"169.254.169.254", false, "169.254.0.0/16"},
      {"172.16.0.1", false, "172.16.0.0/12"},
      {"172.32.0.1", true, ""},  // just past RFC 1918
      {"192.0.0.8", false, "192.0.0.0/24"},
      {"192.0.2.7", false, "192.0.2.0/24"},
      {"192.88.99.1", false, "192.88.99.0/24"},
      {"192.168.1.1", false, "192.168.0.0/16"},
      {"198.18.0.1", false, "198.18.0.0/15"},
      {"198.20.0.1", true, ""},
      {"198.51.100.1", false, "198.51.100.0/24"},
      {"203.0.113.9", false, "203.0.113.0/24"},
      {"224.0.0.251", false, "224.0.0.0/4"},
      {"255.255.255.255", false, "240.0.0.0/4"},
      {"8.8.8.8", true, ""},
      {"140.82.112.3", true, ""},
      // inet_aton's spellings of 127.0.0.1 and 169.254.169.254.
      {"2130706433", false, "127.0.0.0/8"},
      {"0x7f.1", false, "127.0.0.0/8"},
      {"0177.0.0.1", false, "127.0.0.0/8"},
      {"127.1", false, "127.0.0.0/8"},
      {"0xa9fea9fe", false, "169.254.0.0/16"},
      {"169.254.43518", false, "169.254.0.0/16"},
      // IPv6.
      {"::", false, "::/128"},
      {"::1", false, "::1/128"},
      {"[::1]", false, "::1/128"},
      {"fe80::1", false, "fe80::/10"},
      {"fd00::1", false, "fc00::/7"},
      {"fec0::1", false, "fec0::/10"},
      {"ff02::1", false, "ff00::/8"},
      {"2001:db8::1", false, "2001:db8::/32"},
      {"2001::1", false, "2001::/23"},
      {"100::1", false, "100::/64"},
      {"64:ff9b:1::1", false, "64:ff9b:1::/48"},
      {"2606:4700::1111", true, ""},
      // IPv6 forms of non-global IPv4: mapped, NAT64, 6to4, compatible.
      {"::ffff:127.0.0.1", false, "127.0.0.0/8"},
      {"::ffff:7f00:1", false, "127.0.0.0/8"},
      {"::ffff:169.254.169.254", false, "169.254.0.0/16"},
      {"64:ff9b::10.0.0.1", false, "10.0.0.0/8"},
      {"64:ff9b::a9fe:a9fe", false, "169.254.0.0/16"},
      {"2002:c0a8:0101::1", false, "192.168.0.0/16"},
      {"::10.0.0.1", false, "10.0.0.0/8"},
      {"::8.8.8.8", false, "::/96"},
      // ... and of public IPv4: public.
      {"::ffff:8.8.8.8", true, ""},
      {"64:ff9b::808:808", true, ""},
      {"2002:808:808::1", true, ""},
  };
  for (const Row& r : rows) {
    auto ip = ParseIpLiteral(r.literal);
    ASSERT_TRUE(ip) << r.literal;
    AddressRange c = ClassifyAddress(*ip);
    EXPECT_EQ(c.global, r.global) << r.literal << " is " << c.name;
    EXPECT_STREQ(c.range, r.range) << r.literal;
  }
}

TEST(NetAddress, WhatIsNoAddressIsNotOne) {
  for (const char* s : {"", "1.2.3.4.5", "256.1.1.1", "1.2.3.256", "08.1.1.1", "0x", "1..2",
                        "example.com", "::1::", "1:2:3:4:5:6:7:8:9", "12345::", ":1", "1:",
                        "::ffff:1.2.3", "fe80::1%eth0", "[1.2.3.4]", "g::1", "1.2.3.4 "}) {
    EXPECT_FALSE(ParseIpLiteral(s)) << s;
  }
  EXPECT_EQ(FormatIp(*ParseIpLiteral("::ffff:7f00:1")), "0:0:0:0:0:ffff:7f00:1");
  EXPECT_EQ(FormatIp(*ParseIpLiteral("0x7f.1")), "127.0.0.1");
}

TEST(WebUrl, TheEarlyRefusalAndItsHonestNeighbours) {
  struct U {
    const char* url;
    const char* refusal;  // a substring; nullptr: admitted
  };
  const U rows[] = {
      {"https://github.com/cordon/cordon.git", nullptr},
      {"http://deb.debian.org/debian/", nullptr},
      {"HTTPS://Registry.NPMJS.org:443/x?y=1#frag", nullptr},
      {"https://8.8.8.8/", nullptr},
      {"https://example.com.", nullptr},
      {"ftp://example.com/", "only http and https"},
      {"file:///etc/passwd", "only http and https"},
      {"example.com", "absolute"},
      {"https://user:pw@example.com/", "credentials"},
      {"https://token@example.com/", "credentials"},
      {"http://127.0.0.1:8080/", "loopback"},
      {"http://2130706433/", "loopback"},
      {"http://0x7f.1/", "loopback"},
      {"http://169.254.169.254/latest/meta-data/", "link-local"},
      {"http://[::1]/", "loopback"},
      {"http://[::ffff:10.0.0.1]/", "RFC 1918"},
      {"http://[fe80::1%25eth0]/", "percent"},
      {"http://localhost/", "internal"},
      {"http://api.localhost/", "internal"},
      {"http://printer.local/", "internal"},
      {"http://metadata.google.internal/", "internal"},
      {"http://router.home.arpa/", "internal"},
      {"http://buildbox/", "single-label"},
      {"http://intranet/", "internal"},
      {"http://1.2.3.999/", "looks like an address"},
      {"http://b\xc3\xbc" "cher.de/", "punycode"},
      {"https://example.com:0/", "port 0"},
      {"https://example.com:99999/", "bad port"},
      {"https://example.com:/", "empty port"},
      {"https://exa mple.com/", "space"},
      {"https:///path", "no host"},
      {"https://ex_ample..com/", "not a host name"},
  };
  for (const U& r : rows) {
    UrlCheck c = CheckWebUrl(r.url);
    if (r.refusal == nullptr) {
      EXPECT_TRUE(c.url) << r.url << ": " << c.refusal;
    } else {
      EXPECT_FALSE(c.url) << r.url;
      EXPECT_NE(c.refusal.find(r.refusal), std::string::npos) << r.url << ": " << c.refusal;
    }
  }
  UrlCheck c = CheckWebUrl("HTTPS://Registry.NPMJS.org:8443/x?y=1#frag");
  ASSERT_TRUE(c.url);
  EXPECT_EQ(c.url->host, "registry.npmjs.org");
  EXPECT_EQ(c.url->port, 8443);
  EXPECT_EQ(c.url->target, "/x?y=1");
  EXPECT_EQ(c.url->Origin(), "https://registry.npmjs.org:8443");
  EXPECT_EQ(CheckWebUrl("http://example.com").url->target, "/");
  EXPECT_EQ(CheckWebUrl("http://example.com?q").url->target, "/?q");
  EXPECT_FALSE(CheckWebUrl("https://example.com/" + std::string(kMaxUrlBytes, 'a')).url);
}

TEST(HostList, ExactNamesAndSuffixPatterns) {
  std::string error;
  auto hosts = ParseHostList("github.com,*.npmjs.org,Files.PythonHosted.org.", &error);
  ASSERT_TRUE(hosts) << error;
  EXPECT_TRUE(HostAllowed(*hosts, "github.com"));
  EXPECT_TRUE(HostAllowed(*hosts, "GitHub.com."));
  EXPECT_FALSE(HostAllowed(*hosts, "api.github.com")) << "an exact name is exact";
  EXPECT_FALSE(HostAllowed(*hosts, "evilgithub.com"));
  EXPECT_TRUE(HostAllowed(*hosts, "registry.npmjs.org"));
  EXPECT_TRUE(HostAllowed(*hosts, "a.b.npmjs.org"));
  EXPECT_FALSE(HostAllowed(*hosts, "npmjs.org")) << "*.x is beneath x, not x";
  EXPECT_FALSE(HostAllowed(*hosts, "evilnpmjs.org"));
  EXPECT_FALSE(HostAllowed(*hosts, "npmjs.org.evil.com"));
  EXPECT_TRUE(HostAllowed(*hosts, "files.pythonhosted.org"));
  for (const char* bad : {"", "github.com,", ",a.com", "10.0.0.1", "[::1]", "*", "*.com",
                          "a.*.com", "gi thub.com", "*example.com", "a..com"}) {
    EXPECT_FALSE(ParseHostList(bad, &error)) << bad;
    EXPECT_FALSE(error.empty()) << bad;
  }
}

}  // namespace
}  // namespace cordon::policy
