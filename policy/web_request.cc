#include "policy/web_request.h"

#include <algorithm>

#include "policy/network_mode.h"

namespace cordon::policy {
namespace {

char Fold(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

bool EqualFold(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(),
                                            [](char x, char y) { return Fold(x) == Fold(y); });
}

bool TokenChar(char c) {
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) return true;
  return std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// The header lines between the first line and the blank one: false on a
// malformed line (no colon, a blank before it, a folded line, a control
// character).
bool ParseHeaders(std::string_view lines, std::vector<Header>* out) {
  size_t pos = 0;
  while (pos < lines.size()) {
    size_t end = lines.find("\r\n", pos);
    if (end == std::string_view::npos) end = lines.size();
    std::string_view line = lines.substr(pos, end - pos);
    pos = end + 2;
    const size_t colon = line.find(':');
    if (colon == 0 || colon == std::string_view::npos) return false;
    for (char c : line.substr(0, colon)) {
      if (!TokenChar(c)) return false;
    }
    std::string_view value = Trim(line.substr(colon + 1));
    for (char c : value) {
      const auto u = static_cast<unsigned char>(c);
      if ((u < 0x20 && c != '\t') || u == 0x7f) return false;
    }
    out->push_back({std::string(line.substr(0, colon)), std::string(value)});
  }
  return true;
}

std::string StatusText(int status) {
  switch (status) {
    case 400: return "Bad Request";
    case 403: return "Forbidden";
    case 405: return "Method Not Allowed";
    case 413: return "Payload Too Large";
    case 502: return "Bad Gateway";
    case 503: return "Service Unavailable";
    case 504: return "Gateway Timeout";
  }
  return "Error";
}

bool HopByHop(std::string_view name, const std::vector<std::string>& listed) {
  static constexpr std::string_view kHop[] = {
      "host", "connection", "proxy-connection", "keep-alive", "proxy-authorization",
      "proxy-authenticate", "te", "trailer", "upgrade"};
  for (std::string_view h : kHop) {
    if (EqualFold(name, h)) return true;
  }
  for (const std::string& l : listed) {
    if (EqualFold(name, l)) return true;
  }
  return false;
}

}  // namespace

HeadParse ParseRequestHead(std::string_view bytes, ProxyRequest* out, std::string* why) {
  auto bad = [&](const char* reason) {
    *why = reason;
    return HeadParse::kBad;
  };
  // The method, as soon as its bytes arrive: a client speaking anything
  // else (TLS, SSH, a raw byte stream) is refused at once.
  for (size_t i = 0; i < bytes.size() && bytes[i] != ' '; ++i) {
    if (bytes[i] < 'A' || bytes[i] > 'Z' || i >= 16) return bad("not an HTTP request");
  }
  const size_t end = bytes.find("\r\n\r\n");
  if (end == std::string_view::npos) {
    return bytes.size() > kMaxHeadBytes ? bad("a request head longer than 32 KiB")
                                        : HeadParse::kNeedMore;
  }
  if (end + 4 > kMaxHeadBytes) return bad("a request head longer than 32 KiB");
  std::string_view head = bytes.substr(0, end);
  const size_t eol = head.find("\r\n");
  std::string_view line = head.substr(0, eol);
  const size_t sp1 = line.find(' ');
  const size_t sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
  if (sp1 == 0 || sp2 == std::string_view::npos || sp2 == sp1 + 1) return bad("not an HTTP request line");
  std::string_view version = line.substr(sp2 + 1);
  if (version != "HTTP/1.1" && version != "HTTP/1.0") return bad("not HTTP/1.0 or HTTP/1.1");
  ProxyRequest r;
  r.method = std::string(line.substr(0, sp1));
  r.target = std::string(line.substr(sp1 + 1, sp2 - sp1 - 1));
  r.version = std::string(version);
  for (char c : r.target) {
    if (static_cast<unsigned char>(c) <= 0x20 || c == 0x7f) return bad("a control character in the target");
  }
  if (eol != std::string_view::npos && !ParseHeaders(head.substr(eol + 2), &r.headers)) {
    return bad("a malformed header line");
  }
  r.head_bytes = end + 4;
  *out = std::move(r);
  return HeadParse::kOk;
}

std::string WebHint(const Policy& p, WebRefusal why, std::string_view host) {
  if (why == WebRefusal::kNoWebGrant || host.empty()) return "to allow it: --network allow";
  Policy wider;
  wider.network = Network::kHosts;
  if (why == WebRefusal::kNotListed && p.network == Network::kHosts) wider.web.hosts = p.web.hosts;
  wider.web.hosts.push_back({std::string(host), false});
  return "to allow it: --network " + FormatNetworkMode(wider);
}

WebVerdict DecideWebRequest(const Policy& p, const ProxyRequest& r) {
  WebVerdict v;
  auto refuse = [&](int status, std::string reason, WebRefusal why = WebRefusal::kNoWebGrant) {
    v.status = status;
    v.reason = std::move(reason);
    // A malformed request (400) is the client's: no grant mends it.
    if (status != 400) v.hint = WebHint(p, why, v.url.host);
    return v;
  };
  if (!NetworkProxied(p.network)) return refuse(403, "this run has no web grant");
  v.connect = r.method == "CONNECT";
  std::string text;
  if (v.connect) {
    if (r.target.find_first_of("/?#@") != std::string::npos || r.target.find(':') == std::string::npos) {
      return refuse(400, "CONNECT takes host:port");
    }
    text = "https://" + r.target + "/";
  } else {
    if (r.target.starts_with("/")) {
      return refuse(400, "not a proxy request: the target must be an absolute http:// URL");
    }
    text = r.target;
  }
  UrlCheck c = CheckWebUrl(text);
  if (!c.url) return refuse(403, (v.connect ? "CONNECT " : "") + r.target + ": " + c.refusal);
  v.url = std::move(*c.url);
  if (v.connect) {
    if (std::find(p.web.ports.begin(), p.web.ports.end(), v.url.port) == p.web.ports.end()) {
      std::string ports;
      for (uint16_t port : p.web.ports) ports += (ports.empty() ? "" : ",") + std::to_string(port);
      return refuse(403, "CONNECT to port " + std::to_string(v.url.port) + ": the grant names " +
                             ports + " (sandbox.network.ports)");
    }
  } else if (v.url.scheme != "http") {
    return refuse(400, "https through a plain request: clients use CONNECT for https");
  }
  if (p.network == Network::kHosts && !HostAllowed(p.web.hosts, v.url.host)) {
    return refuse(403, v.url.host + " is not in the run's hosts list", WebRefusal::kNotListed);
  }
  if (p.network == Network::kPublicWeb && !v.connect && r.method != "GET" && r.method != "HEAD") {
    return refuse(405, r.method + " under public-web: read only (GET and HEAD)",
                  WebRefusal::kReadOnly);
  }
  return v;
}

std::string CheckResolved(const std::vector<IpAddress>& addrs,
                          const std::optional<IpPrefix>& also_public) {
  if (addrs.empty()) return "the name resolves to no address";
  for (const IpAddress& a : addrs) {
    AddressRange r = ClassifyAddress(a);
    if (r.global || (also_public && InPrefix(a, *also_public))) continue;
    return "the name resolves to " + FormatIp(a) + ", " + r.name + " (" + r.range + "), not public";
  }
  return {};
}

std::string UpstreamRequestHead(const ProxyRequest& r, const WebUrl& url, bool no_body) {
  std::vector<std::string> listed;  // named by Connection: hop-by-hop too
  if (no_body) listed = {"content-length", "transfer-encoding", "expect"};
  for (const Header& h : r.headers) {
    if (!EqualFold(h.name, "connection")) continue;
    size_t pos = 0;
    while (pos <= h.value.size()) {
      size_t comma = h.value.find(',', pos);
      if (comma == std::string::npos) comma = h.value.size();
      listed.emplace_back(Trim(std::string_view(h.value).substr(pos, comma - pos)));
      pos = comma + 1;
    }
  }
  const bool default_port = url.port == (url.scheme == "https" ? 443 : 80);
  const std::string host = (url.host.find(':') != std::string::npos ? "[" + url.host + "]" : url.host) +
                           (default_port ? "" : ":" + std::to_string(url.port));
  std::string out = r.method + " " + url.target + " HTTP/1.1\r\nHost: " + host + "\r\n";
  for (const Header& h : r.headers) {
    if (!HopByHop(h.name, listed)) out += h.name + ": " + h.value + "\r\n";
  }
  return out + "Connection: close\r\n\r\n";
}

HeadParse ParseResponseHead(std::string_view bytes, ResponseHead* out) {
  const size_t end = bytes.find("\r\n\r\n");
  if (end == std::string_view::npos) {
    return bytes.size() > kMaxHeadBytes ? HeadParse::kBad : HeadParse::kNeedMore;
  }
  std::string_view head = bytes.substr(0, end);
  const size_t eol = head.find("\r\n");
  std::string_view line = head.substr(0, eol);
  if (!line.starts_with("HTTP/1.") || line.size() < 12 || line[8] != ' ') return HeadParse::kBad;
  int status = 0;
  for (size_t i = 9; i < 12; ++i) {
    if (line[i] < '0' || line[i] > '9') return HeadParse::kBad;
    status = status * 10 + (line[i] - '0');
  }
  std::vector<Header> headers;
  if (eol != std::string_view::npos && !ParseHeaders(head.substr(eol + 2), &headers)) {
    return HeadParse::kBad;
  }
  ResponseHead r;
  r.status = status;
  r.head_bytes = end + 4;
  for (const Header& h : headers) {
    if (EqualFold(h.name, "location")) r.location = h.value;
    if (!EqualFold(h.name, "content-length")) continue;
    uint64_t n = 0;
    if (h.value.empty() || h.value.size() > 19) return HeadParse::kBad;
    for (char c : h.value) {
      if (c < '0' || c > '9') return HeadParse::kBad;
      n = n * 10 + static_cast<uint64_t>(c - '0');
    }
    if (r.content_length && *r.content_length != n) return HeadParse::kBad;
    r.content_length = n;
  }
  *out = std::move(r);
  return HeadParse::kOk;
}

bool SameOrigin(const WebUrl& from, std::string_view location) {
  if (location.starts_with("//")) {
    UrlCheck c = CheckWebUrl(from.scheme + ":" + std::string(location));
    return c.url && c.url->Origin() == from.Origin();
  }
  // A scheme: letters, digits, + - . before the first ':' (RFC 3986 3.1).
  const size_t colon = location.find(':');
  const size_t stop = location.find_first_of("/?#");
  if (colon != std::string_view::npos && (stop == std::string_view::npos || colon < stop)) {
    UrlCheck c = CheckWebUrl(location);
    return c.url && c.url->Origin() == from.Origin();
  }
  return location.find('\\') == std::string_view::npos;  // a path on the same origin
}

std::string ResolveLocation(const WebUrl& from, std::string_view location) {
  const std::string origin = from.scheme + "://" +
                             (from.host.find(':') != std::string::npos ? "[" + from.host + "]" : from.host) +
                             ":" + std::to_string(from.port);
  if (location.starts_with("//")) return from.scheme + ":" + std::string(location);
  const size_t colon = location.find(':');
  const size_t stop = location.find_first_of("/?#");
  if (colon != std::string_view::npos && (stop == std::string_view::npos || colon < stop)) {
    return std::string(location);
  }
  if (location.starts_with("/")) return origin + std::string(location);
  std::string_view path = std::string_view(from.target).substr(0, from.target.find('?'));
  if (location.starts_with("?")) return origin + std::string(path) + std::string(location);
  return origin + std::string(path.substr(0, path.rfind('/') + 1)) + std::string(location);
}

std::string ProxyAnswer(int status, std::string_view reason) {
  const std::string body = "cordon: " + std::string(reason) + "\n";
  return "HTTP/1.1 " + std::to_string(status) + " " + StatusText(status) +
         "\r\nContent-Type: text/plain\r\nContent-Length: " + std::to_string(body.size()) +
         "\r\nConnection: close\r\n\r\n" + body;
}

}  // namespace cordon::policy
