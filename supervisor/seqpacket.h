// One JSON object per SOCK_SEQPACKET packet on a Unix socket, descriptors
// passed alongside (SCM_RIGHTS) where a protocol takes them: the transport
// of the approval protocol (policy/approval_protocol.h: the run, policyd
// and `cordon approve`) and of a run's control socket (control_socket.h:
// `cordon policy reload`, a policy file passed as an fd).
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/fd.h"
#include "base/result.h"
#include "policy/approval_protocol.h"

namespace cordon::supervisor {

struct Packet {
  nlohmann::json body;  // an object with a string "type"
  std::vector<Fd> fds;  // received close-on-exec
};

// Connects a SOCK_SEQPACKET socket to `path` (close-on-exec, blocking).
Result<Fd> ConnectSeqpacket(const std::string& path);

// Sends `msg` (at most `max_bytes` serialised) with `fds` attached (at
// most kMaxPacketFds). Never raises SIGPIPE.
inline constexpr std::size_t kMaxPacketFds = 4;
Status SendPacket(int fd, const nlohmann::json& msg, std::size_t max_bytes,
                  const std::vector<int>& fds = {});
// Receives one packet with up to `max_fds` descriptors (0: any sent are
// dropped by the kernel). EOF is ECONNRESET; a packet over `max_bytes`, with
// more descriptors than that, or not a JSON object with a string "type" is
// EBADMSG. With `stop` >= 0: ECANCELED once `stop` is readable first.
Result<Packet> RecvPacket(int fd, std::size_t max_bytes, std::size_t max_fds = 0, int stop = -1);

// The approval protocol's: policy::kMaxMessageBytes, no descriptors.
inline Status SendMessage(int fd, const nlohmann::json& msg) {
  return SendPacket(fd, msg, policy::kMaxMessageBytes);
}
Result<nlohmann::json> RecvMessage(int fd);

}  // namespace cordon::supervisor
