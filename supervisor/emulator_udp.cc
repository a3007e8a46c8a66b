// The tool's UDP under a fenced network mode (none, public-web, hosts:):
// socket(AF_INET or AF_INET6, SOCK_DGRAM, 0 or IPPROTO_UDP) is notified,
// and the supervisor answers with a socket made in the run's private
// loopback namespace (net/loopback_netns.h), installed with ADDFD. What is
// made is policy::DecideDatagramSocket's; bind and connect on such a socket
// are SocketName's (emulator_socket.cc), which lets them be once the socket
// is known to live there (policy::DecideNet, `private_loopback`).
#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>

#include "policy/loopback.h"
#include "supervisor/emulator.h"

namespace cordon::supervisor {

LoopbackNetns* Emulator::PrivateLoopback(std::string* why_not) {
  std::lock_guard<std::mutex> l(loopback_mu_);
  if (!loopback_tried_) {
    loopback_tried_ = true;
    auto ns = LoopbackNetns::Start();
    if (ns) {
      loopback_ = std::move(ns.value());
      loopback_made_.store(loopback_.get());
      spdlog::debug("the tool's UDP: a private loopback in a {}", loopback_->kind());
    } else {
      no_loopback_ = Describe(ns.error());
    }
  }
  if (!loopback_ && why_not != nullptr) *why_not = no_loopback_;
  return loopback_.get();
}

LoopbackNetns* Emulator::MadeLoopback() { return loopback_made_.load(); }

DatagramMaker Emulator::StandInDatagrams() {
  if (!policy::NetworkFenced(rules().network)) return {};
  return [this](int domain, int type, int protocol) -> Result<Fd> {
    LoopbackNetns* ns = MadeLoopback();
    if (ns == nullptr) return SysError{EACCES, "no private loopback for a UDP socket"};
    return ns->MakeSocket(domain, type, protocol);
  };
}

Reply Emulator::DatagramSocket(const Request& req) {
  policy::DatagramSocketRequest dr;
  dr.mode = rules().network;
  dr.domain = req.args[0];
  dr.type = req.args[1];
  dr.protocol = req.args[2];
  // What is asked is decided first: no namespace is made for a socket
  // that would be refused anyway.
  dr.have_private_loopback = true;
  policy::DatagramSocketDecision d = policy::DecideDatagramSocket(dr);
  if (!d.allow) return Reply::Errno(d.err, d.why, d.hint);
  LoopbackNetns* ns = PrivateLoopback(&dr.no_private_loopback);
  if (ns == nullptr) {
    dr.have_private_loopback = false;
    d = policy::DecideDatagramSocket(dr);
    // Said once a run, at info level: refused as quietly as the filter's
    // EPERM where no namespace is to be had (Docker's profile), or every
    // name lookup there would print a refusal line. `cordon doctor` says it
    // too.
    if (!said_no_loopback_.exchange(true)) spdlog::info("{}; {}", d.why, d.hint);
    return Reply::Errno(d.err);
  }
  auto sock = ns->MakeSocket(d.domain, d.type & ~SOCK_CLOEXEC, d.protocol);
  if (!sock) {
    return Reply::Errno(sock.error().err == EPIPE ? EPERM : sock.error().err,
                        "UDP socket in the private loopback: " + Describe(sock.error()));
  }
  Reply r;
  r.install = std::move(sock.value());
  r.install_flags = (d.type & SOCK_CLOEXEC) != 0 ? O_CLOEXEC : 0;
  return r;
}

}  // namespace cordon::supervisor
