// What a run's supervisor tells the world as it goes: every decision it
// enforced and every change it made to a name in the writable roots. One
// interface for the audit log and whatever else listens (tools/ implements
// it); the emulator calls it and never waits on it for a decision.
#pragma once

#include <cstdint>
#include <string>

namespace cordon::supervisor {

struct Request;
struct Reply;

// A change the supervisor made (it performed the call), by its absolute
// paths. `kind`: created, deleted, renamed, exchanged (path <-> to),
// modified (written in place), overwritten (opened with O_TRUNC),
// replaced (renamed over). `kept`: the old file is in the run's journal
// (cordon undo can bring it back).
struct ChangeEvent {
  const char* kind = "";
  std::string path;
  std::string to;  // renamed, exchanged
  bool kept = false;
};

// One request through the web proxy (supervisor/net/web_proxy.h), when it
// ends: what was asked, where it went, how much, and the decision.
struct ProxyEvent {
  std::string method;   // CONNECT, GET, ...; empty when no request was read
  std::string host;     // as asked (lower case)
  uint16_t port = 0;
  std::string address;  // the resolved address it connected to (pinned); empty if none
  uint64_t bytes_up = 0;    // client to server
  uint64_t bytes_down = 0;  // server to client
  bool allowed = false;     // a connection to the host was made
  int status = 0;           // the proxy's own answer (403, ...), 0 when it relayed the server's
  std::string reason;       // why refused or cut short; empty when it ran to its end
};

class RunObserver {
 public:
  virtual ~RunObserver() = default;
  // Called on the emulator's threads, concurrently: implementations lock.
  virtual void Decided(const Request& req, const Reply& reply) = 0;
  virtual void Changed(const ChangeEvent& change) = 0;
  // From the web proxy's threads, concurrently too.
  virtual void Proxied(const ProxyEvent&) {}
};

}  // namespace cordon::supervisor
