// What a run's supervisor tells the world as it goes: every decision it
// enforced and every change it made to a name in the writable roots. One
// interface for the audit log and whatever else listens (tools/ implements
// it); the emulator calls it and never waits on it for a decision.
#pragma once

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

class RunObserver {
 public:
  virtual ~RunObserver() = default;
  // Called on the emulator's threads, concurrently: implementations lock.
  virtual void Decided(const Request& req, const Reply& reply) = 0;
  virtual void Changed(const ChangeEvent& change) = 0;
};

}  // namespace cordon::supervisor
