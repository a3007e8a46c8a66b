// The early URL refusal of seed 002's public web grant (issue 25 items 3
// and 4), before anything resolves or connects: http and https only, a
// bounded length, no credentials, no host literal that is not public (in
// any of inet_aton's spellings), no internal name (single-label names,
// localhost and the suffixes that name a LAN: .local, .internal,
// .localhost, .home.arpa, ...). What passes still has every resolved
// address checked (policy/net_address.h). And the `hosts:` grant's list:
// exact names and *.suffix patterns. Pure.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cordon::policy {

inline constexpr size_t kMaxUrlBytes = 2048;

struct WebUrl {
  std::string scheme;  // "http" or "https"
  std::string host;    // lower case, no trailing dot; an IPv6 literal without brackets
  bool host_is_ip = false;
  uint16_t port = 0;   // the scheme's default when the URL names none
  std::string target;  // path and query, "/" at least; the fragment dropped
  std::string Origin() const;  // scheme://host:port
};

struct UrlCheck {
  std::optional<WebUrl> url;  // set when admitted
  std::string refusal;        // why not, one line, when not
};

UrlCheck CheckWebUrl(std::string_view text);

// Why `host` (lower case, no trailing dot) is an internal name, or empty.
std::string InternalHostReason(std::string_view host);

struct HostPattern {
  std::string name;     // lower case
  bool suffix = false;  // "*.name": any name beneath it, not the name itself
  bool operator==(const HostPattern&) const = default;
};

// "github.com,*.npmjs.org": the patterns, or an error naming the bad entry
// (empty, an IP literal, a bare '*', a '*' elsewhere than a leading "*.",
// a character no host name has).
std::optional<std::vector<HostPattern>> ParseHostList(std::string_view text, std::string* error);

bool HostAllowed(const std::vector<HostPattern>& patterns, std::string_view host);

}  // namespace cordon::policy
