// What the web proxy decides (policy/web_request.h), table-driven.
#include "policy/web_request.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "policy/network_mode.h"

namespace cordon::policy {
namespace {

using ::testing::HasSubstr;

Policy Mode(const char* mode) {
  Policy p;
  std::string why;
  EXPECT_TRUE(ParseNetworkMode(mode, &p, &why)) << why;
  return p;
}

WebVerdict Decide(const Policy& p, const std::string& head) {
  ProxyRequest r;
  std::string why;
  EXPECT_EQ(ParseRequestHead(head, &r, &why), HeadParse::kOk) << why << head;
  return DecideWebRequest(p, r);
}

TEST(WebRequest, TheHeadIsParsedOrRefusedAtOnce) {
  ProxyRequest r;
  std::string why;
  EXPECT_EQ(ParseRequestHead("CONNECT a.example.com:443 HTTP/1.1\r\nHost: x\r\n", &r, &why),
            HeadParse::kNeedMore);
  ASSERT_EQ(ParseRequestHead("CONNECT a.example.com:443 HTTP/1.1\r\nHost: x\r\n\r\nbody", &r, &why),
            HeadParse::kOk);
  EXPECT_EQ(r.method, "CONNECT");
  EXPECT_EQ(r.target, "a.example.com:443");
  EXPECT_EQ(r.head_bytes, 47u);
  // Not HTTP: refused on the first bytes, without waiting for a blank line.
  EXPECT_EQ(ParseRequestHead("\x16\x03\x01", &r, &why), HeadParse::kBad);
  EXPECT_EQ(ParseRequestHead("SSH-2.0-OpenSSH", &r, &why), HeadParse::kBad);
  EXPECT_EQ(ParseRequestHead("hello", &r, &why), HeadParse::kBad);
  EXPECT_EQ(ParseRequestHead("GET / HTTP/2\r\n\r\n", &r, &why), HeadParse::kBad);
  EXPECT_EQ(ParseRequestHead("GET http://a.com/ HTTP/1.1\r\n folded\r\n\r\n", &r, &why),
            HeadParse::kBad);
  EXPECT_EQ(ParseRequestHead("GET " + std::string(40000, 'a'), &r, &why), HeadParse::kBad);
}

TEST(WebRequest, PublicWebDecisions) {
  const Policy p = Mode("public-web");
  struct Case {
    const char* head;
    int status;
    const char* says;
  } cases[] = {
      {"CONNECT a.example.com:443 HTTP/1.1\r\n\r\n", 0, ""},
      {"GET http://a.example.com/x?y HTTP/1.1\r\n\r\n", 0, ""},
      {"HEAD http://a.example.com:8080/ HTTP/1.1\r\n\r\n", 0, ""},
      {"POST http://a.example.com/ HTTP/1.1\r\n\r\n", 405, "read only"},
      {"PUT http://a.example.com/ HTTP/1.1\r\n\r\n", 405, "read only"},
      {"CONNECT a.example.com:22 HTTP/1.1\r\n\r\n", 403, "port 22"},
      {"CONNECT 10.0.0.1:443 HTTP/1.1\r\n\r\n", 403, "private"},
      {"CONNECT [::ffff:10.0.0.1]:443 HTTP/1.1\r\n\r\n", 403, "private"},
      {"CONNECT 169.254.169.254:443 HTTP/1.1\r\n\r\n", 403, "link-local"},
      {"GET http://0x7f.1/ HTTP/1.1\r\n\r\n", 403, "loopback"},
      {"GET http://user:pw@a.example.com/ HTTP/1.1\r\n\r\n", 403, "credentials"},
      {"CONNECT user@a.example.com:443 HTTP/1.1\r\n\r\n", 400, "host:port"},
      {"GET http://db.internal/ HTTP/1.1\r\n\r\n", 403, "internal"},
      {"GET http://printer/ HTTP/1.1\r\n\r\n", 403, "single-label"},
      {"GET https://a.example.com/ HTTP/1.1\r\n\r\n", 400, "CONNECT"},
      {"GET /index.html HTTP/1.1\r\n\r\n", 400, "absolute"},
      {"GET ftp://a.example.com/ HTTP/1.1\r\n\r\n", 403, "scheme"},
  };
  for (const Case& c : cases) {
    WebVerdict v = Decide(p, c.head);
    EXPECT_EQ(v.status, c.status) << c.head << v.reason;
    EXPECT_THAT(v.reason, HasSubstr(c.says)) << c.head;
  }
}

// Each refusal's hint (issue 24 item 6): the grant that lets that request
// through, in command-line words; none for a malformed request.
TEST(WebRequest, EachRefusalNamesTheGrantThatLetsItThrough) {
  const Policy web = Mode("public-web");
  const Policy hosts = Mode("hosts:registry.example.org,*.pkg.example.com");
  struct Case {
    const Policy* p;
    const char* head;
    const char* hint;
  } cases[] = {
      {&hosts, "CONNECT evil.example.net:443 HTTP/1.1\r\n\r\n",
       "to allow it: --network hosts:registry.example.org,*.pkg.example.com,evil.example.net"},
      {&web, "POST http://a.example.com/ HTTP/1.1\r\n\r\n",
       "to allow it: --network hosts:a.example.com"},
      {&web, "CONNECT a.example.com:22 HTTP/1.1\r\n\r\n", "to allow it: --network allow"},
      {&hosts, "CONNECT 10.0.0.1:443 HTTP/1.1\r\n\r\n", "to allow it: --network allow"},
      {&web, "GET http://user:pw@a.example.com/ HTTP/1.1\r\n\r\n", "to allow it: --network allow"},
      {&web, "GET http://db.internal/ HTTP/1.1\r\n\r\n", "to allow it: --network allow"},
      {&web, "GET /index.html HTTP/1.1\r\n\r\n", ""},
      {&web, "CONNECT a.example.com:443 HTTP/1.1\r\n\r\n", ""},
  };
  for (const Case& c : cases) EXPECT_EQ(Decide(*c.p, c.head).hint, c.hint) << c.head;
  EXPECT_EQ(WebHint(hosts, WebRefusal::kNoWebGrant, "registry.example.org"),
            "to allow it: --network allow");
}

TEST(WebRequest, HostsAllowsTheListedNamesOnlyAndEveryMethod) {
  const Policy p = Mode("hosts:registry.example.org,*.pkg.example.com");
  EXPECT_EQ(Decide(p, "CONNECT registry.example.org:443 HTTP/1.1\r\n\r\n").status, 0);
  EXPECT_EQ(Decide(p, "CONNECT a.pkg.example.com:443 HTTP/1.1\r\n\r\n").status, 0);
  EXPECT_EQ(Decide(p, "POST http://registry.example.org/ HTTP/1.1\r\n\r\n").status, 0);
  EXPECT_EQ(Decide(p, "CONNECT pkg.example.com:443 HTTP/1.1\r\n\r\n").status, 403);
  EXPECT_EQ(Decide(p, "CONNECT evil.example.net:443 HTTP/1.1\r\n\r\n").status, 403);
  EXPECT_EQ(Decide(p, "GET http://93.184.216.34/ HTTP/1.1\r\n\r\n").status, 403);
  Policy more = p;
  more.web.ports = {443, 8443};
  EXPECT_EQ(Decide(more, "CONNECT registry.example.org:8443 HTTP/1.1\r\n\r\n").status, 0);
  EXPECT_EQ(Decide(more, "CONNECT registry.example.org:80 HTTP/1.1\r\n\r\n").status, 403);
  EXPECT_EQ(Decide(Mode("none"), "CONNECT registry.example.org:443 HTTP/1.1\r\n\r\n").status, 403);
}

TEST(WebRequest, EveryResolvedAddressMustBePublic) {
  auto ip = [](const char* t) { return *ParseIpLiteral(t); };
  EXPECT_EQ(CheckResolved({ip("93.184.216.34"), ip("2606:2800:220:1::1")}, std::nullopt), "");
  EXPECT_THAT(CheckResolved({ip("93.184.216.34"), ip("10.1.2.3")}, std::nullopt),
              HasSubstr("10.1.2.3, private"));
  EXPECT_THAT(CheckResolved({ip("::ffff:192.168.0.1")}, std::nullopt), HasSubstr("private"));
  EXPECT_THAT(CheckResolved({ip("64:ff9b::a9fe:a9fe")}, std::nullopt), HasSubstr("link-local"));
  EXPECT_THAT(CheckResolved({}, std::nullopt), HasSubstr("no address"));
  auto test_range = ParseIpPrefix("127.0.0.1/32");
  ASSERT_TRUE(test_range);
  EXPECT_EQ(CheckResolved({ip("127.0.0.1")}, test_range), "");
  EXPECT_THAT(CheckResolved({ip("127.0.0.2")}, test_range), HasSubstr("loopback"));
}

TEST(WebRequest, UpstreamHeadIsOriginFormWithoutHopByHopHeaders) {
  ProxyRequest r;
  std::string why;
  ASSERT_EQ(ParseRequestHead("GET http://a.example.com:8080/p?q HTTP/1.1\r\nHost: evil.example\r\n"
                             "Proxy-Authorization: x\r\nConnection: keep-alive, X-Drop\r\n"
                             "X-Drop: 1\r\nAccept: */*\r\nContent-Length: 3\r\n\r\n",
                             &r, &why),
            HeadParse::kOk);
  WebVerdict v = DecideWebRequest(Mode("public-web"), r);
  ASSERT_EQ(v.status, 0);
  std::string up = UpstreamRequestHead(r, v.url, true);
  EXPECT_EQ(up, "GET /p?q HTTP/1.1\r\nHost: a.example.com:8080\r\nAccept: */*\r\nConnection: close\r\n\r\n");
  EXPECT_THAT(UpstreamRequestHead(r, v.url, false), HasSubstr("Content-Length: 3\r\n"));
}

TEST(WebRequest, ResponseHeadsAndRedirects) {
  ResponseHead h;
  ASSERT_EQ(ParseResponseHead("HTTP/1.1 302 Found\r\nLocation: /next\r\nContent-Length: 0\r\n\r\n", &h),
            HeadParse::kOk);
  EXPECT_EQ(h.status, 302);
  EXPECT_EQ(h.location, "/next");
  EXPECT_EQ(h.content_length, 0u);
  EXPECT_EQ(ParseResponseHead("HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", &h),
            HeadParse::kBad);
  EXPECT_EQ(ParseResponseHead("SSH-2.0\r\n\r\n", &h), HeadParse::kBad);
  WebUrl from = *CheckWebUrl("http://a.example.com/x").url;
  EXPECT_TRUE(SameOrigin(from, "/y"));
  EXPECT_TRUE(SameOrigin(from, "y?z"));
  EXPECT_TRUE(SameOrigin(from, "http://A.example.com:80/z"));
  EXPECT_TRUE(SameOrigin(from, "//a.example.com/z"));
  EXPECT_FALSE(SameOrigin(from, "https://a.example.com/z")) << "another scheme";
  EXPECT_FALSE(SameOrigin(from, "http://a.example.com:81/z")) << "another port";
  EXPECT_FALSE(SameOrigin(from, "http://b.example.com/z"));
  EXPECT_FALSE(SameOrigin(from, "//b.example.com/z"));
  EXPECT_FALSE(SameOrigin(from, "http://169.254.169.254/latest"));
  EXPECT_FALSE(SameOrigin(from, "javascript:alert(1)"));
  EXPECT_FALSE(SameOrigin(from, "/\\b.example.com"));
  WebUrl deep = *CheckWebUrl("https://a.example.com:8443/d/e?q").url;
  EXPECT_EQ(ResolveLocation(deep, "/x"), "https://a.example.com:8443/x");
  EXPECT_EQ(ResolveLocation(deep, "f"), "https://a.example.com:8443/d/f");
  EXPECT_EQ(ResolveLocation(deep, "?r"), "https://a.example.com:8443/d/e?r");
  EXPECT_EQ(ResolveLocation(deep, "//b.example.com/y"), "https://b.example.com/y");
  EXPECT_EQ(ResolveLocation(deep, "http://c.example.com/"), "http://c.example.com/");
}

}  // namespace
}  // namespace cordon::policy
