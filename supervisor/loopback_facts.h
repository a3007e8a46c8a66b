// The facts policy::DecideNet takes for a connect to loopback under
// network none (policy/loopback.h): the listening TCP sockets from the
// kernel's tables, and which of them a process of this run holds.
//
// A process of this run is a descendant of this supervisor, a child
// subreaper, so the tool's orphans stay below it: read from the kernel's
// children lists (/proc/self/task/T/children, then each child's), walked
// once per question. A listener is the run's when one of those processes
// has an fd on its socket inode ("socket:[N]" in /proc/PID/fd). Not
// async-signal-safe; any thread.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <vector>

#include "policy/loopback.h"

namespace cordon::supervisor {

struct ListenerFacts {
  size_t listeners = 0;         // listening sockets that could take the connection
  size_t listeners_of_run = 0;  // of which a process of this run holds
};

// For a connection to `target` from thread group `tgid` (its network
// namespace's tables). A table that cannot be read counts as one listener
// that is not the run's.
ListenerFacts GatherListenerFacts(pid_t tgid, const policy::InetEndpoint& target);

// Whether `sock` (of `domain`) is an AF_INET6 socket that takes IPv4 too
// (IPV6_V6ONLY off): where a wildcard bind is made on loopback
// (policy::LoopbackForWildcard).
bool DualStack(int sock, int domain);

}  // namespace cordon::supervisor
