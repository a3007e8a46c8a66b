#include "supervisor/net/proxy_peers.h"

namespace cordon::supervisor {

void ProxyPeers::Expect(uint16_t local_port) {
  std::lock_guard<std::mutex> l(mu_);
  ++expected_[local_port];
}

void ProxyPeers::Forget(uint16_t local_port) {
  std::lock_guard<std::mutex> l(mu_);
  auto it = expected_.find(local_port);
  if (it != expected_.end() && --it->second == 0) expected_.erase(it);
}

bool ProxyPeers::Take(uint16_t peer_port) {
  std::lock_guard<std::mutex> l(mu_);
  auto it = expected_.find(peer_port);
  if (it == expected_.end()) return false;
  if (--it->second == 0) expected_.erase(it);
  return true;
}

}  // namespace cordon::supervisor
