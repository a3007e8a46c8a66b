// The warm launch scan of one workspace, in process: what each launch of
// `cordon run` there pays before the ruleset (README "Speed").
//   launch_scan_bench WORKSPACE [ROUNDS]
// The workspace's cache in the state home is read and, when the tree
// changed, rewritten, as at a launch.
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "supervisor/load/normalise.h"
#include "supervisor/walk/scan_cache_file.h"

namespace {

double NowMs() {
  timespec ts;
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

double CpuMs() {
  timespec ts;
  ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: launch_scan_bench WORKSPACE [ROUNDS]\n");
    return 2;
  }
  auto ws = cordon::supervisor::RealPath(argv[1]);
  if (!ws) {
    std::fprintf(stderr, "launch_scan_bench: %s: no such directory\n", argv[1]);
    return 2;
  }
  const int rounds = argc > 2 ? std::atoi(argv[2]) : 50;
  const std::string cache_dir = cordon::supervisor::ScanCacheDirOrEmpty();
  std::vector<double> wall, cpu;
  std::size_t listed = 0, reused = 0;
  for (int i = 0; i < rounds; ++i) {
    const double w0 = NowMs(), c0 = CpuMs();
    cordon::supervisor::CachedLaunchScan s =
        cordon::supervisor::ScanWorkspaceCached(ws.value(), {}, 2000000, 64, cache_dir);
    wall.push_back(NowMs() - w0);
    cpu.push_back(CpuMs() - c0);
    listed = s.scan.dirs_listed;
    reused = s.scan.dirs_reused;
    if (!s.scan.problem.empty()) {
      std::fprintf(stderr, "launch_scan_bench: %s\n", s.scan.problem.c_str());
      return 1;
    }
  }
  std::sort(wall.begin(), wall.end());
  std::sort(cpu.begin(), cpu.end());
  std::printf("%zu listed, %zu reused; wall median %.3f ms (min %.3f), cpu median %.3f ms\n",
              listed, reused, wall[wall.size() / 2], wall[0], cpu[cpu.size() / 2]);
  return 0;
}
