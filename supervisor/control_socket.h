// A running cordon's control socket (issue 27 item 2: `cordon policy
// reload`): RUNDIR/control.sock in the run's directory (run_records.h:
// mode 0700, denied to the tool, so no tool can reach it), a SOCK_SEQPACKET
// listener of mode 0600 served by one thread until the run ends, then
// removed. Only a peer of the run's own uid, or root, is served
// (SO_PEERCRED, read by the kernel at connect: a peer cannot claim it).
// One JSON object a packet (a "type" field), with descriptors passed
// alongside (SCM_RIGHTS): a policy file travels as an fd its sender opened,
// read with the sender's rights, never a path the supervisor opens.
#pragma once

#include <sys/types.h>

#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "base/fd.h"
#include "base/result.h"
#include "supervisor/seqpacket.h"

namespace cordon::supervisor {

inline constexpr const char* kControlSocketName = "control.sock";

// Whether a peer of `peer` may control a run of `owner`: the same uid, or root.
inline bool PeerMayControl(uid_t peer, uid_t owner) { return peer == owner || peer == 0; }

// The control protocol's packets (seqpacket.h): at most 64 KiB, and 4
// descriptors alongside.
inline constexpr std::size_t kMaxControlBytes = 64 * 1024;
using ControlMessage = Packet;
// Sends one message with `fds` (at most 4) attached. Never raises SIGPIPE.
inline Status SendControl(int sock, const nlohmann::json& msg, const std::vector<int>& fds = {}) {
  return SendPacket(sock, msg, kMaxControlBytes, fds);
}
// EOF is ECONNRESET; a packet that is not a JSON object with a string
// "type" is EBADMSG.
// With `stop` >= 0: ECANCELED once `stop` is readable first.
inline Result<ControlMessage> RecvControl(int sock, int stop = -1) {
  return RecvPacket(sock, kMaxControlBytes, kMaxPacketFds, stop);
}

// Connects to the control socket in the directory `dir_fd` (through
// /proc/self/fd, so the directory's path may be of any length).
Result<Fd> ConnectControl(int dir_fd);

class ControlSocket {
 public:
  // Serves one connection (already checked); returns when done with it.
  // `stop` becomes readable when the run ends: a handler that waits polls
  // it beside `conn` (RecvControl(conn, stop)).
  using Handler = std::function<void(int conn, int stop)>;
  // Binds kControlSocketName in the directory `dir_fd` (kept open) and
  // starts the thread that serves it, one connection at a time.
  static Result<std::unique_ptr<ControlSocket>> Listen(int dir_fd, Handler handler);
  // Stops the thread and removes the socket.
  ~ControlSocket();
  ControlSocket(const ControlSocket&) = delete;
  ControlSocket& operator=(const ControlSocket&) = delete;

 private:
  ControlSocket() = default;
  void Serve();

  Fd dir_;
  Fd listener_;
  Fd stop_read_, stop_write_;
  Handler handler_;
  std::thread thread_;
};

}  // namespace cordon::supervisor
