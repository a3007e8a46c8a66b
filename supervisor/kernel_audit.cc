#include "supervisor/kernel_audit.h"

#include <linux/audit.h>
#include <linux/netlink.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "base/fd.h"

namespace cordon::supervisor {

bool SendToKernelAudit(int sock, std::uint16_t type, std::uint16_t flags,
                       std::string_view payload) {
  std::vector<char> buf(NLMSG_SPACE(payload.size()), 0);
  auto* h = reinterpret_cast<nlmsghdr*>(buf.data());
  h->nlmsg_len = NLMSG_LENGTH(payload.size());
  h->nlmsg_type = type;
  h->nlmsg_flags = static_cast<std::uint16_t>(NLM_F_REQUEST | flags);
  h->nlmsg_seq = 1;
  if (!payload.empty()) std::memcpy(NLMSG_DATA(h), payload.data(), payload.size());
  sockaddr_nl kernel{};
  kernel.nl_family = AF_NETLINK;
  return ::sendto(sock, buf.data(), h->nlmsg_len, 0, reinterpret_cast<sockaddr*>(&kernel),
                  sizeof kernel) >= 0;
}

KernelAudit ProbeKernelAudit() {
  Fd sock(::socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_AUDIT));
  if (!sock) return KernelAudit::kUnavailable;
  const struct timeval timeout {1, 0};
  (void)::setsockopt(sock.get(), SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  if (!SendToKernelAudit(sock.get(), AUDIT_GET, 0)) return KernelAudit::kUnavailable;
  alignas(nlmsghdr) char buf[8192];
  for (int i = 0; i < 4; ++i) {
    const ssize_t n = ::recv(sock.get(), buf, sizeof buf, 0);
    if (n < static_cast<ssize_t>(NLMSG_LENGTH(0))) return KernelAudit::kUnavailable;
    const auto* h = reinterpret_cast<const nlmsghdr*>(buf);
    if (h->nlmsg_type == NLMSG_ERROR) {
      struct nlmsgerr err {};
      std::memcpy(&err, NLMSG_DATA(h), std::min(sizeof err, static_cast<size_t>(n) - NLMSG_LENGTH(0)));
      if (err.error != 0) return KernelAudit::kUnavailable;
      continue;  // an ack
    }
    if (h->nlmsg_type != AUDIT_GET) continue;
    struct audit_status status {};
    std::memcpy(&status, NLMSG_DATA(h),
                std::min(sizeof status, static_cast<size_t>(n) - NLMSG_LENGTH(0)));
    return status.enabled ? KernelAudit::kOn : KernelAudit::kOff;
  }
  return KernelAudit::kUnavailable;
}

const char* KernelAuditName(KernelAudit a) {
  switch (a) {
    case KernelAudit::kUnavailable: return "unavailable";
    case KernelAudit::kOff: return "off";
    case KernelAudit::kOn: return "on";
  }
  return "?";
}

}  // namespace cordon::supervisor
