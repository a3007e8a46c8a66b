// The preload's end of the report channel (wire.h): each admitted, refused
// or unchecked call becomes one fixed-size record. Records are batched per
// thread and sent several to a datagram, so the tool pays one non-blocking
// send per batch instead of one per call, and the supervisor wakes once per
// batch instead of once per record.
//
// A thread's batch is sent when it is full; at once after a refusal; and,
// for every thread's batch, before exec and _exit (exit_hooks.cc) and from
// the library destructor at exit, each followed by the image's final record
// (its totals). A forked child discards the batches it inherited, and a
// vfork child leaves alone those it shares: they are the parent's to send,
// so nothing is counted twice or sent on a channel the child closed. A
// send that finds the channel full drops the batch and counts it; the tool
// never waits.
//
// What can still be lost: the unsent batch (fewer than wire::kReportBatchMax records
// per thread) of an image that ends without the library seeing it (killed by
// a signal, or a raw exit/exec syscall). Such an image sends no final record
// either, so the supervisor's tally shows it as not having reported its end
// rather than as counts that do not add up.
//
// Async-signal-safe, allocation-free and lock-free on the call path: a batch
// that cannot be taken at once (a signal handler interrupting its own
// thread's append, a flush on another thread, two live threads hashed to one
// slot) is bypassed by sending the record alone.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "policy/path_admission.h"
#include "preload/wire.h"

namespace cordon::preload {

// Called once by Initialize(), before main: `fd` is the channel (-1: the
// records are only counted), `image` tells exec'd images of one pid apart.
// `refused_only` (wire::kEnvReportMode): refusals alone are sent, one by
// one, and an image's end sends nothing. Otherwise the image checks in
// first (wire::Call::kCheckIn: its pid and /proc/self/exe), so the
// supervisor can say which exec'd images ran without the preload.
void StartReports(int fd, uint32_t image, bool refused_only);

// Records one interposed call. A refusal flushes the thread's batch.
// `path_len` is strnlen(path, n) for some n >= wire::kReportPathMax (the
// caller has measured the path already). errno is left untouched.
void Note(wire::Call call, policy::AdmitOp op, wire::ReportVerdict v, policy::PathClass cls,
          int err, const char* path, size_t path_len);

// The image is ending (exit, _exit) or about to be replaced (exec): sends
// every thread's batch, then the final record. In a vfork child it does
// nothing: the batches and counters are its parent's, sent when the
// parent's image ends. `exiting`: later records go out one by
// one (another library's destructor may still open files).
void EndImage(bool exiting);

// pthread_atfork child handler: a new process with its own counters.
void ReportsAfterFork();

}  // namespace cordon::preload
