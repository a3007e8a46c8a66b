// The preload's cost per call: an interposed open+close of an admitted path
// against the raw libc call, the admission check alone, and one unbatched
// report send for comparison. Target: under 150 ns added per call (issue 5).
//
// The library is dlopen'ed with its configuration in the environment and
// its exported hook called directly, as a tool's PLT call would reach it.
// As under `cordon run --audit` (or at --log-level info), the report channel
// is present and a thread drains it like the supervisor.
// CORDON_BENCH_NO_REPORTS=1 leaves it out, as a plain `cordon run` does: no
// one would read the records, so the library only counts.
#include <benchmark/benchmark.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include <time.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "policy/path_admission.h"
#include "preload/wire.h"

namespace {

using OpenFn = int (*)(const char*, int, ...);

struct Setup {
  std::string dir;
  std::string file;
  OpenFn hook = nullptr;
  OpenFn hook_b = nullptr;  // CORDON_BENCH_PRELOAD_SO_B's, for BM_AddedPerCall
  Setup() {
    char tmpl[] = "/tmp/cordon-bench-XXXXXX";
    if (!mkdtemp(tmpl)) abort();
    dir = tmpl;
    file = dir + "/admitted.txt";
    int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) abort();
    ::close(fd);
    setenv(cordon::wire::kEnvWorkspace, dir.c_str(), 1);
    setenv(cordon::wire::kEnvWorkspaceMode, "rw", 1);
    setenv(cordon::wire::kEnvReadOnly, "/usr:/bin:/sbin:/lib:/lib64:/etc:/proc", 1);
    setenv(cordon::wire::kEnvReadWrite, "/dev/null:/dev/zero:/dev/full", 1);
    setenv(cordon::wire::kEnvDenied, "/etc/shadow:/etc/gshadow:/etc/sudoers", 1);
    unsetenv(cordon::wire::kEnvReportFd);
    const char* no_reports = getenv("CORDON_BENCH_NO_REPORTS");
    if (no_reports == nullptr || strcmp(no_reports, "1") != 0) StartChannel();
    const char* so = getenv("CORDON_BENCH_PRELOAD_SO");
    void* lib = dlopen(so ? so : CORDON_PRELOAD_SO, RTLD_NOW | RTLD_LOCAL);
    if (!lib) abort();
    hook = reinterpret_cast<OpenFn>(dlsym(lib, "open"));
    if (!hook) abort();
    if (const char* b = getenv("CORDON_BENCH_PRELOAD_SO_B")) {
      void* lib_b = dlopen(b, RTLD_NOW | RTLD_LOCAL);
      if (!lib_b) abort();
      hook_b = reinterpret_cast<OpenFn>(dlsym(lib_b, "open"));
      if (!hook_b) abort();
    }
  }
  ~Setup() {
    ::unlink(file.c_str());
    ::rmdir(dir.c_str());
  }
  // The supervisor's side: a thread that receives every datagram.
  void StartChannel() {
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) abort();
    // As supervisor/report_channel.cc gives the tool's end (4 MiB), so that
    // batches are queued, not dropped (a dropped send is cheaper).
    int size = 4 << 20;
    if (setsockopt(sv[1], SOL_SOCKET, SO_SNDBUFFORCE, &size, sizeof size) != 0) {
      (void)setsockopt(sv[1], SOL_SOCKET, SO_SNDBUF, &size, sizeof size);
    }
    setenv(cordon::wire::kEnvReportFd, std::to_string(sv[1]).c_str(), 1);
    std::thread([fd = sv[0]] {
      static char buf[cordon::wire::kReportDatagramMax];
      while (::recv(fd, buf, sizeof buf, 0) > 0) {
      }
    }).detach();
  }
};

Setup& S() {
  static Setup s;
  return s;
}

void BM_RawOpenClose(benchmark::State& state) {
  const char* path = S().file.c_str();
  for (auto _ : state) {
    int fd = ::open(path, O_RDONLY | O_CLOEXEC);
    benchmark::DoNotOptimize(fd);
    ::close(fd);
  }
}
BENCHMARK(BM_RawOpenClose);

void BM_InterposedOpenClose(benchmark::State& state) {
  OpenFn hook = S().hook;
  const char* path = S().file.c_str();
  for (auto _ : state) {
    int fd = hook(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) state.SkipWithError("refused");
    benchmark::DoNotOptimize(fd);
    ::close(fd);
  }
}
BENCHMARK(BM_InterposedOpenClose);

// The figure the target is about: raw and interposed open+close of the same
// admitted path, in batches interleaved in one run (the order rotates), so
// load from other processes hits both alike. Each batch is timed in thread
// CPU time; added_ns is the median over rounds of (interposed - raw) of
// the round's adjacent batches, which cancels slow drift. The report
// batches' sends are inside it at their steady-state rate.
//
// CORDON_BENCH_PRELOAD_SO_B=<another build of the library> adds its batches
// to the same rounds (added_b_ns): an A/B of two builds in one process.
void BM_AddedPerCall(benchmark::State& state) {
  constexpr int kBatch = 64;
  const char* path = S().file.c_str();
  std::vector<OpenFn> openers = {nullptr, S().hook};  // nullptr: the raw call
  if (S().hook_b) openers.push_back(S().hook_b);
  auto now = [] {
    timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return static_cast<double>(t.tv_sec) * 1e9 + static_cast<double>(t.tv_nsec);
  };
  std::vector<std::vector<double>> diffs(openers.size());
  std::vector<double> raw;
  std::vector<double> t(openers.size());
  size_t round = 0;
  for (auto _ : state) {
    for (size_t k = 0; k < openers.size(); ++k) {
      size_t o = (k + round) % openers.size();
      OpenFn hook = openers[o];
      double t0 = now();
      for (int i = 0; i < kBatch; ++i) {
        int fd = hook ? hook(path, O_RDONLY | O_CLOEXEC) : ::open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0) state.SkipWithError("open failed");
        ::close(fd);
      }
      t[o] = (now() - t0) / kBatch;
    }
    ++round;
    raw.push_back(t[0]);
    for (size_t o = 1; o < openers.size(); ++o) diffs[o].push_back(t[o] - t[0]);
  }
  auto median = [](std::vector<double>& v) {
    std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
    return v[v.size() / 2];
  };
  state.counters["raw_ns"] = median(raw);
  state.counters["added_ns"] = median(diffs[1]);
  if (openers.size() > 2) state.counters["added_b_ns"] = median(diffs[2]);
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * openers.size() * kBatch));
}
BENCHMARK(BM_AddedPerCall)->MinTime(2.0);

// A relative path: admission also asks the kernel for the cwd.
void BM_InterposedOpenCloseRelative(benchmark::State& state) {
  OpenFn hook = S().hook;
  if (::chdir(S().dir.c_str()) != 0) abort();
  for (auto _ : state) {
    int fd = hook("admitted.txt", O_RDONLY | O_CLOEXEC);
    if (fd < 0) state.SkipWithError("refused");
    benchmark::DoNotOptimize(fd);
    ::close(fd);
  }
}
BENCHMARK(BM_InterposedOpenCloseRelative);

// Admission alone, with the same rule count as a default cordon run.
void BM_AdmitPath(benchmark::State& state) {
  using namespace cordon::policy;
  AdmissionTable t;
  t.SetWorkspace(S().dir, Access::kReadWrite);
  for (const char* p : {"/usr", "/bin", "/sbin", "/lib", "/lib64", "/etc", "/proc"}) {
    t.Add(p, Access::kReadOnly);
  }
  for (const char* p : {"/etc/shadow", "/etc/gshadow", "/etc/sudoers"}) t.Add(p, Access::kDenied);
  for (const char* p : {"/dev/null", "/dev/zero", "/dev/full"}) t.Add(p, Access::kReadWrite);
  std::string_view path = S().file;
  for (auto _ : state) {
    Admission a = AdmitPath(t, AdmitOp::kRead, path, nullptr);
    benchmark::DoNotOptimize(a);
  }
}
BENCHMARK(BM_AdmitPath);

// What one report cost before batching: a non-blocking send of one record
// on a SOCK_SEQPACKET pair while a reader drains it.
void BM_ReportSend(benchmark::State& state) {
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) abort();
  std::atomic<bool> stop{false};
  std::thread reader([&] {
    cordon::wire::Report r;
    while (!stop.load()) {
      if (::recv(sv[0], &r, sizeof r, 0) <= 0) break;
    }
  });
  cordon::wire::Report r{};
  uint64_t dropped = 0;
  for (auto _ : state) {
    if (::send(sv[1], &r, sizeof r, MSG_DONTWAIT | MSG_NOSIGNAL) != sizeof r) ++dropped;
  }
  state.counters["dropped"] = static_cast<double>(dropped);
  stop.store(true);
  ::shutdown(sv[1], SHUT_RDWR);
  reader.join();
  ::close(sv[0]);
  ::close(sv[1]);
}
BENCHMARK(BM_ReportSend);

}  // namespace

BENCHMARK_MAIN();
