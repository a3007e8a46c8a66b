// What the web proxy decides (issue 25 items 2 and 3), from the bytes a
// client sent and the facts the proxy gathered; the proxy
// (supervisor/net/) does the I/O. A request is one of:
//   CONNECT host:port           a tunnel, for https
//   METHOD http://host[:port]/… absolute-form, for plain http
// Under public-web any public name, and plain http GET and HEAD only (read
// only where the proxy can see it); under hosts: the listed names, every
// method. Each name passes the early URL refusal (policy/web_url.h) and a
// CONNECT names a port of the grant. Pure.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "policy/net_address.h"
#include "policy/policy.h"
#include "policy/web_url.h"

namespace cordon::policy {

// The most a request head or a response head may take.
inline constexpr size_t kMaxHeadBytes = 32768;

struct Header {
  std::string name;  // as sent
  std::string value;  // surrounding blanks trimmed
};

struct ProxyRequest {
  std::string method;
  std::string target;   // as sent: "host:port" or an absolute URL
  std::string version;  // "HTTP/1.1"
  std::vector<Header> headers;
  size_t head_bytes = 0;  // through the blank line
};

enum class HeadParse { kNeedMore, kOk, kBad };

// The request head at the start of `bytes`; on kBad, *why says what is
// wrong in one line (not HTTP, too long, a bad header line).
HeadParse ParseRequestHead(std::string_view bytes, ProxyRequest* out, std::string* why);

struct WebVerdict {
  int status = 0;        // 0: allowed; else the HTTP status the proxy answers
  std::string reason;    // one line: why refused, for the answer and the audit
  // The grant that lets it through, in command-line words ("to allow it:
  // --network hosts:a.org,b.org"; WebHint), for cordon's refusal line.
  std::string hint;
  bool connect = false;  // a CONNECT tunnel
  WebUrl url;            // the destination (a CONNECT's: https://host:port/)
};

// Decides a request under `p`'s network mode and web grant (p.network,
// p.web: nothing else is read).
WebVerdict DecideWebRequest(const Policy& p, const ProxyRequest& r);

// The hint for a request to `host` that `p`'s web grant refused: a name
// missing from hosts: adds it to the list (every other name kept);
// another method than GET and HEAD under public-web takes hosts:HOST,
// which allows every method for that name; what no web grant lets
// through (a non-public address or literal, a port the grant does not
// name, credentials in the URL) takes --network allow, the host's network.
enum class WebRefusal { kNotListed, kReadOnly, kNoWebGrant };
std::string WebHint(const Policy& p, WebRefusal why, std::string_view host);

// Every address a name resolved to must be public (an address in
// `also_public`, the test build's declared range, counts as public). The
// first that is not is the refusal, or the list is empty: "" when all pass.
std::string CheckResolved(const std::vector<IpAddress>& addrs,
                          const std::optional<IpPrefix>& also_public);

// The request as the proxy sends it upstream: origin-form target, the
// client's headers but hop-by-hop and proxy ones, and Connection: close
// (one request per connection, so the response ends at end of stream).
// `no_body`: the framing headers (Content-Length, Transfer-Encoding)
// dropped too, for a request whose body is not passed on.
std::string UpstreamRequestHead(const ProxyRequest& r, const WebUrl& url, bool no_body);

struct ResponseHead {
  int status = 0;
  std::optional<uint64_t> content_length;
  std::string location;
  size_t head_bytes = 0;
};

// A response's status line and the headers the proxy looks at.
HeadParse ParseResponseHead(std::string_view bytes, ResponseHead* out);

// Whether a redirect from `from` to `location` (absolute, or relative to
// `from`) stays on the same origin (scheme, host, port). A refused URL is
// another origin.
bool SameOrigin(const WebUrl& from, std::string_view location);

// `location` (a redirect's, absolute or relative) as an absolute URL
// against `from`. Pure string work: the result still goes through
// CheckWebUrl.
std::string ResolveLocation(const WebUrl& from, std::string_view location);

// A complete answer from the proxy itself: status line, Connection:
// close, a text/plain body of `reason` and a newline.
std::string ProxyAnswer(int status, std::string_view reason);

}  // namespace cordon::policy
