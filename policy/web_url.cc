#include "policy/web_url.h"

#include "policy/net_address.h"

namespace cordon::policy {
namespace {

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

bool HostChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_';
}

bool EndsWithLabel(std::string_view host, std::string_view suffix) {
  return host == suffix ||
         (host.size() > suffix.size() && host.ends_with(suffix) &&
          host[host.size() - suffix.size() - 1] == '.');
}

// A host name as DNS spells it: labels of 1-63 of [a-z0-9-_], 253 in all.
bool ValidName(std::string_view host) {
  if (host.empty() || host.size() > 253) return false;
  size_t label = 0;
  for (char c : host) {
    if (!HostChar(c)) return false;
    if (c == '.') {
      if (label == 0) return false;
      label = 0;
    } else if (++label > 63) {
      return false;
    }
  }
  return label > 0;
}

}  // namespace

std::string WebUrl::Origin() const { return scheme + "://" + host + ":" + std::to_string(port); }

std::string InternalHostReason(std::string_view host) {
  static constexpr std::string_view kInternal[] = {
      "localhost", "local",    "internal", "home.arpa", "lan",     "intranet",
      "corp",      "private",  "localdomain", "in-addr.arpa", "ip6.arpa", "onion"};
  for (std::string_view s : kInternal) {
    if (EndsWithLabel(host, s)) return "an internal name (." + std::string(s) + ")";
  }
  if (host.find('.') == std::string_view::npos) {
    return "a single-label name (the resolver's search domains make it a local host)";
  }
  return {};
}

UrlCheck CheckWebUrl(std::string_view text) {
  auto refuse = [](std::string why) { return UrlCheck{std::nullopt, std::move(why)}; };
  if (text.size() > kMaxUrlBytes) {
    return refuse("longer than " + std::to_string(kMaxUrlBytes) + " bytes");
  }
  for (char c : text) {
    if (static_cast<unsigned char>(c) <= 0x20 || c == 0x7f) return refuse("a control character or space");
  }
  const size_t colon = text.find("://");
  if (colon == std::string_view::npos) return refuse("not an absolute http(s) URL");
  WebUrl u;
  u.scheme = Lower(text.substr(0, colon));
  if (u.scheme != "http" && u.scheme != "https") return refuse("scheme " + u.scheme + ": only http and https");
  std::string_view rest = text.substr(colon + 3);
  const size_t end = rest.find_first_of("/?#");
  std::string_view authority = rest.substr(0, end);
  std::string_view tail = end == std::string_view::npos ? std::string_view() : rest.substr(end);
  if (authority.find('@') != std::string_view::npos) return refuse("credentials in the URL");
  if (authority.find('%') != std::string_view::npos) return refuse("a percent-encoded host");
  if (authority.find('\\') != std::string_view::npos) return refuse("a backslash in the host");
  std::string_view host = authority, port;
  if (!authority.empty() && authority[0] == '[') {
    const size_t close = authority.find(']');
    if (close == std::string_view::npos) return refuse("an unclosed IPv6 literal");
    host = authority.substr(0, close + 1);
    std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after[0] != ':') return refuse("junk after the IPv6 literal");
      port = after.substr(1);
    }
  } else if (const size_t c = authority.rfind(':'); c != std::string_view::npos) {
    host = authority.substr(0, c);
    port = authority.substr(c + 1);
  }
  u.port = u.scheme == "https" ? 443 : 80;
  if (!port.empty()) {
    uint32_t p = 0;
    for (char c : port) {
      if (c < '0' || c > '9' || (p = p * 10 + static_cast<uint32_t>(c - '0')) > 65535) {
        return refuse("a bad port");
      }
    }
    if (p == 0) return refuse("port 0");
    u.port = static_cast<uint16_t>(p);
  } else if (authority.ends_with(":")) {
    return refuse("an empty port");
  }
  if (host.empty()) return refuse("no host");
  if (auto ip = ParseIpLiteral(host)) {
    AddressRange r = ClassifyAddress(*ip);
    if (!r.global) {
      return refuse("host " + FormatIp(*ip) + " is " + r.name + " (" + r.range + "), not public");
    }
    u.host = FormatIp(*ip);
    u.host_is_ip = true;
  } else {
    if (host.front() == '[') return refuse("a malformed IPv6 literal");
    std::string h = Lower(host);
    if (h.ends_with(".")) h.pop_back();
    for (char c : h) {
      if (static_cast<unsigned char>(c) >= 0x80) {
        return refuse("a non-ASCII host: give its punycode (xn--) form");
      }
    }
    if (!ValidName(h)) return refuse("host " + h + " is not a host name");
    // A name whose last label is all digits would be read as an address.
    const std::string_view last = std::string_view(h).substr(h.rfind('.') + 1);
    if (last.find_first_not_of("0123456789") == std::string_view::npos || last.starts_with("0x")) {
      return refuse("host " + h + " looks like an address but is not one");
    }
    if (std::string why = InternalHostReason(h); !why.empty()) {
      return refuse("host " + h + " is " + why);
    }
    u.host = std::move(h);
  }
  std::string_view target = tail.substr(0, tail.find('#'));
  u.target = target.empty() || target[0] == '?' ? "/" + std::string(target) : std::string(target);
  return UrlCheck{std::move(u), {}};
}

std::optional<std::vector<HostPattern>> ParseHostList(std::string_view text, std::string* error) {
  std::vector<HostPattern> out;
  auto fail = [&](std::string why) -> std::optional<std::vector<HostPattern>> {
    if (error) *error = std::move(why);
    return std::nullopt;
  };
  if (text.empty()) return fail("the hosts list is empty");
  size_t pos = 0;
  while (pos <= text.size()) {
    const size_t comma = text.find(',', pos);
    std::string_view entry = text.substr(pos, comma == std::string_view::npos ? comma : comma - pos);
    pos = comma == std::string_view::npos ? text.size() + 1 : comma + 1;
    if (entry.empty()) return fail("an empty entry in the hosts list");
    HostPattern p;
    std::string name = Lower(entry);
    if (name.starts_with("*.")) {
      p.suffix = true;
      name = name.substr(2);
    }
    if (name.ends_with(".")) name.pop_back();
    if (ParseIpLiteral(name)) {
      return fail(std::string(entry) + ": an address; the hosts list takes names (addresses are checked as they resolve)");
    }
    if (name.find('*') != std::string::npos) {
      return fail(std::string(entry) + ": '*' only as a leading \"*.\"");
    }
    if (!ValidName(name)) return fail(std::string(entry) + ": not a host name");
    if (p.suffix && name.find('.') == std::string::npos) {
      return fail(std::string(entry) + ": a pattern for a whole top-level domain");
    }
    p.name = std::move(name);
    out.push_back(std::move(p));
  }
  return out;
}

bool HostAllowed(const std::vector<HostPattern>& patterns, std::string_view host) {
  std::string h = Lower(host);
  if (h.ends_with(".")) h.pop_back();
  for (const HostPattern& p : patterns) {
    if (!p.suffix && h == p.name) return true;
    if (p.suffix && h.size() > p.name.size() && EndsWithLabel(h, p.name)) return true;
  }
  return false;
}

}  // namespace cordon::policy
