// The approval protocol's transport: one JSON message (policy/
// approval_protocol.h) per SOCK_SEQPACKET packet on a Unix socket.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "base/fd.h"
#include "base/result.h"
#include "policy/approval_protocol.h"

namespace cordon::supervisor {

// Connects a SOCK_SEQPACKET socket to `path` (close-on-exec, blocking).
Result<Fd> ConnectSeqpacket(const std::string& path);

// One message per packet. Send never raises SIGPIPE.
Status SendMessage(int fd, const nlohmann::json& msg);
// EOF is ECONNRESET; an oversized or non-JSON-object packet is EBADMSG.
Result<nlohmann::json> RecvMessage(int fd);

}  // namespace cordon::supervisor
