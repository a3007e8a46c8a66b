#include "policy/network_mode.h"

namespace cordon::policy {

bool ParseNetworkMode(std::string_view text, Policy* p, std::string* error) {
  if (text == "none" || text == "allow" || text == "public-web") {
    p->network = text == "none"    ? Network::kNone
                 : text == "allow" ? Network::kAllow
                                   : Network::kPublicWeb;
    p->web.hosts.clear();
    return true;
  }
  if (text.starts_with("hosts:")) {
    std::string why;
    auto hosts = ParseHostList(text.substr(6), &why);
    if (!hosts) {
      *error = "hosts: " + why;
      return false;
    }
    p->network = Network::kHosts;
    p->web.hosts = std::move(*hosts);
    return true;
  }
  *error = "unknown network mode '" + std::string(text) +
           "' (none, public-web, hosts:NAME[,*.SUFFIX]... or allow)";
  return false;
}

std::string FormatNetworkMode(const Policy& p) {
  if (p.network != Network::kHosts) return NetworkName(p.network);
  std::string out = "hosts:";
  for (size_t i = 0; i < p.web.hosts.size(); ++i) {
    out += (i ? "," : "") + std::string(p.web.hosts[i].suffix ? "*." : "") + p.web.hosts[i].name;
  }
  return out;
}

std::string DescribeNetwork(const Policy& p) {
  const std::string unix = "; Unix stream sockets reach names beneath the writable paths only";
  std::string ports;
  for (uint16_t port : p.web.ports) ports += (ports.empty() ? "" : ",") + std::to_string(port);
  const std::string proxy =
      " through cordon's proxy (CONNECT to port " + ports +
      ", plain http GET and HEAD; every resolved address must be public; " +
      std::to_string(p.web.max_response_bytes) + " bytes and " +
      std::to_string(p.web.timeout_seconds) + " s per response, " +
      std::to_string(p.web.max_connections) +
      " connections at once); no other connection but the tool's own loopback" + unix;
  switch (p.network) {
    case Network::kNone:
      return "none (the tool's own loopback allowed): no network connections but TCP on "
             "127.0.0.1 and ::1 between processes of the run, and UDP in a private loopback "
             "namespace of the run's" +
             unix;
    case Network::kAllow:
      return "allow: the tool may open network connections (made by cordon, without its "
             "privileges)" + unix;
    case Network::kPublicWeb:
      return "public-web-read-only: any public host name" + proxy;
    case Network::kHosts: {
      std::string names;
      for (const HostPattern& h : p.web.hosts) {
        names += (names.empty() ? "" : ", ") + std::string(h.suffix ? "*." : "") + h.name;
      }
      return "hosts: " + names + " (every method)" + proxy;
    }
  }
  return "?";
}

}  // namespace cordon::policy
