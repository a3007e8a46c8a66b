// The server name a TLS client asks for (RFC 6066 server_name, in the
// ClientHello), read from the first bytes a client sends into a CONNECT
// tunnel, so the web proxy can hold the tunnel to the host it was opened
// for (issue 25 item 3). Reads only what it needs, bounds every length
// by the bytes it has, and never allocates more than the input. Pure.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace cordon::policy {

// The most the parser looks at: a ClientHello split over TLS records is
// reassembled up to this many bytes of records.
inline constexpr size_t kMaxClientHelloBytes = 65536;

enum class HelloParse {
  kNeedMore,   // a prefix of a ClientHello: read more
  kOk,         // a whole ClientHello; *sni set (empty when it names no server)
  kNotTls,     // the first bytes are not a TLS handshake record
  kMalformed,  // a handshake that is not a well-formed ClientHello
};

// `bytes`: what the client sent so far. On kOk, `*sni` is the host_name
// as sent (no case folding) and `*consumed` the bytes of records read.
HelloParse ParseClientHelloSni(std::string_view bytes, std::string* sni, size_t* consumed = nullptr);

// Whether `sni` (as sent) names `host` (lower case, no trailing dot):
// equal ignoring ASCII case and one trailing dot. An IP literal host
// expects no name (clients send none for an address).
bool SniMatches(std::string_view sni, std::string_view host, bool host_is_ip);

}  // namespace cordon::policy
