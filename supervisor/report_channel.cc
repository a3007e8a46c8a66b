#include "supervisor/report_channel.h"

#include <fcntl.h>
#include <sys/socket.h>

#include "preload/wire.h"

namespace cordon::supervisor {
namespace {

constexpr size_t kBufferBytes = wire::kReportDatagramMax + 1;

}  // namespace

Status ReportChannel::Open() {
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) {
    return Errno("socketpair", "report channel");
  }
  ours_.reset(sv[0]);
  tool_.reset(sv[1]);
  if (::fcntl(ours_.get(), F_SETFL, O_NONBLOCK) != 0) return Errno("fcntl", "report channel");
  int size = kToolSendBuffer;
  if (::setsockopt(tool_.get(), SOL_SOCKET, SO_SNDBUFFORCE, &size, sizeof size) != 0) {
    // Without CAP_NET_ADMIN: as much as net.core.wmem_max allows. A smaller
    // buffer only means earlier (counted) drops.
    (void)::setsockopt(tool_.get(), SOL_SOCKET, SO_SNDBUF, &size, sizeof size);
  }
  // One byte more than the largest datagram: a bigger one shows as
  // truncated. Left uninitialised: recv writes what arrives, and a page
  // touched only to be zeroed costs a fault (~10 us on some VMs) per run.
  buf_ = std::make_unique_for_overwrite<char[]>(kBufferBytes);
  return Ok();
}

void ReportChannel::Drain(const std::function<void(const void* data, size_t len)>& on_record) {
  if (!ours_) return;
  std::lock_guard<std::mutex> l(drain_mu_);
  ssize_t n;
  while ((n = ::recv(ours_.get(), buf_.get(), kBufferBytes, MSG_DONTWAIT)) > 0) {
    size_t len = static_cast<size_t>(n);
    if (len % sizeof(wire::Report) != 0 || len > wire::kReportDatagramMax) {
      on_record(buf_.get(), len);
      continue;
    }
    for (size_t off = 0; off < len; off += sizeof(wire::Report)) {
      on_record(buf_.get() + off, sizeof(wire::Report));
    }
  }
}

}  // namespace cordon::supervisor
