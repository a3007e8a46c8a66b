// What the tool filter adds to a read-only open+close, and where it goes
// (issue 4). notify_bench times bare and filtered calls one after the other
// in one process (a filter is forever), so load between the two moves the
// ratio by more than the filter costs. Here five processes take turns on
// the CPU they are pinned to, each running a batch of
// open(O_RDONLY|O_CLOEXEC)+close under its own filter, timed with the
// thread CPU clock; per round each filter's batch is paired with the bare
// one, and the medians of those differences are printed:
//   bare      no filter
//   strict    the strict tool filter (ToolFilterIndex 27, as notify_bench)
//   no-early  the same without its early allows (the program before them)
//   cached    ALLOW for everything: the kernel's action cache answers every
//             syscall, the filter never runs (the cost of seccomp at all)
//   minimal   4 instructions that must run for openat (they read its flags)
// Usage: taskset -c 1 filter_bench [ROUNDS [OPENS_PER_BATCH]]
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "supervisor/tool_filter.h"
#include "supervisor/tool_filter_table.h"

namespace {

struct Variant {
  const char* name;
  std::vector<sock_filter> prog;  // empty: no filter
};

std::vector<Variant> Variants() {
  using namespace cordon::supervisor;
  ToolFilterOptions opts;
  opts.notify_exec = false;
  const CompiledToolFilter& f = kToolFilterTable[ToolFilterIndex(opts)];
  std::vector<sock_filter> strict(f.insns, f.insns + f.size);
  // The prefix is 6 instructions of architecture checks, the early allows,
  // then 8 of its own (supervisor/seccomp_filter.cc); the blocks are
  // self-contained, so leaving them out gives the program before them.
  std::vector<sock_filter> no_early(f.insns, f.insns + 6);
  no_early.insert(no_early.end(), f.insns + f.prefix_size - 8, f.insns + f.size);
  std::vector<sock_filter> cached = {BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)};
  std::vector<sock_filter> minimal = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_openat, 0, 1),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, args[2])),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  return {{"bare", {}},
          {"strict", std::move(strict)},
          {"no-early", std::move(no_early)},
          {"cached", std::move(cached)},
          {"minimal", std::move(minimal)}};
}

double BatchNs(const char* path, int opens) {
  timespec a, b;
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
  for (int i = 0; i < opens; ++i) ::close(::open(path, O_RDONLY | O_CLOEXEC));
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
  return ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / opens;
}

// A child that installs `prog` and runs a batch per byte read from `go`,
// writing its time per open+close to `done`.
pid_t StartRunner(const std::vector<sock_filter>& prog, int go, int done, int opens) {
  pid_t pid = ::fork();
  if (pid != 0) return pid;
  if (!prog.empty()) {
    sock_fprog fprog{static_cast<unsigned short>(prog.size()),
                     const_cast<sock_filter*>(prog.data())};
    ::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
    if (::syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &fprog) != 0) _exit(1);
  }
  char c;
  while (::read(go, &c, 1) == 1) {
    double ns = BatchNs("/etc/hostname", opens);
    if (::write(done, &ns, sizeof ns) != sizeof ns) _exit(1);
  }
  _exit(0);
}

double Median(std::vector<double> x) {
  std::nth_element(x.begin(), x.begin() + x.size() / 2, x.end());
  return x[x.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 150;
  const int opens = argc > 2 ? std::atoi(argv[2]) : 2000;
  std::vector<Variant> variants = Variants();
  const size_t n = variants.size();
  std::vector<int> go(n), done(n);
  std::vector<pid_t> pids(n);
  for (size_t v = 0; v < n; ++v) {
    int g[2], d[2];
    if (::pipe2(g, O_CLOEXEC) != 0 || ::pipe2(d, O_CLOEXEC) != 0) return 1;
    pids[v] = StartRunner(variants[v].prog, g[0], d[1], opens);
    go[v] = g[1];
    done[v] = d[0];
  }
  std::vector<std::vector<double>> times(n), added(n);
  std::vector<double> saved;  // no-early minus strict, per round
  for (int r = 0; r < rounds; ++r) {
    std::vector<double> ns(n);
    for (size_t k = 0; k < n; ++k) {
      size_t v = (r + k) % n;  // rotate who runs first
      if (::write(go[v], "g", 1) != 1 ||
          ::read(done[v], &ns[v], sizeof(double)) != sizeof(double)) {
        std::fprintf(stderr, "filter_bench: runner %s failed\n", variants[v].name);
        return 1;
      }
    }
    for (size_t v = 0; v < n; ++v) {
      times[v].push_back(ns[v]);
      added[v].push_back(ns[v] - ns[0]);
    }
    saved.push_back(ns[2] - ns[1]);
  }
  std::printf("open+close, medians of %d rounds of %d:\n", rounds, opens);
  for (size_t v = 0; v < n; ++v) {
    std::printf("  %-9s %6.0f ns  added %+5.0f ns  (x%.3f)\n", variants[v].name, Median(times[v]),
                Median(added[v]), Median(times[v]) / Median(times[0]));
  }
  std::printf("  the early allows save %+.0f ns\n", Median(saved));
  // The runners share pipes with each other, so closing ours is no EOF.
  for (pid_t pid : pids) ::kill(pid, SIGKILL);
  while (::wait(nullptr) > 0) {
  }
  return 0;
}
