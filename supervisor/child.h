// The child side of a launch: everything between fork and exec. It takes a
// ChildSpec prepared by the parent (strings, fds, the BPF program) so that it
// allocates nothing itself except inside libcap, which is safe because the
// parent forks while single-threaded. Failures are reported over
// status_pipe as a ChildFailure and end in _exit.
#pragma once

#include <sys/types.h>

#include "supervisor/seccomp_filter.h"

namespace cordon::supervisor {

enum class ChildStage : int { kSetup = 1, kExec = 2 };

struct ChildFailure {
  ChildStage stage;
  int err;
  char what[48];  // fixed message naming the step that failed
};

struct ChildSpec {
  pid_t parent = 0;
  int workspace_fd = -1;
  int ruleset_fd = -1;           // -1: no Landlock (notify-all or degraded rung)
  const BpfProgram* filter = nullptr;  // null: no seccomp (degraded rung only)
  int notify_sock = -1;          // where the seccomp listener fd is sent
  int status_pipe = -1;          // write end, O_CLOEXEC: EOF at exec means success
  int keep_fd = -1;              // survives exec (the preload's report fd)
  const char* path = nullptr;
  char* const* argv = nullptr;
  char* const* envp = nullptr;
};

[[noreturn]] void RunChild(const ChildSpec& spec);

}  // namespace cordon::supervisor
