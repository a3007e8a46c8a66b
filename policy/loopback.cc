#include "policy/loopback.h"

#include <netinet/in.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace cordon::policy {
namespace {

constexpr uint8_t kMappedPrefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

// The v4 address inside `e` (itself, or a v4-mapped v6 one): false when
// `e` is a plain v6 address.
bool V4Of(const InetEndpoint& e, uint8_t out[4]) {
  if (!e.v6) {
    std::memcpy(out, e.addr.data(), 4);
    return true;
  }
  if (std::memcmp(e.addr.data(), kMappedPrefix, sizeof kMappedPrefix) != 0) return false;
  std::memcpy(out, e.addr.data() + 12, 4);
  return true;
}

bool AllZero(const uint8_t* p, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    if (p[i] != 0) return false;
  }
  return true;
}

bool HexWord(std::string_view s, uint32_t* out) {
  uint32_t v = 0;
  if (s.empty() || s.size() > 8) return false;
  for (char c : s) {
    int d = c >= '0' && c <= '9'   ? c - '0'
            : c >= 'A' && c <= 'F' ? c - 'A' + 10
            : c >= 'a' && c <= 'f' ? c - 'a' + 10
                                   : -1;
    if (d < 0) return false;
    v = v << 4 | static_cast<uint32_t>(d);
  }
  *out = v;
  return true;
}

// "0100007F:1F90" (v4) or 32 hex digits and a port (v6). The kernel prints
// each 32-bit word of the address as it sits in memory, read as a native
// integer (seq_printf "%08X" of a __be32): copying the integer back to
// memory gives the address bytes again, whatever the byte order.
bool ParseHexEndpoint(std::string_view s, bool v6, InetEndpoint* out) {
  size_t colon = s.find(':');
  size_t digits = v6 ? 32 : 8;
  if (colon != digits) return false;
  InetEndpoint e;
  e.v6 = v6;
  for (size_t w = 0; w < digits / 8; ++w) {
    uint32_t word;
    if (!HexWord(s.substr(w * 8, 8), &word)) return false;
    std::memcpy(e.addr.data() + w * 4, &word, 4);
  }
  uint32_t port;
  if (!HexWord(s.substr(colon + 1), &port) || port > 0xffff) return false;
  e.port = static_cast<uint16_t>(port);
  *out = e;
  return true;
}

bool SameAddress(const InetEndpoint& a, const InetEndpoint& b) {
  uint8_t a4[4], b4[4];
  bool av4 = V4Of(a, a4), bv4 = V4Of(b, b4);
  if (av4 && bv4) return std::memcmp(a4, b4, 4) == 0;
  if (av4 != bv4) return false;
  return a.addr == b.addr;
}

}  // namespace

InetParse ParseInetEndpoint(const void* sockaddr, size_t len, InetEndpoint* out) {
  sa_family_t family;
  if (len < sizeof family) return InetParse::kShort;
  std::memcpy(&family, sockaddr, sizeof family);
  InetEndpoint e;
  if (family == AF_INET) {
    sockaddr_in sin;
    if (len < sizeof sin) return InetParse::kShort;
    std::memcpy(&sin, sockaddr, sizeof sin);
    std::memcpy(e.addr.data(), &sin.sin_addr, 4);
    e.port = ntohs(sin.sin_port);
  } else if (family == AF_INET6) {
    sockaddr_in6 sin6;
    // The kernel takes the RFC 2133 size too (no sin6_scope_id).
    if (len < 24) return InetParse::kShort;  // SIN6_LEN_RFC2133
    std::memset(&sin6, 0, sizeof sin6);
    std::memcpy(&sin6, sockaddr, len < sizeof sin6 ? len : sizeof sin6);
    e.v6 = true;
    std::memcpy(e.addr.data(), &sin6.sin6_addr, 16);
    e.port = ntohs(sin6.sin6_port);
  } else if (family == AF_UNSPEC) {
    return InetParse::kUnspec;
  } else {
    return InetParse::kOther;
  }
  *out = e;
  return InetParse::kInet;
}

bool IsLoopback(const InetEndpoint& e) {
  uint8_t v4[4];
  if (V4Of(e, v4)) return v4[0] == 127;
  static constexpr uint8_t kOne[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
  return std::memcmp(e.addr.data(), kOne, 16) == 0;
}

bool IsWildcard(const InetEndpoint& e) {
  uint8_t v4[4];
  if (V4Of(e, v4)) return AllZero(v4, 4);
  return AllZero(e.addr.data(), 16);
}

std::string FormatEndpoint(const InetEndpoint& e) {
  char buf[64];
  uint8_t v4[4];
  if (!e.v6) {
    V4Of(e, v4);
    std::snprintf(buf, sizeof buf, "%u.%u.%u.%u:%u", v4[0], v4[1], v4[2], v4[3], e.port);
    return buf;
  }
  if (V4Of(e, v4)) {
    std::snprintf(buf, sizeof buf, "[::ffff:%u.%u.%u.%u]:%u", v4[0], v4[1], v4[2], v4[3], e.port);
    return buf;
  }
  // Full form, no zero compression except the two usual ones.
  if (IsWildcard(e)) return "[::]:" + std::to_string(e.port);
  if (IsLoopback(e)) return "[::1]:" + std::to_string(e.port);
  std::string s = "[";
  for (int i = 0; i < 8; ++i) {
    std::snprintf(buf, sizeof buf, "%s%x", i ? ":" : "", e.addr[2 * i] << 8 | e.addr[2 * i + 1]);
    s += buf;
  }
  return s + "]:" + std::to_string(e.port);
}

std::vector<Listener> ParseTcpListeners(std::string_view table, bool v6) {
  std::vector<Listener> out;
  size_t pos = table.find('\n');  // the header
  while (pos != std::string_view::npos && pos < table.size()) {
    size_t end = table.find('\n', pos + 1);
    std::string_view row =
        table.substr(pos + 1, end == std::string_view::npos ? std::string_view::npos : end - pos - 1);
    pos = end;
    // sl local rem st tx:rx tr:when retrnsmt uid timeout inode ...
    std::string_view field[10];
    size_t n = 0, i = 0;
    while (n < 10) {
      while (i < row.size() && row[i] == ' ') ++i;
      if (i >= row.size()) break;
      size_t j = row.find(' ', i);
      if (j == std::string_view::npos) j = row.size();
      field[n++] = row.substr(i, j - i);
      i = j;
    }
    if (n < 10 || field[3] != "0A") continue;
    Listener l;
    if (!ParseHexEndpoint(field[1], v6, &l.local)) continue;
    uint64_t inode = 0;
    bool ok = !field[9].empty();
    for (char c : field[9]) {
      if (c < '0' || c > '9') ok = false;
      inode = inode * 10 + static_cast<uint64_t>(c - '0');
    }
    if (!ok || inode == 0) continue;
    l.inode = inode;
    out.push_back(l);
  }
  return out;
}

bool Reaches(const Listener& l, const InetEndpoint& target) {
  if (l.local.port != target.port) return false;
  if (SameAddress(l.local, target)) return true;
  if (!IsWildcard(l.local)) return false;
  // 0.0.0.0 takes v4 (and v4-mapped) connections; :: takes both unless
  // IPV6_V6ONLY, which /proc does not show: counted for both.
  uint8_t v4[4];
  return l.local.v6 || V4Of(target, v4);
}

NetDecision DecideNet(const NetRequest& r) {
  NetDecision d;
  if (r.mode == Network::kAllow) {
    d.allow = true;
    return d;
  }
  const char* const kHint =
      NetworkProxied(r.mode)
          ? "under public-web and hosts: the tool reaches the web through cordon's proxy only "
            "(HTTPS_PROXY in its environment) and its own loopback listeners; to allow it: "
            "--network allow"
          : "under network none the tool reaches its own loopback listeners only; to allow it: "
            "--network allow";
  auto refuse = [&](int err, std::string why) {
    d.err = err;
    d.why = std::move(why);
    if (!d.why.empty()) d.hint = kHint;
    return d;
  };
  if (r.datagram) {
    // The namespace is the fence: a bind or connect on a socket made there
    // reaches nothing outside it, whatever the address.
    if (r.private_loopback) {
      // But for a connect beyond it, which could only fail there: refused
      // with the kernel's own errno, and a line that says why (a resolver
      // asking its name server otherwise fails with no word of cordon's).
      if (r.op == NetOp::kConnect && r.parsed == InetParse::kInet && !IsLoopback(r.endpoint) &&
          !IsWildcard(r.endpoint)) {
        return refuse(ENETUNREACH,
                      "connect to " + FormatEndpoint(r.endpoint) + " under network " +
                          NetworkName(r.mode) + ": the tool's UDP reaches its own loopback only" +
                          (r.endpoint.port == 53 ? " (a name server: names do not resolve)" : ""));
      }
      d.allow = true;
      return d;
    }
    return refuse(EACCES, std::string("a UDP socket not of this run's private loopback namespace "
                                      "under network ") +
                              NetworkName(r.mode));
  }
  const std::string where = FormatEndpoint(r.endpoint);
  switch (r.op) {
    case NetOp::kBind:
      if (r.parsed == InetParse::kShort) return refuse(EINVAL, {});
      if (r.parsed != InetParse::kInet) {
        return refuse(EACCES, "bind to an address of another family under network none");
      }
      if (IsWildcard(r.endpoint)) {
        d.allow = true;
        d.on_loopback = true;
        return d;
      }
      if (!IsLoopback(r.endpoint)) {
        return refuse(EACCES, "bind to " + where +
                                  " under network none: only a loopback address (127.0.0.1, "
                                  "::1) may be bound");
      }
      d.allow = true;
      return d;
    case NetOp::kListen:
      if (IsWildcard(r.endpoint) && r.endpoint.port == 0) {  // unbound: bound on loopback first
        d.allow = true;
        d.on_loopback = true;
        return d;
      }
      if (!IsLoopback(r.endpoint)) {
        return refuse(EACCES, "listen on " + where +
                                  " under network none: bind the socket to a loopback "
                                  "address (127.0.0.1, ::1) first");
      }
      d.allow = true;
      return d;
    case NetOp::kConnect:
      if (r.parsed == InetParse::kUnspec) {  // dissolves the association
        d.allow = true;
        return d;
      }
      if (r.parsed == InetParse::kShort) return refuse(EINVAL, {});
      if (r.parsed != InetParse::kInet) {
        return refuse(EACCES, "connect to an address of another family under network none");
      }
      if (r.proxy != nullptr && NetworkProxied(r.mode) && r.endpoint.port == r.proxy->port &&
          SameAddress(r.endpoint, *r.proxy)) {
        d.allow = true;
        d.to_proxy = true;
        return d;
      }
      if (!IsLoopback(r.endpoint)) {
        return refuse(EACCES, "connect to " + where + " under network " + NetworkName(r.mode));
      }
      if (r.listeners == 0) return refuse(ECONNREFUSED, {});  // nothing listens there
      if (r.listeners_of_run != r.listeners) {
        return refuse(ECONNREFUSED,
                      "connect to " + where +
                          " under network none: the listener there is not this run's");
      }
      d.allow = true;
      return d;
  }
  return refuse(EACCES, "unknown network operation");
}

bool LoopbackForWildcard(void* sockaddr, size_t len, bool dual_stack) {
  InetEndpoint e;
  if (ParseInetEndpoint(sockaddr, len, &e) != InetParse::kInet || !IsWildcard(e)) return false;
  auto* bytes = static_cast<unsigned char*>(sockaddr);
  if (!e.v6) {
    const in_addr lo{htonl(INADDR_LOOPBACK)};
    std::memcpy(bytes + offsetof(sockaddr_in, sin_addr), &lo, sizeof lo);
    return true;
  }
  in6_addr a6;
  std::memcpy(&a6, bytes + offsetof(sockaddr_in6, sin6_addr), sizeof a6);
  if (IN6_IS_ADDR_V4MAPPED(&a6) || dual_stack) {
    const in_addr lo{htonl(INADDR_LOOPBACK)};
    a6 = in6addr_any;
    a6.s6_addr[10] = a6.s6_addr[11] = 0xff;
    std::memcpy(&a6.s6_addr[12], &lo, sizeof lo);
  } else {
    a6 = in6addr_loopback;
  }
  std::memcpy(bytes + offsetof(sockaddr_in6, sin6_addr), &a6, sizeof a6);
  return true;
}

DatagramSocketDecision DecideDatagramSocket(const DatagramSocketRequest& r) {
  DatagramSocketDecision d;
  auto refuse = [&](int err, std::string why, std::string hint = {}) {
    d.err = err;
    d.why = std::move(why);
    d.hint = std::move(hint);
    return d;
  };
  if (!NetworkFenced(r.mode)) return refuse(EPERM, "no private loopback under network allow");
  // The kernel reads each argument as an int.
  const auto domain = static_cast<int>(r.domain), type = static_cast<int>(r.type),
             protocol = static_cast<int>(r.protocol);
  constexpr int kTypeMask = 0xf;
  if (domain != AF_INET && domain != AF_INET6) return refuse(EPERM, "not an inet socket");
  if ((type & kTypeMask) != SOCK_DGRAM) return refuse(EPERM, "not a datagram socket");
  if ((type & ~(kTypeMask | SOCK_NONBLOCK | SOCK_CLOEXEC)) != 0) return refuse(EINVAL, {});
  const std::string mode = NetworkName(r.mode);
  if (protocol != 0 && protocol != IPPROTO_UDP) {
    return refuse(EPERM, "socket(" + std::string(domain == AF_INET ? "AF_INET" : "AF_INET6") +
                             ", SOCK_DGRAM, " + std::to_string(protocol) + ") under network " +
                             mode + ": only UDP is made, in the run's private loopback");
  }
  if (!r.have_private_loopback) {
    return refuse(EPERM,
                  "UDP socket under network " + mode +
                      ": cordon makes the tool's UDP sockets in a private network namespace "
                      "that holds only loopback, and none can be made here (" +
                      r.no_private_loopback + ")",
                  "`cordon doctor` says why; --network allow gives the tool the host's network");
  }
  d.allow = true;
  d.domain = domain;
  d.type = type;
  d.protocol = protocol;
  return d;
}

}  // namespace cordon::policy
