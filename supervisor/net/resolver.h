// How the web proxy turns a name into addresses: once per request, the
// answer then checked and used as it is (pinned: no second lookup, so a
// rebinding DNS server cannot move the connection after the check).
//
// SystemResolver: getaddrinfo(3) on a thread of its own, waited for up to
// the request's deadline (getaddrinfo takes no timeout; a lookup that
// outlives its wait finishes on its detached thread and is dropped).
// TableResolver: the test build's answers from a file (tools/test_hooks.h),
// one line per answer, `NAME ADDR[,ADDR]...`; a name on several lines gets
// them in turn, the last one repeated (a rebinding server).
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "base/result.h"
#include "policy/net_address.h"

namespace cordon::supervisor {

struct Resolved {
  std::vector<policy::IpAddress> addrs;
  std::string error;  // set when there is no answer
};

class Resolver {
 public:
  virtual ~Resolver() = default;
  // Waits up to `wait`, and no longer once `*cancel` (may be null) is set.
  virtual Resolved Resolve(const std::string& host, std::chrono::milliseconds wait,
                           const std::atomic<bool>* cancel = nullptr) = 0;
};

std::shared_ptr<Resolver> SystemResolver();
Result<std::shared_ptr<Resolver>> TableResolver(const std::string& path);

}  // namespace cordon::supervisor
