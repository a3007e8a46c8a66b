// `cordon policyd`: the policy service as a daemon. Serves many runs over
// one Unix SOCK_SEQPACKET socket: runs (`--approvals socket:PATH`) send
// delete requests, approvers (`cordon approve`, a host's bridge) list the
// pending ones and answer them. Protocol: docs/approvals.md.
//
// Peers are checked with SO_PEERCRED: same uid as the daemon, or root.
// Each pending request gets a service-wide id that is never reused, so an
// answer can be delivered at most once; an answer for an id that is not
// pending (answered, cancelled, its run gone, never asked) changes nothing.
// An allow whose digest is not the request's preview digest refuses the
// request (stale): the run must make a new preview.
//
// Single-threaded: one poll loop; not thread-safe, not fork-safe.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "policy/fd.h"
#include "policy/result.h"

namespace cordon::policy {

class PolicyService {
 public:
  // Binds `socket_path` (mode 0600). A stale socket file nobody listens on
  // is replaced; a live one is EADDRINUSE.
  static Result<std::unique_ptr<PolicyService>> Listen(const std::string& socket_path);
  ~PolicyService();

  // Serves until `stop_fd` becomes readable (e.g. a signalfd). Pending
  // requests die with their connections: every run sees a refusal.
  Status Serve(int stop_fd);

 private:
  struct Client {
    Fd fd;
    enum class Role { kNone, kRun, kApprover } role = Role::kNone;
    int pid = 0;
    unsigned uid = 0;
  };
  struct Pending {
    int client_fd;
    uint64_t run_id;
    std::string digest;
    nlohmann::json request;  // as the run sent it, for listing
  };

  PolicyService(std::string path, Fd listener);
  void Accept();
  void OnMessage(Client& c, const nlohmann::json& msg);
  void OnRun(Client& c, const nlohmann::json& msg);
  void OnApprover(Client& c, const nlohmann::json& msg);
  void Drop(int fd);

  std::string path_;
  Fd listener_;
  std::map<int, Client> clients_;
  std::map<uint64_t, Pending> pending_;
  uint64_t next_id_ = 1;
};

}  // namespace cordon::policy
