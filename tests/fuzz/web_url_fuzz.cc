// libFuzzer target for issue 25's early URL refusal and hosts list: any
// bytes as a URL and as a hosts list. Beyond "no crash": an admitted URL's
// host is either a public address or a name that no resolver would read as
// an address and that is not internal; an admitted hosts list holds no
// address.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "policy/net_address.h"
#include "policy/web_url.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace cordon::policy;
  const std::string text(reinterpret_cast<const char*>(data), size);
  UrlCheck c = CheckWebUrl(text);
  if (c.url) {
    auto ip = ParseIpLiteral(c.url->host);
    if (c.url->host_is_ip != ip.has_value()) std::abort();
    if (ip && !IsGlobal(*ip)) std::abort();
    if (!ip && !InternalHostReason(c.url->host).empty()) std::abort();
    if (c.url->scheme != "http" && c.url->scheme != "https") std::abort();
    if (c.url->port == 0 || c.url->target.empty() || c.url->target[0] != '/') std::abort();
  } else if (c.refusal.empty()) {
    std::abort();
  }
  if (auto ip = ParseIpLiteral(text)) {
    auto again = ParseIpLiteral(FormatIp(*ip));
    if (!again || !(*again == *ip)) std::abort();
  }
  std::string error;
  if (auto hosts = ParseHostList(text, &error)) {
    for (const HostPattern& p : *hosts) {
      if (ParseIpLiteral(p.name) || p.name.empty()) std::abort();
      (void)HostAllowed(*hosts, p.name);
    }
  }
  return 0;
}
