// libFuzzer target for the web proxy's ClientHello reader (issue 25): any
// bytes as what a client sends first into a CONNECT tunnel. Beyond "no
// crash": a name it returns is printable ASCII and no longer than 255;
// what it consumed lies within the input; a prefix of an accepted hello is
// never accepted with another name.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "policy/tls_client_hello.h"
#include "policy/web_request.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace cordon::policy;
  const std::string text(reinterpret_cast<const char*>(data), size);
  std::string sni;
  size_t consumed = 0;
  HelloParse p = ParseClientHelloSni(text, &sni, &consumed);
  if (p == HelloParse::kOk) {
    if (consumed == 0 || consumed > size || sni.size() > 255) std::abort();
    for (char c : sni) {
      if (static_cast<unsigned char>(c) <= 0x20 || static_cast<unsigned char>(c) >= 0x7f) std::abort();
    }
    std::string again;
    if (ParseClientHelloSni(text.substr(0, consumed), &again) != HelloParse::kOk || again != sni) {
      std::abort();
    }
    (void)SniMatches(sni, "example.com", false);
  }
  // The same bytes as a proxy request head and a server's response head.
  ProxyRequest r;
  std::string why;
  if (ParseRequestHead(text, &r, &why) == HeadParse::kOk && r.head_bytes > size) std::abort();
  ResponseHead h;
  if (ParseResponseHead(text, &h) == HeadParse::kOk && h.head_bytes > size) std::abort();
  return 0;
}
