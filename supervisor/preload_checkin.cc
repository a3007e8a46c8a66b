#include "supervisor/preload_checkin.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>

#include "preload/wire.h"
#include "supervisor/preload_setup.h"
#include "supervisor/report_channel.h"

extern char** environ;

namespace cordon::supervisor {

void PreloadCheckins::Exec(pid_t pid, std::string path) {
  std::lock_guard<std::mutex> l(mu_);
  unsigned generation = 1;
  if (auto it = latest_.find(pid); it != latest_.end()) {
    generation = images_[it->second].generation + 1;
  }
  latest_[pid] = images_.size();
  images_.push_back({pid, generation, std::move(path), false});
}

bool PreloadCheckins::CheckIn(pid_t pid) {
  std::lock_guard<std::mutex> l(mu_);
  auto it = latest_.find(pid);
  if (it == latest_.end() || images_[it->second].checked_in) {
    ++unmatched_;
    return false;
  }
  images_[it->second].checked_in = true;
  return true;
}

std::vector<PreloadCheckins::Image> PreloadCheckins::Images() const {
  std::lock_guard<std::mutex> l(mu_);
  return images_;
}

uint64_t PreloadCheckins::unmatched() const {
  std::lock_guard<std::mutex> l(mu_);
  return unmatched_;
}

bool ProbePreloadCheckIn(const std::string& probe, std::string* why) {
  if (!UsesGlibcLoader(probe, why)) {
    *why = probe + ": " + *why;
    return false;
  }
  const std::string library = FindPreloadLibrary();
  if (library.empty()) {
    *why = "libcordon_preload.so not found";
    return false;
  }
  // Any normal directory other than "/" serves: the probe only loads the
  // preload and checks in, and the preload grants nothing.
  policy::Policy p;
  p.workspace = "/tmp";
  PreloadEnv env;
  if (!MakePreloadEnv(p, library, "", {}, &env, why)) return false;
  ReportChannel channel;
  if (Status s = channel.Open(); !s) {
    *why = "report channel: " + Describe(s.error());
    return false;
  }
  // The probe's end without FD_CLOEXEC, so it survives the exec.
  const int keep = ::fcntl(channel.tool_fd(), F_DUPFD, 3);
  if (keep < 0) {
    *why = std::string("fcntl: ") + std::strerror(errno);
    return false;
  }
  std::vector<std::string> vars;
  for (char** e = environ; e && *e; ++e) vars.emplace_back(*e);
  ApplyPreloadEnv(&vars, env.set);
  vars.push_back(std::string(wire::kEnvReportFd) + "=" + std::to_string(keep));
  std::vector<char*> cenv;
  for (auto& v : vars) cenv.push_back(v.data());
  cenv.push_back(nullptr);
  std::string arg0 = probe;
  char* argv[] = {arg0.data(), nullptr};
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  pid_t pid = -1;
  int rc = ::posix_spawn(&pid, probe.c_str(), &fa, nullptr, argv, cenv.data());
  posix_spawn_file_actions_destroy(&fa);
  ::close(keep);
  channel.CloseToolEnd();
  if (rc != 0) {
    *why = probe + ": " + std::strerror(rc);
    return false;
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  bool checked_in = false;
  channel.Drain([&](const void* data, size_t len) {
    wire::Report r;
    if (len != sizeof r) return;
    std::memcpy(&r, data, sizeof r);
    if (r.magic == wire::kReportMagic && r.call == static_cast<uint16_t>(wire::Call::kCheckIn) &&
        r.pid == pid) {
      checked_in = true;
    }
  });
  if (!checked_in) *why = probe + " ran, but its preload did not check in";
  return checked_in;
}

}  // namespace cordon::supervisor
