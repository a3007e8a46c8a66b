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
// With an audit log, every request, answer, cancellation and withdrawal is
// a hash-chained record (audit_log.h), written before its effect: an allow
// that cannot be recorded is delivered as a deny, a request that cannot be
// recorded is refused.
//
// Single-threaded: one poll loop; not thread-safe, not fork-safe.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "supervisor/audit/audit_log.h"
#include "base/fd.h"
#include "base/result.h"

namespace cordon::service {

using supervisor::AuditLog;

class PolicyService {
 public:
  // Binds `socket_path` (mode 0600). A stale socket file nobody listens on
  // is replaced; a live one is EADDRINUSE.
  static Result<std::unique_ptr<PolicyService>> Listen(const std::string& socket_path,
                                                       std::shared_ptr<AuditLog> audit = nullptr);
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

  PolicyService(std::string path, Fd listener, std::shared_ptr<AuditLog> audit);
  // True without a log, or when the record was written.
  bool Record(std::string_view kind, nlohmann::json fields);
  void Accept();
  void OnMessage(Client& c, const nlohmann::json& msg);
  void OnRun(Client& c, const nlohmann::json& msg);
  void OnApprover(Client& c, const nlohmann::json& msg);
  void Drop(int fd);

  std::string path_;
  Fd listener_;
  std::shared_ptr<AuditLog> audit_;
  std::map<int, Client> clients_;
  std::map<uint64_t, Pending> pending_;
  uint64_t next_id_ = 1;
};

}  // namespace cordon::service
