#include "preload/reports.h"

#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <stddef.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>

namespace cordon::preload {
namespace {

using policy::AdmitOp;
using policy::PathClass;

// Batches, picked by thread id (tids are dense, so threads rarely share
// one; when they do, they share it, which is correct, only less batched).
constexpr unsigned kSlots = 16;

// A slot's control word, one cache line each (threads on neighbouring
// slots do not bounce it), kept in the channel's page (below).
struct alignas(64) Slot {
  std::atomic<bool> busy;  // held while appending or sending; never waited for on the call path
  std::atomic<unsigned> count;
};

// A slot's records: each batch starts on its own page.
struct alignas(4096) Batch {
  wire::Report records[wire::kReportBatchMax];
};

// The channel's scalars and the slots' control words, read or written by
// every call: in .data (fd starts at -1) next to the admission table and
// the real entry points (state.cc), so that the call path touches one data
// page for all of them besides the record it fills. After every syscall the
// tool makes, each page the call path touches costs a TLB miss again
// (~20-50 ns on the reference VM).
struct alignas(64) Channel {
  int fd = -1;
  uint32_t image = 0;
  bool refused_only = false;
  std::atomic<int32_t> pid{0};
  // Set at exit: records go out one by one from then on.
  std::atomic<bool> direct{false};
  std::atomic<uint64_t> seq{0};
  std::atomic<uint64_t> dropped{0};
  // One bit per slot ever used (see g_batches).
  std::atomic<uint64_t> used{0};
  Slot slots[kSlots] = {};
};
constinit Channel g_ch;

// constinit keeps the batches zero-filled .bss with no constructor at load;
// only the batches of slots marked in g_ch.used are ever read, since merely
// reading an untouched page faults it in.
constinit Batch g_batches[kSlots];
static_assert(kSlots <= 64, "Channel::used has one bit per slot");

thread_local int32_t t_tid __attribute__((tls_model("initial-exec"))) = 0;

int32_t Tid() {
  if (t_tid == 0) t_tid = static_cast<int32_t>(::syscall(SYS_gettid));
  return t_tid;
}

int32_t Pid() { return static_cast<int32_t>(::syscall(SYS_getpid)); }

// A non-blocking send; errno is left as the tool had it (the call being
// reported has not happened yet, or has set its own errno).
bool Send(const void* data, size_t len) {
  int saved = errno;
  ssize_t n = ::send(g_ch.fd, data, len, MSG_DONTWAIT | MSG_NOSIGNAL);
  errno = saved;
  return n == static_cast<ssize_t>(len);
}

// `len`: strnlen(path, at least kReportPathMax), known to the caller. Only
// the header, the path and its NUL are written: the bytes after the NUL
// keep what an earlier record of this slot left there (wire.h), so a short
// path costs one or two of the record's five cache lines, not all of them.
__attribute__((hot)) void Fill(wire::Report* r, wire::Call call, AdmitOp op, wire::ReportVerdict v,
                               PathClass cls, int err, const char* path, size_t len, uint64_t seq) {
  memset(r, 0, offsetof(wire::Report, path));
  r->magic = wire::kReportMagic;
  r->version = wire::kReportVersion;
  r->call = static_cast<uint16_t>(call);
  r->op = static_cast<uint8_t>(op);
  r->verdict = static_cast<uint8_t>(v);
  r->path_class = static_cast<uint8_t>(cls);
  r->err = err;
  r->pid = g_ch.pid.load(std::memory_order_relaxed);
  r->tid = Tid();
  r->image = g_ch.image;
  r->seq = seq;
  r->dropped = g_ch.dropped.load(std::memory_order_relaxed);
  if (len >= wire::kReportPathMax) {
    len = wire::kReportPathMax - 1;
    r->truncated = 1;
  }
  if (len) memcpy(r->path, path, len);
  r->path[len] = '\0';
}

// Sends the slot's batch (the caller holds it); a full channel drops it.
void FlushHeld(unsigned slot) {
  Slot* s = &g_ch.slots[slot];
  unsigned n = s->count.load(std::memory_order_relaxed);
  if (n == 0) return;
  if (!Send(g_batches[slot].records, n * sizeof(wire::Report))) {
    g_ch.dropped.fetch_add(n, std::memory_order_relaxed);
  }
  s->count.store(0, std::memory_order_relaxed);
}

bool TryHold(Slot* s) { return !s->busy.exchange(true); }
void Release(Slot* s) { s->busy.store(false, std::memory_order_release); }

// Sends one record, waiting briefly for room (only for the image's first
// and last records; the call path never waits).
void SendWaiting(const wire::Report& r) {
  for (int tries = 0; tries < 40; ++tries) {
    if (::send(g_ch.fd, &r, sizeof r, MSG_DONTWAIT | MSG_NOSIGNAL) == sizeof r) break;
    if (errno != EAGAIN && errno != ENOBUFS) break;
    pollfd p{g_ch.fd, POLLOUT, 0};
    ::poll(&p, 1, 50);
  }
}

// The image's last record: its totals, so the supervisor can tell a dropped
// record from one that was never made.
void SendFinal() {
  wire::Report r;
  Fill(&r, wire::Call::kExit, AdmitOp::kRead, wire::ReportVerdict::kAdmitted, PathClass::kWorkspace,
       0, nullptr, 0, g_ch.seq.load(std::memory_order_relaxed));
  SendWaiting(r);
}

}  // namespace

void StartReports(int fd, uint32_t image, bool refused_only) {
  g_ch.pid.store(Pid(), std::memory_order_relaxed);
  g_ch.image = image;
  g_ch.refused_only = refused_only;
  g_ch.fd = fd;
  if (fd < 0 || refused_only) return;
  // The check-in: this image runs with the preload. One readlink per image,
  // and only when someone tallies the run.
  char exe[wire::kReportPathMax];
  ssize_t n = ::readlink("/proc/self/exe", exe, sizeof exe);
  wire::Report r;
  Fill(&r, wire::Call::kCheckIn, AdmitOp::kRead, wire::ReportVerdict::kAdmitted,
       PathClass::kWorkspace, 0, exe, n > 0 ? static_cast<size_t>(n) : 0, 0);
  SendWaiting(r);
}

__attribute__((hot)) void Note(wire::Call call, AdmitOp op, wire::ReportVerdict v, PathClass cls,
                               int err, const char* path, size_t path_len) {
  if (g_ch.refused_only) {
    if (v != wire::ReportVerdict::kRefused || g_ch.fd < 0) return;
    wire::Report r;
    Fill(&r, call, op, v, cls, err, path, path_len, 0);
    (void)Send(&r, sizeof r);
    return;
  }
  uint64_t seq = g_ch.seq.fetch_add(1, std::memory_order_relaxed) + 1;
  if (g_ch.fd < 0) return;
  unsigned slot = static_cast<uint32_t>(Tid()) % kSlots;
  Slot* s = &g_ch.slots[slot];
  // Marked before first use (seq_cst, like the exchange below), so a flush
  // that does not see the mark finds nothing in the slot.
  if (!(g_ch.used.load(std::memory_order_relaxed) & (uint64_t{1} << slot))) {
    g_ch.used.fetch_or(uint64_t{1} << slot);
  }
  if (g_ch.direct.load(std::memory_order_relaxed) || !TryHold(s)) {
    wire::Report r;
    Fill(&r, call, op, v, cls, err, path, path_len, seq);
    if (!Send(&r, sizeof r)) g_ch.dropped.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  unsigned n = s->count.load(std::memory_order_relaxed);
  Fill(&g_batches[slot].records[n], call, op, v, cls, err, path, path_len, seq);
  s->count.store(n + 1, std::memory_order_relaxed);
  // g_ch.direct is read again under the slot: an exit flush that passed this
  // slot before we took it has set it, so the record cannot be stranded.
  if (n + 1 == wire::kReportBatchMax || v == wire::ReportVerdict::kRefused || g_ch.direct.load()) {
    FlushHeld(slot);
  }
  Release(s);
}

void EndImage(bool exiting) {
  if (g_ch.fd < 0 || g_ch.refused_only) return;
  // A vfork child shares its parent's memory, batches and counters: they
  // are the parent's to send when its own image ends. Sending them here
  // would lose them whenever the child has closed the channel before its
  // exec (Python's subprocess closes every fd from 3).
  if (Pid() != g_ch.pid.load(std::memory_order_relaxed)) return;
  int saved = errno;
  if (exiting) g_ch.direct.store(true);
  const uint64_t used = g_ch.used.load();
  for (unsigned i = 0; i < kSlots; ++i) {
    if (!(used & (uint64_t{1} << i))) continue;
    Slot& s = g_ch.slots[i];
    // busy before count, all seq_cst with Note()'s exchange and its
    // g_ch.direct load: a thread that takes the slot after this read sees
    // g_ch.direct and flushes itself; one that released it before shows its
    // count here.
    if (!s.busy.load() && s.count.load() == 0) continue;
    // A holder is another thread mid-append (nanoseconds) or one stuck in a
    // signal handler: wait a little, then count its batch as dropped.
    bool held = TryHold(&s);
    for (int i = 0; !held && i < 1000; ++i) {
      sched_yield();
      held = TryHold(&s);
    }
    if (!held) {
      g_ch.dropped.fetch_add(s.count.load(std::memory_order_relaxed), std::memory_order_relaxed);
      continue;
    }
    FlushHeld(i);
    Release(&s);
  }
  SendFinal();
  errno = saved;
}

void ReportsAfterFork() {
  const uint64_t used = g_ch.used.load(std::memory_order_relaxed);
  for (unsigned i = 0; i < kSlots; ++i) {
    if (!(used & (uint64_t{1} << i))) continue;
    Slot& s = g_ch.slots[i];
    s.count.store(0, std::memory_order_relaxed);
    s.busy.store(false, std::memory_order_relaxed);
  }
  g_ch.pid.store(Pid(), std::memory_order_relaxed);
  t_tid = 0;
  g_ch.seq.store(0, std::memory_order_relaxed);
  g_ch.dropped.store(0, std::memory_order_relaxed);
  g_ch.direct.store(false, std::memory_order_relaxed);
}

}  // namespace cordon::preload
