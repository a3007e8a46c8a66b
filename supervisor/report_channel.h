// The supervisor's end of the preload's report channel (preload/wire.h): a
// SOCK_SEQPACKET pair whose tool end survives exec (CORDON_REPORT_FD). A
// datagram carries one or more fixed-size records (the preload batches them
// per thread), so the supervisor wakes once per batch, not once per call.
//
// The tool's end gets a large send buffer so that a burst is queued rather
// than dropped by the tool: SO_SNDBUFFORCE when cordon may (CAP_NET_ADMIN),
// else SO_SNDBUF (capped by net.core.wmem_max). For a connected AF_UNIX
// pair that buffer is the only limit (net.unix.max_dgram_qlen does not
// apply).
//
// Drain() may be called from several threads (the launcher's poll loop, and
// the notify loop before it records an exec: preload_checkin.h); one drain
// runs at a time, so records are handed over in the order they were sent.
// The rest is the launcher's, before the tool starts.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>

#include "base/fd.h"
#include "base/result.h"

namespace cordon::supervisor {

class ReportChannel {
 public:
  // Bytes the tool may have queued before it starts dropping records.
  static constexpr int kToolSendBuffer = 4 << 20;

  // Makes the pair. Until then (and when no channel is wanted) both fds are
  // -1, and Drain() does nothing.
  Status Open();
  int tool_fd() const { return tool_.get(); }
  // After the fork: only the tool keeps its end.
  void CloseToolEnd() { tool_.reset(); }
  int poll_fd() const { return ours_.get(); }
  // Reads every queued datagram without blocking and hands each record to
  // `on_record`; a datagram that is not a whole number of records is handed
  // over whole (the decoder counts it as malformed). `on_record` runs with
  // the channel's lock held.
  void Drain(const std::function<void(const void* data, size_t len)>& on_record);

 private:
  Fd ours_;
  Fd tool_;
  std::mutex drain_mu_;
  std::unique_ptr<char[]> buf_;
};

}  // namespace cordon::supervisor
