// One descriptor passed over a Unix socket (SCM_RIGHTS) with a small
// fixed payload beside it: the seccomp listener from the tool's first
// process (child.cc -> launcher.cc), a socket from the private loopback's
// child (net/loopback_netns.cc); and a forked child's status read with a
// deadline (the loopback's, socket_bind.cc's). The JSON protocols'
// transport is seqpacket.h; this is for the forked children, which may
// not allocate.
#pragma once

#include <cstddef>

#include "base/fd.h"
#include "base/result.h"

namespace cordon::supervisor {

// Sends `len` bytes of `data` (at least one) and `fd` (none when < 0), in
// one message, retrying EINTR, never raising SIGPIPE. Async-signal-safe:
// a forked child's, so it answers in the fork child's dialect, 0 or
// -errno (a short send is -EPIPE).
int SendFdRawErrno(int sock, const void* data, std::size_t len, int fd);

// Receives one such message: up to `len` bytes into `data` and its
// descriptor (close-on-exec). EPIPE: the sender is gone (EOF); EPROTO: the
// message came without a descriptor (the payload says why, for protocols
// that send one then).
Result<Fd> RecvFd(int sock, void* data, std::size_t len);

// Reads a forked child's status: one message of exactly `len` bytes from
// `fd` (a pipe or socket), waiting `timeout_ms` at most (EINTR retried).
// 0, ETIMEDOUT (nothing in time) or EPIPE (it ended first, or sent less);
// the caller then kills and reaps the child.
int ReadChildStatus(int fd, void* data, std::size_t len, int timeout_ms);

}  // namespace cordon::supervisor
