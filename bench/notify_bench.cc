// The cost of one notified mutation against the same call at kernel speed.
// The process is its own tool: a supervisor thread started before the
// filter serves the listener with cordon's NotifyLoop and Emulator, then
// the main thread installs the tool filter. Bare benchmarks run first (the
// filter is forever), then the same calls under the filter:
//   openat(O_RDONLY)          never notified: allowed in the filter's prefix
//   openat(O_CREAT|O_WRONLY)  notified, emulated, fd installed with ADDFD
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <atomic>
#include <string>
#include <thread>

#include "supervisor/notify_loop.h"
#include "supervisor/tool_filter.h"

namespace {

std::string g_dir;
bool g_filtered = false;

void InstallOnce() {
  if (g_filtered) return;
  g_filtered = true;
  auto roots = cordon::supervisor::WriteRoots::Open({cordon::policy::PathRule::ReadWrite(g_dir)}, g_dir);
  if (!roots) std::abort();
  auto rules = std::make_shared<cordon::supervisor::LiveRules>();
  rules->Start(std::make_shared<const cordon::supervisor::Rules>(
                   cordon::supervisor::Rules{std::move(roots.value())}),
               {});
  auto emulator = std::make_shared<cordon::supervisor::Emulator>(
      std::move(rules), 0, cordon::supervisor::EmulatorOptions{});
  cordon::supervisor::ToolFilterOptions opts;
  opts.notify_exec = false;
  auto prog = cordon::supervisor::BuildToolFilter(opts);
  if (!prog) std::abort();
  // Static: the supervisor thread outlives this function.
  static std::atomic<int> listener{-1};
  static std::atomic<bool> ready{false};
  // The helper thread exists before the filter, so it is not filtered, nor
  // is the loop's receiver it starts. The loop lives as long as the filter.
  std::thread([emulator] {
    while (!ready.load()) std::this_thread::yield();
    new cordon::supervisor::NotifyLoop(cordon::Fd(listener.load()), emulator);
  }).detach();
  ::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
  listener = cordon::supervisor::InstallFilter(*prog);
  if (listener.load() <= 0) std::abort();
  ready = true;
}

void OpenReadOnly(benchmark::State& state) {
  std::string path = g_dir + "/existing";
  for (auto _ : state) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    benchmark::DoNotOptimize(fd);
    ::close(fd);
  }
}

void OpenCreate(benchmark::State& state) {
  std::string path = g_dir + "/created";
  for (auto _ : state) {
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) state.SkipWithError("open(O_CREAT) failed");
    ::close(fd);
  }
}

void BM_Bare_OpenReadOnly(benchmark::State& s) { OpenReadOnly(s); }
void BM_Bare_OpenCreate(benchmark::State& s) { OpenCreate(s); }
void BM_Notify_OpenReadOnly(benchmark::State& s) {
  InstallOnce();
  OpenReadOnly(s);
}
void BM_Notify_OpenCreate(benchmark::State& s) {
  InstallOnce();
  OpenCreate(s);
}

BENCHMARK(BM_Bare_OpenReadOnly);
BENCHMARK(BM_Bare_OpenCreate);
BENCHMARK(BM_Notify_OpenReadOnly);
BENCHMARK(BM_Notify_OpenCreate);

}  // namespace

int main(int argc, char** argv) {
  char tmpl[] = "/tmp/cordon-bench-XXXXXX";
  if (::mkdtemp(tmpl) == nullptr) return 1;
  g_dir = tmpl;
  int fd = ::open((g_dir + "/existing").c_str(), O_WRONLY | O_CREAT, 0644);
  ::close(fd);
  // Under the filter this process may not remove its own write root: a
  // child started now removes the directory once the pipe closes (exit).
  int gone[2];
  if (::pipe2(gone, O_CLOEXEC) != 0) return 1;
  if (::fork() == 0) {
    ::close(gone[1]);
    char c;
    while (::read(gone[0], &c, 1) > 0) {
    }
    ::execlp("rm", "rm", "-rf", g_dir.c_str(), nullptr);
    _exit(1);
  }
  ::close(gone[0]);
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
