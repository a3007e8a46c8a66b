#include "supervisor/launcher.h"

#include <fcntl.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <set>
#include <sstream>
#include <thread>

#include "base/fd.h"
#include "policy/fs_plan.h"
#include "policy/kernel_interfaces.h"
#include "policy/refusal_hint.h"
#include "supervisor/audit/landlock_reader.h"
#include "supervisor/child.h"
#include "supervisor/fd_passing.h"
#include "supervisor/landlock.h"
#include "supervisor/notify_loop.h"
#include "supervisor/private_tmp.h"
#include "supervisor/read_fence.h"
#include "supervisor/report_channel.h"
#include "supervisor/tool_env.h"
#include "supervisor/tool_wait.h"
#include "supervisor/uapi.h"
#include "supervisor/walk/dir_listing.h"

namespace cordon::supervisor {
namespace {

int Fail(const std::string& msg) {
  spdlog::error("{}", msg);
  return kExitCordonError;
}

std::vector<char*> CStrings(std::vector<std::string>& v) {
  std::vector<char*> out;
  out.reserve(v.size() + 1);
  for (auto& s : v) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

// What the supervisor's post is taken up with (Serve).
struct Post {
  const LaunchRequest& req;
  const std::string& tmp;
  int64_t run_start_ns;
  const std::shared_ptr<LiveRules>& live;
  const std::vector<HomeLink>& home_links;
};

// Takes the seccomp listener the child sends before it execs and builds the
// server that answers it. EPIPE: the child died before sending it.
Result<std::unique_ptr<NotifyServer>> Serve(int notify_sock, const Post& post,
                                            ReportChannel& reports) {
  const LaunchRequest& req = post.req;
  const policy::Policy& p = *req.policy;
  const std::string& tmp = post.tmp;
  const std::shared_ptr<LiveRules>& live = post.live;
  char byte;
  auto listener = RecvFd(notify_sock, &byte, 1);
  if (!listener) {
    return SysError{listener.error().err, "receiving the seccomp listener",
                    listener.error().detail};
  }
  if (!live->started()) return SysError{EINVAL, "rules", "not made"};
  std::unique_ptr<ReadFence> fence;
  if (req.rung == Rung::kNotifyAll) {
    auto f = MakeReadFence(p, tmp);
    if (!f) return SysError{f.error().err, "read fence", Describe(f.error())};
    fence = std::move(f.value());
  }
  EmulatorOptions opts = req.emulator;
  if (req.checkins && req.on_report) {
    // The queued check-ins first: one an image sent before this exec is
    // then never taken for the image this exec starts (preload_checkin.h).
    opts.gates = AlsoSeeingExecs(std::move(opts.gates),
                                 [&reports, on_report = req.on_report, checkins = req.checkins](
                                     pid_t pid, const std::string& path) {
                                   reports.Drain(on_report);
                                   checkins->Exec(pid, path);
                                 });
  }
  opts.read_fence_of = std::make_shared<const ReadFenceSource>(ReadFenceSource{p, tmp});
  opts.home_links = post.home_links;
  auto emulator =
      std::make_shared<Emulator>(live, post.run_start_ns, std::move(opts), std::move(fence));
  return std::unique_ptr<NotifyServer>(
      std::make_unique<NotifyLoop>(std::move(listener.value()), std::move(emulator), req.refusals));
}

}  // namespace

std::vector<std::string> SharedDirs(const policy::Policy& p, const ToolFilterOptions& filter) {
  const char* shm = policy::kSharedMemoryDir;
  if (!DecidesEveryChange(filter)) return {};
  for (const auto& r : p.paths) {
    if (policy::IsWithin(shm, r.path)) return {};  // the policy's own word on it
  }
  struct stat st;
  if (::lstat(shm, &st) != 0 || !S_ISDIR(st.st_mode)) return {};
  return {shm};
}

int64_t NowRealtimeNs() {
  timespec ts;
  ::clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

std::string ResolveCommand(const std::string& cmd, const std::string& path_env) {
  if (cmd.empty()) return {};
  if (cmd.find('/') != std::string::npos) return cmd;
  std::stringstream ss(path_env.empty() ? "/usr/local/bin:/usr/bin:/bin" : path_env);
  std::string dir;
  std::string found_noexec;
  while (std::getline(ss, dir, ':')) {
    if (dir.empty()) dir = ".";
    std::string full = dir + "/" + cmd;
    struct stat st;
    if (::stat(full.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
    if (::access(full.c_str(), X_OK) == 0) return full;
    if (found_noexec.empty()) found_noexec = full;
  }
  return found_noexec;  // execve then fails with EACCES: 126, as execvp does
}

namespace {

// The Landlock ruleset of a run: its planned grants (PlanRunGrants).
Result<Fd> BuildLandlock(const LaunchRequest& req, const std::string& tmp) {
  const std::vector<policy::Grant> grants = PlanRunGrants(*req.policy, req.filter, tmp, true);
  LandlockConfig cfg{req.landlock_abi, policy::NetworkFenced(req.policy->network), true};
  auto rs = BuildRuleset(grants, cfg);
  if (!rs) return rs.error();
  for (const auto& s : rs->skipped) spdlog::info("landlock: skipped {}", s);
  return std::move(rs->fd);
}

// Says why the tool's set-up or exec failed, and how to grant what it lacked.
void ReportChildFailure(const ChildFailure& failure, const LaunchRequest& req,
                        const std::string& cmd, const std::string& tmp) {
  std::string what(failure.what, strnlen(failure.what, sizeof(failure.what)));
  // An exec the gate refused is its owner's to explain (cordon grep's
  // tree check): "cannot execute" would blame the binary.
  const std::shared_ptr<RunGates>& gates = req.emulator.gates;
  const bool gated = failure.stage == ChildStage::kExec && failure.err == EACCES && gates &&
                     gates->CanAsk(Ask::kExec) && !gates->AdmitExec().ok();
  if (gated) {
    spdlog::debug("exec of {} refused by the exec gate", cmd);
  } else if (failure.stage == ChildStage::kExec) {
    spdlog::error("cannot execute {}: {}", cmd, std::strerror(failure.err));
    // Most often a command found on a PATH entry the policy does not
    // grant (a shim under the caller's home): say which, and how.
    // The rules name real paths: a command given by a relative path or
    // through a link is looked up where it leads.
    char real[PATH_MAX];
    const std::string abs = ::realpath(cmd.c_str(), real) != nullptr ? real : cmd;
    const std::vector<policy::PathRule> rules = policy::EffectiveRules(*req.policy, tmp);
    const policy::PathRule* r = policy::CoveringRule(rules, abs);
    if (failure.err == EACCES && r != nullptr && r->access == policy::Access::kDenied) {
      const std::string hint = policy::RefusalHint(policy::FromRule(r->source), abs);
      spdlog::error("{} is denied by the rule of {} ({}){}{}", cmd, r->path,
                    r->source.empty() ? "system" : r->source, hint.empty() ? "" : "; ", hint);
    } else if (failure.err == EACCES && r == nullptr) {
      spdlog::error(
          "{} lies outside what the policy lets the tool read and execute; --ro {} "
          "would grant it",
          cmd, cmd.substr(0, cmd.rfind('/')));
    }
  } else {
    spdlog::error("sandbox setup failed at {}: {}", what, std::strerror(failure.err));
  }
}
// Errors below read as Launch prints them: the step, a colon, what failed
// (err 0: Describe adds nothing after it).

// The kernel layers the tool is built into: the Landlock ruleset (on its
// rung) and the seccomp filter (but preload-only), with the first rules the
// supervisor decides by started in `live`, recording what the layers were
// built for (a reload is checked against them: supervisor/rules.h).
struct KernelLayers {
  Fd ruleset;
  std::unique_ptr<BpfProgram> filter;
};

Status BuildKernelLayers(const LaunchRequest& req, const std::string& tmp,
                         const std::shared_ptr<LiveRules>& live, KernelLayers& out) {
  LaunchedLayers layers;
  layers.filter = req.filter;
  layers.rung = req.rung;
  layers.landlock_abi = req.landlock_abi;
  layers.place = RulesPlace{tmp, req.shared_dirs};
  if (req.rung == Rung::kLandlockNotify) {
    auto rs = BuildLandlock(req, tmp);
    if (!rs) return SysError{0, "landlock:", Describe(rs.error())};
    out.ruleset = std::move(rs.value());
  }
  if (req.rung == Rung::kPreloadOnly) return Ok();
  auto first = MakeRules(*req.policy, layers.place);
  if (!first) return first.error();
  live->Start(std::move(first.value()), std::move(layers));
  auto prog = BuildToolFilter(req.filter);
  if (!prog) return SysError{0, "seccomp:", Describe(prog.error())};
  out.filter = std::make_unique<BpfProgram>(std::move(prog.value()));
  return Ok();
}

// What the child is built from but its descriptors and strings: the
// workspace it starts in, the layers, the capabilities it drops.
ChildSpec MakeChildSpec(const LaunchRequest& req, int workspace_fd, const KernelLayers& kernel,
                        CapabilityDrop& caps) {
  ChildSpec spec;
  spec.parent = ::getpid();
  spec.workspace_fd = workspace_fd;
  spec.ruleset_fd = kernel.ruleset.get();
  if (req.log_landlock_denials && req.landlock_abi >= 7) {
    spec.restrict_flags = uapi::kRestrictSelfLogNewExecOn;
  }
  spec.filter = kernel.filter.get();
  spec.caps = &caps;
  spec.stdout_fd = req.stdout_fd;
  return spec;
}

// The tool's environment (MakeToolEnv: secrets left out, the private
// cache's variables), its private HOME made, and the report channel's fd
// named when the run takes reports (`reports` opened). `home_links`: the
// links the private HOME was made with.
Result<std::vector<std::string>> ToolEnvironment(const LaunchRequest& req, const std::string& tmp,
                                                 ReportChannel& reports,
                                                 std::vector<HomeLink>& home_links) {
  ToolEnv tool_env = MakeToolEnv(req.env, *req.policy, tmp, req.web_proxy_url);
  if (!tool_env.removed.empty()) {
    std::string names;
    for (const std::string& n : tool_env.removed) names += (names.empty() ? "" : " ") + n;
    spdlog::info("environment: left out as secrets: {} (--env-keep NAME keeps one)", names);
  }
  for (const std::string& n : tool_env.cache_notes) spdlog::info("environment: {}", n);
  if (Status h = MakePrivateHome(tool_env); !h) {
    return SysError{0, "private HOME:", Describe(h.error())};
  }
  std::vector<std::string> env = std::move(tool_env.env);
  home_links = std::move(tool_env.home_links);
  if (req.on_report) {
    if (Status s = reports.Open(); !s) {
      return SysError{0, "report channel:", Describe(s.error())};
    }
    std::erase_if(env, [](const std::string& e) { return e.rfind("CORDON_REPORT_FD=", 0) == 0; });
    env.push_back("CORDON_REPORT_FD=" + std::to_string(reports.tool_fd()));
  }
  return env;
}

// The tool's ends and ours: the socket its first process sends its
// seccomp listener over, and the pipe it says a failed set-up or exec on.
struct ToolChannels {
  Fd notify_parent, notify_child;
  Fd status_read, status_write;
};

Result<ToolChannels> OpenToolChannels() {
  ToolChannels ch;
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) {
    return SysError{errno, "socketpair"};
  }
  ch.notify_parent = Fd(sv[0]);
  ch.notify_child = Fd(sv[1]);
  int pp[2];
  if (::pipe2(pp, O_CLOEXEC) != 0) return SysError{errno, "pipe"};
  ch.status_read = Fd(pp[0]);
  ch.status_write = Fd(pp[1]);
  return ch;
}

// The child spawned (pid < 0: -errno of a failed clone) and the notify
// server at its post, or why it could not take it up (EPIPE: the child
// died before it sent the listener; a null server: nothing is notified).
struct Spawned {
  pid_t pid = -1;
  Result<std::unique_ptr<NotifyServer>> served = std::unique_ptr<NotifyServer>();
};

// The exec window: this thread sleeps in SpawnChild until the child has
// exec'd. When that execve is notified (an exec allowlist, the notify-all
// rung), a second thread takes the listener and starts the server (which
// answers on its own thread) meanwhile. Otherwise the listener waits in
// the socket and this thread takes it once the child has exec'd.
Spawned SpawnAndServe(const Post& post, const ChildSpec& spec, KernelLayers& kernel,
                      ToolChannels& ch, ReportChannel& reports) {
  const LaunchRequest& req = post.req;
  const bool notifies = kernel.filter && kernel.filter->has_notify;
  const bool exec_notified = notifies && (req.filter.notify_exec || req.filter.notify_all_paths);
  auto serve = [&] { return Serve(ch.notify_parent.get(), post, reports); };
  Spawned out;
  std::thread window;
  if (exec_notified) window = std::thread([&] { out.served = serve(); });
  out.pid = SpawnChild(spec);
  if (out.pid > 0 && req.landlock_audit != nullptr) req.landlock_audit->SetCreator(out.pid);
  // The child has exec'd or died: our copies of its ends go, so a child that
  // died before sending the listener ends the wait for it with EOF.
  ch.notify_child.reset();
  reports.CloseToolEnd();
  ch.status_write.reset();
  kernel.ruleset.reset();
  if (window.joinable()) {
    window.join();
  } else if (notifies && out.pid >= 0) {
    out.served = serve();
  }
  return out;
}

}  // namespace

std::vector<policy::Grant> PlanRunGrants(const policy::Policy& p, const ToolFilterOptions& filter,
                                         const std::string& tmp, bool log) {
  std::vector<policy::PathRule> rules = policy::EffectiveRules(p, tmp);
  // Protected paths: when every write-open, create, rename and unlink is
  // decided by the supervisor (IsProtected), Landlock need not carve them,
  // and must not: a carve makes their parent directory read-only, so git
  // could not create .git/index.lock. With links: kernel or deletes
  // allowed, the carve stays.
  // Likewise a denied path that does not exist yet: nothing can bring it
  // into being but the supervisor, which refuses to; a carve would leave
  // the files the run creates beside it unreadable.
  if (filter.notify_write_opens && filter.notify_deletes) {
    std::erase_if(rules, [](const policy::PathRule& r) {
      struct stat st;
      return r.source == policy::kProtectedPathSource ||
             (r.access == policy::Access::kDenied && ::lstat(r.path.c_str(), &st) != 0 &&
              errno == ENOENT);
    });
  }
  std::vector<policy::SkippedLink> links;
  auto grants = policy::PlanGrants(rules, ListDir, &links);
  for (const auto& l : log ? links : std::vector<policy::SkippedLink>{}) {
    if (l.denied.empty()) {
      spdlog::info("landlock: carve skips {}: a symlink that does not resolve", l.path);
    } else {
      spdlog::info("landlock: carve skips {}: a symlink to {}, which would grant denied {}", l.path,
                   l.target, l.denied);
    }
  }
  return grants;
}

int Launch(const LaunchRequest& req) {
  const policy::Policy& p = *req.policy;
  // Files born from here on are the run's own and may be deleted freely.
  const int64_t run_start_ns = req.run_start_ns != 0 ? req.run_start_ns : NowRealtimeNs();
  Fd ws(::open(p.workspace.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!ws) return Fail("workspace " + p.workspace + ": " + std::strerror(errno));

  PrivateTmp tmp;
  if (p.private_tmp) {
    if (Status s = tmp.Create(); !s) return Fail("private TMPDIR: " + Describe(s.error()));
  }

  KernelLayers kernel;
  const std::shared_ptr<LiveRules> live = req.rules ? req.rules : std::make_shared<LiveRules>();
  if (Status s = BuildKernelLayers(req, tmp.path(), live, kernel); !s)
    return Fail(Describe(s.error()));

  std::vector<std::string> argv = req.argv;
  ReportChannel reports;
  std::vector<HomeLink> home_links;
  auto tool_env = ToolEnvironment(req, tmp.path(), reports, home_links);
  if (!tool_env) return Fail(Describe(tool_env.error()));
  std::vector<std::string> env = std::move(tool_env.value());
  std::vector<char*> cargv = CStrings(argv);
  std::vector<char*> cenv = CStrings(env);

  auto channels = OpenToolChannels();
  if (!channels) return Fail(Describe(channels.error()));
  ToolChannels& ch = channels.value();
  const ForwardedSignals signals;

  CapabilityDrop caps;
  ChildSpec spec = MakeChildSpec(req, ws.get(), kernel, caps);
  spec.notify_sock = ch.notify_child.get();
  spec.status_pipe = ch.status_write.get();
  spec.keep_fd = reports.tool_fd();
  spec.path = cargv[0];
  spec.argv = cargv.data();
  spec.envp = cenv.data();

  const Post post{req, tmp.path(), run_start_ns, live, home_links};
  Spawned spawned = SpawnAndServe(post, spec, kernel, ch, reports);
  const pid_t pid = spawned.pid;
  if (pid < 0) return Fail(std::string("clone: ") + std::strerror(-pid));
  Fd pidfd(static_cast<int>(::syscall(uapi::kNrPidfdOpen, pid, 0)));
  if (!pidfd) {
    ::kill(pid, SIGKILL);
    KillRemaining(pid);
    return Fail(std::string("pidfd_open: ") + std::strerror(errno));
  }
  std::unique_ptr<NotifyServer> server;
  if (spawned.served) {
    server = std::move(spawned.served.value());
  } else if (spawned.served.error().err != EPIPE) {
    // The supervisor could not take up its post: the filter fails closed
    // (ENOSYS once the listener is gone), and the tool is not left running.
    ::kill(pid, SIGKILL);
    KillRemaining(pid);
    return Fail(Describe(spawned.served.error()));
  }

  if (req.on_started) req.on_started();
  const Waited waited =
      Supervise(pid, pidfd.get(), signals.fd(), std::move(ch.status_read), reports, req.on_report);
  if (server) server->Shutdown();
  // A run ends with its tool: what it left running (`cmd &`, nohup, a
  // daemon) is stopped, and said so, since nothing else would tell.
  if (const int left = KillRemaining(pid); left > 0) {
    spdlog::warn("the run ended with its tool: {} process{} it left running {} stopped", left,
                 left == 1 ? "" : "es", left == 1 ? "was" : "were");
  }
  reports.Drain(req.on_report);
  server.reset();  // its thread ends now that no task uses the filter
  if (req.refusals) req.refusals->Finish(waited.failed || waited.exit_code != 0);

  if (waited.failed) ReportChildFailure(waited.failure, req, argv[0], tmp.path());
  return waited.exit_code;
}

}  // namespace cordon::supervisor
