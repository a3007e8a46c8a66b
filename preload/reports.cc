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
constexpr unsigned kSlots = 64;

struct alignas(64) Slot {
  std::atomic<bool> busy;  // held while appending or sending; never waited for on the call path
  std::atomic<unsigned> count;
  wire::Report records[wire::kReportBatchMax];
};

int g_fd = -1;
uint32_t g_image = 0;
std::atomic<int32_t> g_pid{0};
std::atomic<uint64_t> g_seq{0};
std::atomic<uint64_t> g_dropped{0};
// Set at exit: records go out one by one from then on.
std::atomic<bool> g_direct{false};
// Each slot is its own page: constinit keeps them zero-filled .bss with no
// constructor at load, and only the slots marked in g_used are ever read,
// since merely reading an untouched page faults it in (~64 faults at every
// exit of every process otherwise).
constinit Slot g_slots[kSlots];
std::atomic<uint64_t> g_used{0};
static_assert(kSlots <= 64, "g_used has one bit per slot");

thread_local int32_t t_tid __attribute__((tls_model("initial-exec"))) = 0;

int32_t Tid() {
  if (t_tid == 0) t_tid = static_cast<int32_t>(::syscall(SYS_gettid));
  return t_tid;
}

int32_t Pid() { return static_cast<int32_t>(::syscall(SYS_getpid)); }

bool Send(const void* data, size_t len) {
  ssize_t n = ::send(g_fd, data, len, MSG_DONTWAIT | MSG_NOSIGNAL);
  return n == static_cast<ssize_t>(len);
}

void Fill(wire::Report* r, wire::Call call, AdmitOp op, wire::ReportVerdict v, PathClass cls,
          int err, const char* path, uint64_t seq) {
  memset(r, 0, offsetof(wire::Report, path));
  r->magic = wire::kReportMagic;
  r->version = wire::kReportVersion;
  r->call = static_cast<uint16_t>(call);
  r->op = static_cast<uint8_t>(op);
  r->verdict = static_cast<uint8_t>(v);
  r->path_class = static_cast<uint8_t>(cls);
  r->err = err;
  r->pid = g_pid.load(std::memory_order_relaxed);
  r->tid = Tid();
  r->image = g_image;
  r->seq = seq;
  r->dropped = g_dropped.load(std::memory_order_relaxed);
  size_t len = path ? strnlen(path, wire::kReportPathMax) : 0;
  if (len == wire::kReportPathMax) {
    len = wire::kReportPathMax - 1;
    r->truncated = 1;
  }
  if (len) memcpy(r->path, path, len);
  memset(r->path + len, 0, wire::kReportPathMax - len);
}

// Sends the slot's batch (the caller holds it); a full channel drops it.
void FlushHeld(Slot* s) {
  unsigned n = s->count.load(std::memory_order_relaxed);
  if (n == 0) return;
  if (!Send(s->records, n * sizeof(wire::Report))) {
    g_dropped.fetch_add(n, std::memory_order_relaxed);
  }
  s->count.store(0, std::memory_order_relaxed);
}

bool TryHold(Slot* s) { return !s->busy.exchange(true); }
void Release(Slot* s) { s->busy.store(false, std::memory_order_release); }

// The image's last record: its totals, so the supervisor can tell a dropped
// record from one that was never made. Waits briefly for room (only here;
// the call path never waits).
void SendFinal() {
  wire::Report r;
  Fill(&r, wire::Call::kExit, AdmitOp::kRead, wire::ReportVerdict::kAdmitted, PathClass::kWorkspace,
       0, nullptr, g_seq.load(std::memory_order_relaxed));
  for (int tries = 0; tries < 40 && !Send(&r, sizeof r); ++tries) {
    if (errno != EAGAIN && errno != ENOBUFS) break;
    pollfd p{g_fd, POLLOUT, 0};
    ::poll(&p, 1, 50);
  }
}

}  // namespace

void StartReports(int fd, uint32_t image) {
  g_pid.store(Pid(), std::memory_order_relaxed);
  g_image = image;
  g_fd = fd;
}

void Note(wire::Call call, AdmitOp op, wire::ReportVerdict v, PathClass cls, int err,
          const char* path) {
  uint64_t seq = g_seq.fetch_add(1, std::memory_order_relaxed) + 1;
  if (g_fd < 0) return;
  unsigned slot = static_cast<uint32_t>(Tid()) % kSlots;
  Slot* s = &g_slots[slot];
  // Marked before first use (seq_cst, like the exchange below), so a flush
  // that does not see the mark finds nothing in the slot.
  if (!(g_used.load(std::memory_order_relaxed) & (uint64_t{1} << slot))) {
    g_used.fetch_or(uint64_t{1} << slot);
  }
  if (g_direct.load(std::memory_order_relaxed) || !TryHold(s)) {
    wire::Report r;
    Fill(&r, call, op, v, cls, err, path, seq);
    if (!Send(&r, sizeof r)) g_dropped.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  unsigned n = s->count.load(std::memory_order_relaxed);
  Fill(&s->records[n], call, op, v, cls, err, path, seq);
  s->count.store(n + 1, std::memory_order_relaxed);
  // g_direct is read again under the slot: an exit flush that passed this
  // slot before we took it has set it, so the record cannot be stranded.
  if (n + 1 == wire::kReportBatchMax || v == wire::ReportVerdict::kRefused || g_direct.load()) {
    FlushHeld(s);
  }
  Release(s);
}

void EndImage(bool exiting) {
  if (g_fd < 0) return;
  int saved = errno;
  // A vfork child shares its parent's memory and counters: it sends what is
  // batched, but the parent's image goes on, batching, with no final record.
  bool own_image = Pid() == g_pid.load(std::memory_order_relaxed);
  if (exiting && own_image) g_direct.store(true);
  const uint64_t used = g_used.load();
  for (unsigned i = 0; i < kSlots; ++i) {
    if (!(used & (uint64_t{1} << i))) continue;
    Slot& s = g_slots[i];
    // An idle empty slot is only read: writing would fault in a page per
    // slot. busy before count, all seq_cst with Note()'s exchange and its
    // g_direct load: a thread that takes the slot after this read sees
    // g_direct and flushes itself; one that released it before shows its
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
      g_dropped.fetch_add(s.count.load(std::memory_order_relaxed), std::memory_order_relaxed);
      continue;
    }
    FlushHeld(&s);
    Release(&s);
  }
  if (own_image) SendFinal();
  errno = saved;
}

void ReportsAfterFork() {
  const uint64_t used = g_used.load(std::memory_order_relaxed);
  for (unsigned i = 0; i < kSlots; ++i) {
    if (!(used & (uint64_t{1} << i))) continue;
    Slot& s = g_slots[i];
    // Written only when set: each slot is its own page, copied on write.
    if (s.count.load(std::memory_order_relaxed) != 0) s.count.store(0, std::memory_order_relaxed);
    if (s.busy.load(std::memory_order_relaxed)) s.busy.store(false, std::memory_order_relaxed);
  }
  g_pid.store(Pid(), std::memory_order_relaxed);
  t_tid = 0;
  g_seq.store(0, std::memory_order_relaxed);
  g_dropped.store(0, std::memory_order_relaxed);
  g_direct.store(false, std::memory_order_relaxed);
}

}  // namespace cordon::preload
