// The network mode as written (issue 25 item 1): --network and
// sandbox.network in the policy file.
#include "policy/network_mode.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "policy/policy_json.h"
#include "policy/policy_parser.h"

namespace cordon::policy {
namespace {

using ::testing::HasSubstr;

TEST(NetworkMode, EachModeParses) {
  Policy p;
  std::string why;
  ASSERT_TRUE(ParseNetworkMode("public-web", &p, &why));
  EXPECT_EQ(p.network, Network::kPublicWeb);
  ASSERT_TRUE(ParseNetworkMode("hosts:GitHub.com,*.npmjs.org", &p, &why));
  EXPECT_EQ(p.network, Network::kHosts);
  ASSERT_EQ(p.web.hosts.size(), 2u);
  EXPECT_EQ(p.web.hosts[0], (HostPattern{"github.com", false}));
  EXPECT_EQ(p.web.hosts[1], (HostPattern{"npmjs.org", true}));
  EXPECT_EQ(FormatNetworkMode(p), "hosts:github.com,*.npmjs.org");
  ASSERT_TRUE(ParseNetworkMode("none", &p, &why));
  EXPECT_EQ(p.network, Network::kNone);
  EXPECT_TRUE(p.web.hosts.empty()) << "a later mode drops the earlier list";
  ASSERT_TRUE(ParseNetworkMode("allow", &p, &why));
  EXPECT_EQ(p.network, Network::kAllow);
}

TEST(NetworkMode, BadInputIsOneLineNamingTheEntry) {
  struct Case {
    const char* text;
    const char* says;
  } cases[] = {
      {"hosts:", "empty"},
      {"hosts:github.com,,x.org", "empty entry"},
      {"hosts:10.0.0.1", "an address"},
      {"hosts:[::1]", "an address"},
      {"hosts:::ffff:127.0.0.1", "an address"},
      {"hosts:*", "only as a leading"},
      {"hosts:a*.b.com", "'*' only"},
      {"web", "unknown network mode 'web'"},
      {"Allow", "unknown network mode"},
  };
  for (const Case& c : cases) {
    Policy p;
    std::string why;
    EXPECT_FALSE(ParseNetworkMode(c.text, &p, &why)) << c.text;
    EXPECT_THAT(why, HasSubstr(c.says)) << c.text;
    EXPECT_EQ(why.find('\n'), std::string::npos);
    EXPECT_EQ(p.network, Network::kNone) << "nothing granted on an error: " << c.text;
  }
}

TEST(NetworkMode, ThePolicyFileTakesTheModeAndTheProxyCaps) {
  Policy p;
  auto errors = ParsePolicy(R"({"sandbox":{"network":{"mode":"hosts:pypi.org,*.pythonhosted.org",
      "ports":[443,8443],"timeoutSeconds":5,"maxResponseBytes":1000,"maxConnections":3}}})", p);
  ASSERT_TRUE(errors.empty()) << errors[0].message;
  EXPECT_EQ(p.network, Network::kHosts);
  EXPECT_EQ(p.web.hosts.size(), 2u);
  EXPECT_EQ(p.web.ports, (std::vector<uint16_t>{443, 8443}));
  EXPECT_EQ(p.web.timeout_seconds, 5u);
  EXPECT_EQ(p.web.max_response_bytes, 1000u);
  EXPECT_EQ(p.web.max_connections, 3u);
}

TEST(NetworkMode, AllowOutboundMapsToAllowAndContradictionsAreErrors) {
  Policy p;
  ASSERT_TRUE(ParsePolicy(R"({"sandbox":{"network":{"allowOutbound":true}}})", p).empty());
  EXPECT_EQ(p.network, Network::kAllow);
  Policy q;
  auto errors =
      ParsePolicy(R"({"sandbox":{"network":{"allowOutbound":true,"mode":"public-web"}}})", q);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].pointer, "/sandbox/network/allowOutbound");
  Policy r;
  ASSERT_TRUE(
      ParsePolicy(R"({"sandbox":{"network":{"allowOutbound":false,"mode":"public-web"}}})", r)
          .empty());
  EXPECT_EQ(r.network, Network::kPublicWeb);
  for (const char* bad : {R"({"sandbox":{"network":{"mode":"hosts:10.1.2.3"}}})",
                          R"({"sandbox":{"network":{"mode":7}}})",
                          R"({"sandbox":{"network":{"ports":[0]}}})",
                          R"({"sandbox":{"network":{"ports":[]}}})",
                          R"({"sandbox":{"network":{"maxConnections":0}}})"}) {
    Policy b;
    EXPECT_FALSE(ParsePolicy(bad, b).empty()) << bad;
  }
}

TEST(NetworkMode, TheDigestOfNoneAndAllowIsUnchangedAndTheWebGrantIsInIt) {
  Policy none, web;
  std::string why;
  const auto j = PolicyToJson(none, PolicyJsonView::kDigest);
  EXPECT_EQ(j["network"], "none");
  EXPECT_FALSE(j.contains("web"));
  ASSERT_TRUE(ParseNetworkMode("hosts:a.example.com", &web, &why));
  const auto w = PolicyToJson(web, PolicyJsonView::kDigest);
  EXPECT_EQ(w["network"], "hosts:a.example.com");
  EXPECT_EQ(w["web"]["ports"], nlohmann::json({443, 80}));
}

TEST(NetworkMode, ExplainSaysTheModeAndTheHosts) {
  Policy p;
  std::string why;
  ASSERT_TRUE(ParseNetworkMode("hosts:github.com,*.npmjs.org", &p, &why));
  EXPECT_THAT(DescribeNetwork(p), HasSubstr("hosts: github.com, *.npmjs.org"));
  ASSERT_TRUE(ParseNetworkMode("public-web", &p, &why));
  EXPECT_THAT(DescribeNetwork(p), HasSubstr("public-web-read-only"));
}

}  // namespace
}  // namespace cordon::policy
