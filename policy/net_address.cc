#include "policy/net_address.h"

#include <algorithm>
#include <cstdio>

namespace cordon::policy {
namespace {

struct V4Range {
  uint32_t base;
  int bits;
  const char* name;
  const char* text;
};

// IANA's IPv4 special-purpose registry, the ranges not globally reachable
// (and 192.88.99.0/24, the retired 6to4 relay anycast).
constexpr V4Range kV4[] = {
    {0x00000000, 8, "this network", "0.0.0.0/8"},
    {0x0A000000, 8, "private (RFC 1918)", "10.0.0.0/8"},
    {0x64400000, 10, "shared address space (CGNAT)", "100.64.0.0/10"},
    {0x7F000000, 8, "loopback", "127.0.0.0/8"},
    {0xA9FE0000, 16, "link-local (cloud metadata)", "169.254.0.0/16"},
    {0xAC100000, 12, "private (RFC 1918)", "172.16.0.0/12"},
    {0xC0000000, 24, "IETF protocol assignments", "192.0.0.0/24"},
    {0xC0000200, 24, "documentation", "192.0.2.0/24"},
    {0xC0586300, 24, "6to4 relay anycast", "192.88.99.0/24"},
    {0xC0A80000, 16, "private (RFC 1918)", "192.168.0.0/16"},
    {0xC6120000, 15, "benchmarking", "198.18.0.0/15"},
    {0xC6336400, 24, "documentation", "198.51.100.0/24"},
    {0xCB007100, 24, "documentation", "203.0.113.0/24"},
    {0xE0000000, 4, "multicast", "224.0.0.0/4"},
    {0xF0000000, 4, "reserved", "240.0.0.0/4"},  // 255.255.255.255 included
};

struct V6Range {
  std::array<uint8_t, 16> base;
  int bits;
  const char* name;
  const char* text;
};

constexpr V6Range kV6[] = {
    {{}, 128, "unspecified", "::/128"},
    {{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}, 128, "loopback", "::1/128"},
    {{0, 0x64, 0xff, 0x9b, 0, 1}, 48, "local-use NAT64", "64:ff9b:1::/48"},
    {{0x01, 0x00}, 64, "discard-only", "100::/64"},
    {{0x20, 0x01, 0x0d, 0xb8}, 32, "documentation", "2001:db8::/32"},
    {{0x20, 0x01, 0x00, 0x00}, 23, "IETF protocol assignments (Teredo, ...)", "2001::/23"},
    {{0x3f, 0xff}, 20, "documentation", "3fff::/20"},
    {{0x5f, 0x00}, 16, "segment routing", "5f00::/16"},
    {{0xfc}, 7, "unique local", "fc00::/7"},
    {{0xfe, 0x80}, 10, "link-local", "fe80::/10"},
    {{0xfe, 0xc0}, 10, "site-local", "fec0::/10"},
    {{0xff}, 8, "multicast", "ff00::/8"},
};

bool InPrefix(const uint8_t* a, const uint8_t* base, int bits) {
  for (int i = 0; bits > 0; ++i, bits -= 8) {
    const uint8_t mask = bits >= 8 ? 0xff : static_cast<uint8_t>(0xff << (8 - bits));
    if ((a[i] & mask) != (base[i] & mask)) return false;
  }
  return true;
}

AddressRange ClassifyV4(const uint8_t* b) {
  const uint32_t v = (uint32_t{b[0]} << 24) | (uint32_t{b[1]} << 16) | (uint32_t{b[2]} << 8) | b[3];
  for (const V4Range& r : kV4) {
    const uint32_t mask = r.bits == 0 ? 0 : ~uint32_t{0} << (32 - r.bits);
    if ((v & mask) == r.base) return {false, r.name, r.text};
  }
  return {};
}

bool AllZero(const uint8_t* b, int n) {
  for (int i = 0; i < n; ++i) {
    if (b[i] != 0) return false;
  }
  return true;
}

// The IPv4 address an IPv6 form carries, and which form.
const uint8_t* EmbeddedV4(const std::array<uint8_t, 16>& a, const char** form) {
  static constexpr uint8_t kMapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  static constexpr uint8_t kNat64[12] = {0, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0};
  if (InPrefix(a.data(), kMapped, 96)) return *form = "IPv4-mapped", a.data() + 12;
  if (InPrefix(a.data(), kNat64, 96)) return *form = "NAT64", a.data() + 12;
  if (a[0] == 0x20 && a[1] == 0x02) return *form = "6to4", a.data() + 2;
  // ::a.b.c.d, IPv4-compatible (deprecated); :: and ::1 are classified first.
  if (AllZero(a.data(), 12)) return *form = "IPv4-compatible", a.data() + 12;
  return nullptr;
}

}  // namespace

AddressRange ClassifyAddress(const IpAddress& a) {
  if (!a.v6) return ClassifyV4(a.bytes.data());
  for (const V6Range& r : kV6) {
    if (InPrefix(a.bytes.data(), r.base.data(), r.bits)) return {false, r.name, r.text};
  }
  const char* form = nullptr;
  if (const uint8_t* v4 = EmbeddedV4(a.bytes, &form)) {
    AddressRange inner = ClassifyV4(v4);
    if (!inner.global) return inner;
    // IPv4-compatible addresses are deprecated and routed nowhere.
    if (std::string_view(form) == "IPv4-compatible") {
      return {false, "IPv4-compatible (deprecated)", "::/96"};
    }
  }
  return {};
}

std::optional<IpAddress> ParseIpLiteral(std::string_view text) {
  if (text.size() >= 2 && text.front() == '[' && text.back() == ']') {
    text = text.substr(1, text.size() - 2);
    if (text.find(':') == std::string_view::npos) return std::nullopt;
  }
  if (text.empty() || text.size() > 45) return std::nullopt;
  IpAddress out;
  if (text.find(':') == std::string_view::npos) {
    // inet_aton: 1 to 4 parts, each decimal, octal (0...) or hex (0x...);
    // the last part fills the bytes left.
    uint64_t parts[4];
    int n = 0;
    size_t pos = 0;
    while (true) {
      if (n == 4 || pos >= text.size()) return std::nullopt;
      int base = 10;
      if (text[pos] == '0' && pos + 1 < text.size() && (text[pos + 1] == 'x' || text[pos + 1] == 'X')) {
        base = 16;
        pos += 2;
      } else if (text[pos] == '0' && pos + 1 < text.size() && text[pos + 1] != '.') {
        base = 8;
        ++pos;
      }
      uint64_t v = 0;
      size_t digits = 0;
      for (; pos < text.size() && text[pos] != '.'; ++pos, ++digits) {
        const char c = text[pos];
        int d = c >= '0' && c <= '9' ? c - '0'
                : c >= 'a' && c <= 'f' ? c - 'a' + 10
                : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                       : 99;
        if (d >= base) return std::nullopt;
        v = v * base + d;
        if (v > 0xffffffffu) return std::nullopt;
      }
      if (digits == 0 && base != 8) return std::nullopt;
      parts[n++] = v;
      if (pos == text.size()) break;
      ++pos;  // '.'
    }
    uint32_t addr = 0;
    for (int i = 0; i < n - 1; ++i) {
      if (parts[i] > 0xff) return std::nullopt;
      addr |= static_cast<uint32_t>(parts[i]) << (24 - 8 * i);
    }
    const int left_bits = 32 - 8 * (n - 1);
    if (left_bits < 32 && parts[n - 1] >> left_bits) return std::nullopt;
    addr |= static_cast<uint32_t>(parts[n - 1]);
    for (int i = 0; i < 4; ++i) out.bytes[i] = static_cast<uint8_t>(addr >> (24 - 8 * i));
    return out;
  }
  // IPv6: up to 8 groups of 1-4 hex digits, one "::", an IPv4 tail.
  out.v6 = true;
  uint8_t head[16] = {}, tail[16] = {};
  int nh = 0, nt = 0;
  bool gap = false;
  size_t pos = 0;
  if (text.substr(0, 2) == "::") {
    gap = true;
    pos = 2;
  } else if (text[0] == ':') {
    return std::nullopt;
  }
  while (pos < text.size()) {
    uint8_t* dst = gap ? tail : head;
    int& n = gap ? nt : nh;
    size_t end = text.find(':', pos);
    std::string_view group = text.substr(pos, end == std::string_view::npos ? end : end - pos);
    if (group.find('.') != std::string_view::npos) {
      if (end != std::string_view::npos || n + (gap ? nh : 0) > 12) return std::nullopt;
      auto v4 = ParseIpLiteral(group);
      // The tail is strict dotted decimal: four parts.
      if (!v4 || v4->v6 || std::count(group.begin(), group.end(), '.') != 3) return std::nullopt;
      for (int i = 0; i < 4; ++i) dst[n++] = v4->bytes[i];
      pos = text.size();
      break;
    }
    if (group.empty() || group.size() > 4 || n >= 16) return std::nullopt;
    unsigned v = 0;
    for (char c : group) {
      int d = c >= '0' && c <= '9' ? c - '0'
              : c >= 'a' && c <= 'f' ? c - 'a' + 10
              : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                     : -1;
      if (d < 0) return std::nullopt;
      v = v * 16 + static_cast<unsigned>(d);
    }
    dst[n++] = static_cast<uint8_t>(v >> 8);
    dst[n++] = static_cast<uint8_t>(v);
    if (end == std::string_view::npos) {
      pos = text.size();
      break;
    }
    pos = end + 1;
    if (pos < text.size() && text[pos] == ':') {
      if (gap) return std::nullopt;  // a second "::"
      gap = true;
      ++pos;
      if (pos == text.size()) break;
    } else if (pos == text.size()) {
      return std::nullopt;  // a trailing single ':'
    }
  }
  if (gap ? nh + nt > 14 : nh != 16) return std::nullopt;
  for (int i = 0; i < nh; ++i) out.bytes[i] = head[i];
  for (int i = 0; i < nt; ++i) out.bytes[16 - nt + i] = tail[i];
  return out;
}

std::string FormatIp(const IpAddress& a) {
  char buf[64];
  if (!a.v6) {
    std::snprintf(buf, sizeof buf, "%u.%u.%u.%u", a.bytes[0], a.bytes[1], a.bytes[2], a.bytes[3]);
    return buf;
  }
  std::string out;
  for (int i = 0; i < 16; i += 2) {
    std::snprintf(buf, sizeof buf, "%s%x", i ? ":" : "", (a.bytes[i] << 8) | a.bytes[i + 1]);
    out += buf;
  }
  return out;
}

std::optional<IpPrefix> ParseIpPrefix(std::string_view text) {
  const size_t slash = text.find('/');
  if (slash == std::string_view::npos) return std::nullopt;
  auto base = ParseIpLiteral(text.substr(0, slash));
  std::string_view len = text.substr(slash + 1);
  if (!base || len.empty() || len.size() > 3) return std::nullopt;
  int bits = 0;
  for (char c : len) {
    if (c < '0' || c > '9') return std::nullopt;
    bits = bits * 10 + (c - '0');
  }
  if (bits > (base->v6 ? 128 : 32)) return std::nullopt;
  return IpPrefix{*base, bits};
}

bool InPrefix(const IpAddress& a, const IpPrefix& p) {
  return a.v6 == p.base.v6 && InPrefix(a.bytes.data(), p.base.bytes.data(), p.bits);
}

}  // namespace cordon::policy
