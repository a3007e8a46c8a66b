#include "service/policy_service.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <vector>

#include "policy/approval_protocol.h"
#include "supervisor/seqpacket.h"

namespace cordon::service {

using policy::CheckHello;
using policy::ErrorMessage;
using policy::HelloMessage;
using policy::ParseRequest;
using supervisor::ConnectSeqpacket;
using supervisor::RecvMessage;
using supervisor::SendMessage;

namespace {

Status BindListen(int fd, const std::string& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.data(), path.size());
  // 0600 from the start: no window in which another uid could connect.
  mode_t old = ::umask(077);
  int rc = ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  int err = errno;
  ::umask(old);
  if (rc != 0) return SysError{err, "bind", path};
  if (::listen(fd, 64) != 0) return Errno("listen", path);
  return Ok();
}

}  // namespace

Result<std::unique_ptr<PolicyService>> PolicyService::Listen(const std::string& path,
                                                             std::shared_ptr<AuditLog> audit) {
  if (path.empty() || path.size() >= sizeof(sockaddr_un{}.sun_path)) {
    return SysError{ENAMETOOLONG, "bind", path};
  }
  Fd fd(::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (!fd) return Errno("socket");
  Status st = BindListen(fd.get(), path);
  if (!st.ok() && st.error().err == EADDRINUSE) {
    struct stat sb;
    if (::lstat(path.c_str(), &sb) == 0 && S_ISSOCK(sb.st_mode) &&
        !ConnectSeqpacket(path).ok()) {
      ::unlink(path.c_str());  // left behind by a daemon that died
      st = BindListen(fd.get(), path);
    }
  }
  if (!st.ok()) return st.error();
  auto service =
      std::unique_ptr<PolicyService>(new PolicyService(path, std::move(fd), std::move(audit)));
  if (!service->Record("header", {{"service", "policyd"}, {"socket", path}, {"pid", ::getpid()}})) {
    return SysError{EIO, "audit log", "cannot record the service start"};
  }
  return service;
}

PolicyService::PolicyService(std::string path, Fd listener, std::shared_ptr<AuditLog> audit)
    : path_(std::move(path)), listener_(std::move(listener)), audit_(std::move(audit)) {}

PolicyService::~PolicyService() {
  for (const auto& [id, p] : pending_) Record("withdrawn", {{"id", id}, {"why", "service stopped"}});
  if (audit_) (void)audit_->Close();
  ::unlink(path_.c_str());
}

bool PolicyService::Record(std::string_view kind, nlohmann::json fields) {
  return !audit_ || audit_->Append(kind, std::move(fields)).ok();
}

Status PolicyService::Serve(int stop_fd) {
  for (;;) {
    std::vector<pollfd> fds = {{stop_fd, POLLIN, 0}, {listener_.get(), POLLIN, 0}};
    for (auto& [fd, c] : clients_) fds.push_back({fd, POLLIN, 0});
    if (::poll(fds.data(), fds.size(), -1) < 0) {
      if (errno == EINTR) continue;
      return Errno("poll");
    }
    if (fds[0].revents) return Ok();
    if (fds[1].revents) Accept();
    for (size_t i = 2; i < fds.size(); ++i) {
      if (!fds[i].revents) continue;
      auto it = clients_.find(fds[i].fd);
      if (it == clients_.end()) continue;
      auto msg = RecvMessage(it->first);
      if (!msg) {
        if (msg.error().err == EAGAIN) continue;
        if (msg.error().err == EBADMSG) (void)SendMessage(it->first, ErrorMessage("malformed message"));
        Drop(it->first);
        continue;
      }
      OnMessage(it->second, msg.value());
    }
  }
}

void PolicyService::Accept() {
  for (;;) {
    Fd fd(::accept4(listener_.get(), nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK));
    if (!fd) return;
    ucred cred{};
    socklen_t len = sizeof cred;
    if (::getsockopt(fd.get(), SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 ||
        (cred.uid != ::getuid() && cred.uid != 0)) {
      (void)SendMessage(fd.get(), ErrorMessage("peer uid not allowed"));
      continue;  // closes it
    }
    int key = fd.get();
    Client& c = clients_[key];
    c.fd = std::move(fd);
    c.pid = cred.pid;
    c.uid = cred.uid;
  }
}

void PolicyService::Drop(int fd) {
  for (auto it = pending_.begin(); it != pending_.end();) {
    if (it->second.client_fd != fd) {
      ++it;
      continue;
    }
    Record("withdrawn", {{"id", it->first}, {"why", "the run disconnected"}});
    it = pending_.erase(it);
  }
  clients_.erase(fd);
}

void PolicyService::OnMessage(Client& c, const nlohmann::json& msg) {
  if (c.role == Client::Role::kNone) {
    std::string why = CheckHello(msg);
    std::string role = msg.value("role", "");
    if (why.empty() && role != "run" && role != "approver") why = "role must be run or approver";
    if (!why.empty()) {
      (void)SendMessage(c.fd.get(), ErrorMessage(why));
      Drop(c.fd.get());
      return;
    }
    c.role = role == "run" ? Client::Role::kRun : Client::Role::kApprover;
    (void)SendMessage(c.fd.get(), HelloMessage("service"));
    return;
  }
  if (c.role == Client::Role::kRun) OnRun(c, msg);
  else OnApprover(c, msg);
}

void PolicyService::OnRun(Client& c, const nlohmann::json& msg) {
  std::string type = msg.value("type", "");
  int fd = c.fd.get();
  if (type == "request") {
    auto req = ParseRequest(msg);
    if (!req) {
      (void)SendMessage(fd, ErrorMessage("malformed request (or digest does not match preview)"));
      return;
    }
    nlohmann::json shown = msg;
    shown.erase("type");
    shown["run_id"] = req->request_id;
    shown["peer_pid"] = c.pid;
    shown["peer_uid"] = c.uid;
    uint64_t id = next_id_++;
    shown["id"] = id;
    if (!Record("request", shown)) {
      (void)SendMessage(fd, ErrorMessage("the service cannot record the request: refused"));
      return;
    }
    pending_[id] = Pending{fd, req->request_id, req->preview_digest, std::move(shown)};
  } else if (type == "cancel") {
    for (auto it = pending_.begin(); it != pending_.end();) {
      bool mine = it->second.client_fd == fd && msg.contains("id") &&
                  msg["id"] == it->second.run_id;
      if (mine) Record("withdrawn", {{"id", it->first}, {"why", "the run cancelled it"}});
      it = mine ? pending_.erase(it) : std::next(it);
    }
  } else {
    (void)SendMessage(fd, ErrorMessage("unexpected message " + type + " from a run"));
  }
}

void PolicyService::OnApprover(Client& c, const nlohmann::json& msg) {
  std::string type = msg.value("type", "");
  int fd = c.fd.get();
  if (type == "list") {
    nlohmann::json list = nlohmann::json::array();
    for (const auto& [id, p] : pending_) list.push_back(p.request);
    (void)SendMessage(fd, {{"type", "pending"}, {"requests", std::move(list)}});
    return;
  }
  if (type != "answer") {
    (void)SendMessage(fd, ErrorMessage("unexpected message " + type + " from an approver"));
    return;
  }
  std::string decision = msg.value("decision", "");
  if (!msg.contains("id") || !msg["id"].is_number_unsigned() ||
      (decision != "allow-once" && decision != "deny")) {
    (void)SendMessage(fd, ErrorMessage("answer needs an id and decision allow-once or deny"));
    return;
  }
  uint64_t id = msg["id"].get<uint64_t>();
  nlohmann::json result = {{"type", "result"}, {"id", id}};
  auto it = pending_.find(id);
  if (it == pending_.end()) {
    result["status"] = "stale";
    result["message"] = "no pending request " + std::to_string(id) +
                        " (already answered, cancelled, its run gone, or never asked)";
    (void)SendMessage(fd, result);
    return;
  }
  Pending p = std::move(it->second);
  pending_.erase(it);
  std::string digest = msg.contains("digest") && msg["digest"].is_string()
                           ? msg["digest"].get<std::string>()
                           : std::string();
  nlohmann::json answer = {{"type", "answer"}, {"id", p.run_id}, {"digest", p.digest}};
  if (decision == "allow-once" && digest != p.digest) {
    // An allow for a preview the person did not see: refuse the request.
    answer["decision"] = "stale";
    result["status"] = "stale";
    result["message"] = "digest does not match the request's preview; the request is refused";
  } else {
    answer["decision"] = decision;
    result["status"] = "delivered";
  }
  nlohmann::json record = {{"id", id},
                           {"run_id", p.run_id},
                           {"decision", answer["decision"]},
                           {"approver_pid", c.pid},
                           {"approver_uid", c.uid}};
  if (!Record("answer", record)) {
    // No allow leaves here unrecorded.
    answer["decision"] = "deny";
    result["status"] = "refused";
    result["message"] = "the service cannot record the answer; the request is denied";
  }
  if (!SendMessage(p.client_fd, answer).ok()) {
    result["status"] = "stale";
    result["message"] = "the run is gone";
  }
  (void)SendMessage(fd, result);
}

}  // namespace cordon::service
