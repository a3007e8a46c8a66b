// Which exec'd images of a run checked in with the preload (preload/wire.h,
// wire::Call::kCheckIn). The supervisor records every exec it lets through
// (the exec notification: pid, and the path as it resolved it), and the
// preload's constructor sends one check-in per image. At the end of the run
// the images without a check-in are the ones that ran without the preload
// (a static or musl binary, a program that cleared LD_PRELOAD for its
// children): only the kernel layers held there.
//
// Attribution only: a check-in is the tool's word, which a hostile tool can
// fake or skip, so nothing is ever granted or refused on its basis.
//
// Keyed by pid and exec generation: a process that execs twice is two
// images and checks in twice. A check-in belongs to the latest exec of its
// pid: the image's constructor sends it before that image can exec again,
// and the supervisor reads every queued record before it records an exec
// (launcher.cc), so a check-in is never taken for the next image's.
//
// Thread-safe: Exec() runs on the notify loop's threads, CheckIn() where the
// report channel is drained.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace cordon::supervisor {

class PreloadCheckins {
 public:
  struct Image {
    pid_t pid = 0;
    unsigned generation = 0;  // 1 for the pid's first exec seen
    std::string path;         // as the supervisor resolved it at the exec
    bool checked_in = false;
  };

  // An exec the supervisor let through, of a file that exists as an
  // executable regular file (one it expects to succeed).
  void Exec(pid_t pid, std::string path);
  // The preload of `pid` checked in: marks the pid's latest exec. False
  // when there is none, or it has checked in already (a second record for
  // one image is not taken for another).
  bool CheckIn(pid_t pid);

  std::vector<Image> Images() const;
  // Check-ins that matched no exec (their pid's exec was not seen, or was
  // checked in already).
  uint64_t unmatched() const;

 private:
  mutable std::mutex mu_;
  std::vector<Image> images_;
  std::map<pid_t, size_t> latest_;  // pid -> index in images_
  uint64_t unmatched_ = 0;
};

// `cordon doctor`: whether the preload loads into a dynamic probe and checks
// in. Runs `probe` (a glibc dynamic executable, e.g. /bin/true) unconfined
// with the preload and a report channel; true when its check-in arrived,
// else false with `why`.
bool ProbePreloadCheckIn(const std::string& probe, std::string* why);

}  // namespace cordon::supervisor
