// Which connections to the web proxy are the tool's. The supervisor makes
// every connect(2) of the tool (emulator_socket.cc); for one to the proxy's
// endpoint it binds the tool's socket first (when unbound), records its
// local port here, then connects. The proxy takes a connection only when
// its peer port was recorded and not yet taken: a host process that finds
// the port gets no service. Thread-safe.
#pragma once

#include <cstdint>
#include <mutex>
#include <unordered_map>

#include "policy/loopback.h"

namespace cordon::supervisor {

class ProxyPeers {
 public:
  explicit ProxyPeers(policy::InetEndpoint endpoint) : endpoint_(endpoint) {}
  // 127.0.0.1 and the proxy's port.
  const policy::InetEndpoint& endpoint() const { return endpoint_; }
  // Before the tool's connect: a connection from `local_port` is the tool's.
  void Expect(uint16_t local_port);
  // After a connect that failed: the port is no longer the tool's.
  void Forget(uint16_t local_port);
  // At accept: whether `peer_port` was recorded; the record is used up.
  bool Take(uint16_t peer_port);

 private:
  const policy::InetEndpoint endpoint_;
  std::mutex mu_;
  std::unordered_map<uint16_t, unsigned> expected_;
};

}  // namespace cordon::supervisor
