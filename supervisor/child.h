// The child side of a launch: everything between clone and exec. It takes a
// ChildSpec prepared by the parent (strings, fds, the BPF program, the
// capability drop) and only makes system calls: it runs in the parent's
// memory (SpawnChild), so it must not allocate, take a lock or touch
// anything of the parent's but the spec. Failures are reported over
// status_pipe as a ChildFailure and end in _exit.
#pragma once

#include <sys/types.h>

#include "supervisor/caps.h"
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
  uint32_t restrict_flags = 0;   // landlock_restrict_self's flags
  const BpfProgram* filter = nullptr;  // null: no seccomp (degraded rung only)
  const CapabilityDrop* caps = nullptr;
  int notify_sock = -1;          // where the seccomp listener fd is sent
  int status_pipe = -1;          // write end, O_CLOEXEC: EOF at exec means success
  int keep_fd = -1;              // survives exec (the preload's report fd)
  int stdout_fd = -1;            // becomes the tool's fd 1 (-1: the caller's stays)
  const char* path = nullptr;
  char* const* argv = nullptr;
  char* const* envp = nullptr;
};

[[noreturn]] void RunChild(const ChildSpec& spec);

// Starts RunChild(spec) in a new process and returns its pid once the child
// has exec'd or exited, or -errno. Like posix_spawn, the child borrows the
// caller's memory until then (clone with CLONE_VM | CLONE_VFORK, on a stack
// of its own): no page tables are copied and neither side takes
// copy-on-write faults afterwards, a large part of a launch's cost. The
// calling thread sleeps meanwhile; whatever the child's filter sends to the
// supervisor before the exec completes (its own execve) must be answered
// by another thread. PDEATHSIG follows the calling thread, which must
// outlive the child.
pid_t SpawnChild(const ChildSpec& spec);

}  // namespace cordon::supervisor
