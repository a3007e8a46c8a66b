// Landlock's own denial records for one run (issue 27 item 5): the
// kernel's audit multicast group (AUDIT_NLGRP_READLOG), read from before
// the tool starts until it has ended, sorted by policy::LandlockRecords
// into the run's denials. The tool restricts itself with
// LANDLOCK_RESTRICT_SELF_LOG_NEW_EXEC_ON so that its denials after the exec
// are logged at all (the kernel's default logs only the program that
// sandboxed itself).
//
// Where it cannot read them, Open says why, and the run says so:
// kernel audit off (a machine-wide switch cordon does not touch), no
// CAP_AUDIT_READ, or a PID namespace of cordon's own (the records name
// pids of the initial one, so the run's domain could not be told apart).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "base/fd.h"
#include "policy/landlock_audit.h"

namespace cordon::supervisor {

class LandlockAuditReader {
 public:
  // Subscribes, or says in `why` why this run's records cannot be read.
  static std::unique_ptr<LandlockAuditReader> Open(std::string run_id, std::string* why);
  ~LandlockAuditReader();
  LandlockAuditReader(const LandlockAuditReader&) = delete;
  LandlockAuditReader& operator=(const LandlockAuditReader&) = delete;

  // The tool's first process (it created the run's domain).
  void SetCreator(pid_t pid);

  struct Finished {
    policy::LandlockAccount account;
    // False when the account may lack records: the kernel dropped some for
    // this socket (ENOBUFS), or the end marker or the domain's freeing did
    // not come back within the wait.
    bool complete = true;
    std::string incomplete_why;
  };
  // Once the tool has ended: sends the end marker through the kernel's
  // queue, waits (at most `wait`) until it and the freeing of the run's
  // domain have come back, and stops reading.
  Finished Finish(std::chrono::milliseconds wait);

 private:
  LandlockAuditReader(Fd sock, Fd stop, std::string run_id);
  void Loop();

  Fd sock_;
  Fd stop_;  // eventfd: ends Loop
  std::string marker_;
  std::mutex mu_;
  std::condition_variable seen_;
  policy::LandlockRecords records_;
  size_t lost_ = 0;  // ENOBUFS: the kernel dropped records for this socket
  std::thread thread_;
};

}  // namespace cordon::supervisor
