#include "supervisor/net/resolver.h"

#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <condition_variable>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <thread>

namespace cordon::supervisor {
namespace {

Resolved Lookup(const std::string& host) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  Resolved out;
  if (int rc = ::getaddrinfo(host.c_str(), nullptr, &hints, &res); rc != 0) {
    out.error = std::string("cannot resolve ") + host + ": " + ::gai_strerror(rc);
    return out;
  }
  for (addrinfo* a = res; a != nullptr; a = a->ai_next) {
    policy::IpAddress ip;
    if (a->ai_family == AF_INET) {
      std::memcpy(ip.bytes.data(), &reinterpret_cast<sockaddr_in*>(a->ai_addr)->sin_addr, 4);
    } else if (a->ai_family == AF_INET6) {
      ip.v6 = true;
      std::memcpy(ip.bytes.data(), &reinterpret_cast<sockaddr_in6*>(a->ai_addr)->sin6_addr, 16);
    } else {
      continue;
    }
    bool seen = false;
    for (const auto& o : out.addrs) seen = seen || o == ip;
    if (!seen) out.addrs.push_back(ip);
  }
  ::freeaddrinfo(res);
  if (out.addrs.empty()) out.error = "cannot resolve " + host + ": no address";
  return out;
}

class SystemResolverImpl final : public Resolver {
 public:
  Resolved Resolve(const std::string& host, std::chrono::milliseconds wait,
                   const std::atomic<bool>* cancel) override {
    struct Shared {
      std::mutex mu;
      std::condition_variable cv;
      bool done = false;
      Resolved result;
    };
    auto shared = std::make_shared<Shared>();
    std::thread([shared, host] {
      Resolved r = Lookup(host);
      std::lock_guard<std::mutex> l(shared->mu);
      shared->result = std::move(r);
      shared->done = true;
      shared->cv.notify_all();
    }).detach();
    std::unique_lock<std::mutex> l(shared->mu);
    const auto until = std::chrono::steady_clock::now() + wait;
    // In slices, so a run that ends does not wait for a hung lookup.
    while (!shared->done) {
      if ((cancel && cancel->load()) || std::chrono::steady_clock::now() >= until) {
        return Resolved{{}, "cannot resolve " + host + ": no answer in time"};
      }
      shared->cv.wait_for(l, std::chrono::milliseconds(100));
    }
    return std::move(shared->result);
  }
};

class TableResolverImpl final : public Resolver {
 public:
  explicit TableResolverImpl(std::map<std::string, std::vector<std::vector<policy::IpAddress>>> t)
      : table_(std::move(t)) {}
  Resolved Resolve(const std::string& host, std::chrono::milliseconds,
                   const std::atomic<bool>*) override {
    std::lock_guard<std::mutex> l(mu_);
    auto it = table_.find(host);
    if (it == table_.end()) return Resolved{{}, "cannot resolve " + host + ": not in the test table"};
    size_t& n = asked_[host];
    const auto& answers = it->second;
    return Resolved{answers[n < answers.size() ? n++ : answers.size() - 1], {}};
  }

 private:
  std::mutex mu_;
  std::map<std::string, std::vector<std::vector<policy::IpAddress>>> table_;
  std::map<std::string, size_t> asked_;
};

}  // namespace

std::shared_ptr<Resolver> SystemResolver() { return std::make_shared<SystemResolverImpl>(); }

Result<std::shared_ptr<Resolver>> TableResolver(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Errno("open", path);
  std::map<std::string, std::vector<std::vector<policy::IpAddress>>> table;
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    std::string name, list;
    if (!(ls >> name >> list)) continue;
    std::vector<policy::IpAddress> answer;
    std::istringstream as(list);
    for (std::string a; std::getline(as, a, ',');) {
      auto ip = policy::ParseIpLiteral(a);
      if (!ip) return SysError{EINVAL, "test resolver table", a};
      answer.push_back(*ip);
    }
    table[name].push_back(std::move(answer));
  }
  return std::shared_ptr<Resolver>(std::make_shared<TableResolverImpl>(std::move(table)));
}

}  // namespace cordon::supervisor
