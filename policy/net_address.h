// Which addresses are on the public internet (issue 25 item 3): the check
// the web grants' proxy and `cordon fetch` make on every address a name
// resolves to, and on a host literal before anything resolves. An address
// is public unless it lies in a range that is not globally reachable:
// loopback, RFC 1918, link-local (169.254.169.254, the cloud metadata
// service, among them), CGNAT, unique-local, multicast, benchmarking,
// documentation, reserved, 0/8, and every IPv6 form that embeds an IPv4
// address of those (IPv4-mapped, IPv4-compatible, NAT64, 6to4). Pure.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace cordon::policy {

struct IpAddress {
  bool v6 = false;
  std::array<uint8_t, 16> bytes{};  // v4: the first 4, network order
  bool operator==(const IpAddress&) const = default;
};

struct AddressRange {
  bool global = true;
  const char* name = "global";   // "loopback", "private (RFC 1918)", ...
  const char* range = "";        // "127.0.0.0/8"; empty when global
};

// The range `a` lies in; for an IPv6 form that embeds an IPv4 address,
// the embedded address's range when that is not global.
AddressRange ClassifyAddress(const IpAddress& a);

inline bool IsGlobal(const IpAddress& a) { return ClassifyAddress(a).global; }

// A host literal as a URL or a resolver may spell it: dotted IPv4 in
// inet_aton(3)'s forms too (2130706433, 0x7f.1, 0177.0.0.1: each names
// 127.0.0.1 to curl and to glibc), or IPv6 with or without brackets (no
// zone index). nullopt when it is not an address.
std::optional<IpAddress> ParseIpLiteral(std::string_view text);

std::string FormatIp(const IpAddress& a);

// "192.0.2.0/24", "2001:db8::/32": an address and a prefix length.
struct IpPrefix {
  IpAddress base;
  int bits = 0;
};
std::optional<IpPrefix> ParseIpPrefix(std::string_view text);
// Same family, and the first `p.bits` bits equal.
bool InPrefix(const IpAddress& a, const IpPrefix& p);

}  // namespace cordon::policy
