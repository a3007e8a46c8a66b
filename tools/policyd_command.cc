#include "tools/policyd_command.h"

#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/signalfd.h>

#include <cstdio>
#include <cstring>
#include <optional>

#include "policy/approval_protocol.h"
#include "policy/json_fields.h"
#include "service/policy_service.h"
#include "supervisor/audit/audit_log.h"
#include "supervisor/seqpacket.h"

namespace cordon::tools {
namespace {

constexpr int kExitError = 125;

int ServePolicyd(const std::string& socket_path, const std::string& audit_path) {
  // SIGINT/SIGTERM end the loop through a signalfd: pending requests are
  // then refused when their connections close.
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGHUP);
  if (::sigprocmask(SIG_BLOCK, &set, nullptr) != 0) return kExitError;
  Fd sfd(::signalfd(-1, &set, SFD_CLOEXEC));
  if (!sfd) {
    spdlog::error("signalfd: {}", std::strerror(errno));
    return kExitError;
  }
  std::shared_ptr<supervisor::AuditLog> audit;
  if (!audit_path.empty()) {
    auto log = supervisor::AuditLog::Open(audit_path);
    if (!log) {
      spdlog::error("policyd: --audit {}: {}", audit_path, Describe(log.error()));
      return kExitError;
    }
    audit = std::move(log.value());
  }
  auto service = service::PolicyService::Listen(socket_path, std::move(audit));
  if (!service) {
    spdlog::error("policyd: {}", Describe(service.error()));
    return kExitError;
  }
  spdlog::info("policyd: serving {}", socket_path);
  Status st = service.value()->Serve(sfd.get());
  if (!st.ok()) {
    spdlog::error("policyd: {}", Describe(st.error()));
    return kExitError;
  }
  return 0;
}

struct ApproveOptions {
  std::string socket;
  bool list = false;
  std::optional<uint64_t> allow, deny;
  uint64_t allow_id = 0, deny_id = 0;
  CLI::Option* allow_opt = nullptr;
  CLI::Option* deny_opt = nullptr;
  std::string digest;
};

int Approve(const ApproveOptions& o) {
  int actions = int{o.list} + int{o.allow.has_value()} + int{o.deny.has_value()};
  if (actions != 1) {
    spdlog::error("approve: give exactly one of --list, --allow ID --digest HEX, --deny ID");
    return kExitError;
  }
  if (o.allow && o.digest.empty()) {
    spdlog::error("approve: --allow needs --digest (the preview digest you checked)");
    return kExitError;
  }
  auto fd = supervisor::ConnectSeqpacket(o.socket);
  if (!fd) {
    spdlog::error("approve: {}", Describe(fd.error()));
    return kExitError;
  }
  auto exchange = [&](const nlohmann::json& m) -> std::optional<nlohmann::json> {
    if (!supervisor::SendMessage(fd->get(), m).ok()) return std::nullopt;
    auto r = supervisor::RecvMessage(fd->get());
    if (!r) return std::nullopt;
    return r.value();
  };
  auto hello = exchange(policy::HelloMessage("approver"));
  std::string why = hello ? policy::CheckHello(*hello) : "connection lost";
  if (!why.empty()) {
    spdlog::error("approve: {}", why);
    return kExitError;
  }
  nlohmann::json request;
  if (o.list) {
    request = {{"type", "list"}};
  } else if (o.allow) {
    request = {{"type", "answer"}, {"id", *o.allow}, {"decision", "allow-once"}, {"digest", o.digest}};
  } else {
    request = {{"type", "answer"}, {"id", *o.deny}, {"decision", "deny"}};
  }
  auto reply = exchange(request);
  if (!reply) {
    spdlog::error("approve: connection lost");
    return kExitError;
  }
  std::string type = policy::StringField(*reply, "type");
  if (type == "pending" && o.list) {
    // One JSON object per line: easy for scripts, readable for people.
    for (const auto& r : policy::ArrayField(*reply, "requests")) {
      std::printf("%s\n", r.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
    }
    return 0;
  }
  if (type == "result") {
    std::string status = policy::StringField(*reply, "status");
    if (status == "delivered") {
      std::printf("request %llu: %s delivered\n",
                  static_cast<unsigned long long>(policy::UintField(*reply, "id")),
                  o.allow ? "allow-once" : "deny");
      return 0;
    }
    std::fprintf(stderr, "cordon: approve: %s\n",
                 policy::StringField(*reply, "message", status).c_str());
    return 1;
  }
  spdlog::error("approve: {}", policy::StringField(*reply, "message", "unexpected reply " + type));
  return kExitError;
}

}  // namespace

void RegisterPolicyd(CLI::App& app, int& exit_code) {
  struct Options {
    std::string socket, audit;
  };
  auto* o = new Options;  // lives as long as the process
  CLI::App* cmd = app.add_subcommand("policyd", "serve approvals for many runs on a Unix socket");
  cmd->add_option("--socket", o->socket, "the SOCK_SEQPACKET socket to listen on")->required();
  cmd->add_option("--audit", o->audit,
                  "append every request and answer to this hash-chained JSON-lines log");
  cmd->callback([o, &exit_code] { exit_code = ServePolicyd(o->socket, o->audit); });
}

void RegisterApprove(CLI::App& app, int& exit_code) {
  auto* o = new ApproveOptions;  // lives as long as the process
  CLI::App* cmd = app.add_subcommand("approve", "list or answer pending delete requests");
  cmd->add_option("--socket", o->socket, "the policyd socket")->required();
  cmd->add_flag("--list", o->list, "print pending requests, one JSON object per line");
  o->allow_opt = cmd->add_option("--allow", o->allow_id, "allow request ID once (needs --digest)");
  cmd->add_option("--digest", o->digest, "the preview digest of the request being allowed");
  o->deny_opt = cmd->add_option("--deny", o->deny_id, "deny request ID");
  cmd->callback([o, &exit_code] {
    if (o->allow_opt->count() > 0) o->allow = o->allow_id;
    if (o->deny_opt->count() > 0) o->deny = o->deny_id;
    exit_code = Approve(*o);
  });
}

}  // namespace cordon::tools
