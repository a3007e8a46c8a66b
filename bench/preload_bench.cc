// The preload's cost per call: an interposed open+close of an admitted path
// against the raw libc call, the admission check alone, and one unbatched
// report send for comparison. Target: under 150 ns added per call (issue 5).
//
// The library is dlopen'ed with its configuration in the environment and
// its exported hook called directly, as a tool's PLT call would reach it.
// As under `cordon run`, the report channel is present and a thread drains
// it like the supervisor; CORDON_BENCH_NO_REPORTS=1 leaves it out (as
// `env -u CORDON_REPORT_FD` does).
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
  }
  ~Setup() {
    ::unlink(file.c_str());
    ::rmdir(dir.c_str());
  }
  // The supervisor's side: a thread that receives every datagram.
  void StartChannel() {
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) abort();
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
// admitted path, interleaved in batches in one run, so load from other
// processes hits both alike. Medians over batches of the per-call time;
// added_ns is their difference (the report batches' sends are inside it,
// at their steady-state rate).
void BM_AddedPerCall(benchmark::State& state) {
  constexpr int kBatch = 64;
  OpenFn hook = S().hook;
  const char* path = S().file.c_str();
  auto now = [] {
    timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return static_cast<double>(t.tv_sec) * 1e9 + static_cast<double>(t.tv_nsec);
  };
  std::vector<double> raw, interposed;
  bool raw_first = true;
  for (auto _ : state) {
    for (int pass = 0; pass < 2; ++pass) {
      bool use_raw = (pass == 0) == raw_first;
      double t0 = now();
      for (int i = 0; i < kBatch; ++i) {
        int fd = use_raw ? ::open(path, O_RDONLY | O_CLOEXEC) : hook(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0) state.SkipWithError("open failed");
        ::close(fd);
      }
      (use_raw ? raw : interposed).push_back((now() - t0) / kBatch);
    }
    raw_first = !raw_first;
  }
  auto quantile = [](std::vector<double>& v, double q) {
    std::sort(v.begin(), v.end());
    return v[static_cast<size_t>(q * (v.size() - 1))];
  };
  double r = quantile(raw, 0.5);
  double i = quantile(interposed, 0.5);
  state.counters["raw_ns"] = r;
  state.counters["interposed_ns"] = i;
  state.counters["added_ns"] = i - r;
  state.counters["added_q10"] = quantile(interposed, 0.1) - quantile(raw, 0.1);
  state.counters["added_q25"] = quantile(interposed, 0.25) - quantile(raw, 0.25);
  state.SetItemsProcessed(state.iterations() * 2 * kBatch);
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
  t.SetWorkspace(S().dir, RuleKind::kReadWrite);
  for (const char* p : {"/usr", "/bin", "/sbin", "/lib", "/lib64", "/etc", "/proc"}) {
    t.Add(p, RuleKind::kReadOnly);
  }
  for (const char* p : {"/etc/shadow", "/etc/gshadow", "/etc/sudoers"}) t.Add(p, RuleKind::kDenied);
  for (const char* p : {"/dev/null", "/dev/zero", "/dev/full"}) t.Add(p, RuleKind::kReadWrite);
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
