#include "tools/doctor_command.h"

#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "supervisor/audit/landlock_reader.h"
#include "supervisor/kernel_audit.h"
#include "supervisor/launcher.h"
#include "supervisor/net/loopback_netns.h"
#include "supervisor/preload_checkin.h"
#include "supervisor/probe.h"

namespace cordon::tools {

void RegisterDoctor(CLI::App& app, int& exit_code) {
  static bool json = false;
  CLI::App* cmd = app.add_subcommand("doctor", "report what this kernel lets cordon enforce");
  cmd->add_flag("--json", json, "machine-readable output");
  cmd->callback([&exit_code] {
    using namespace cordon::supervisor;
    KernelProbe k = ProbeKernel();
    // Where a tool's UDP socket is made under network none, public-web and
    // hosts: (supervisor/net/loopback_netns.h), tried as a run would.
    const LoopbackNetnsProbe udp = ProbeLoopbackNetns();
    Rung rung = ChooseRung(k, false);
    bool full = rung == Rung::kLandlockNotify;
    const KernelAudit audit = k.landlock_abi >= 7 ? ProbeKernelAudit() : KernelAudit::kUnavailable;
    // The same subscription a run makes (supervisor/audit/landlock_reader.h).
    std::string unread;
    const bool readable =
        audit == KernelAudit::kOn && LandlockAuditReader::Open("doctor", &unread) != nullptr;
    const std::string denial_log =
        k.landlock_abi < 7 ? "no (Landlock ABI 7 logs its denials; this kernel's is older)"
        : readable         ? "yes: each run's log holds Landlock's own records of its denials"
        : audit == KernelAudit::kOn ? "no: " + unread
        : audit == KernelAudit::kOff
            ? "no: kernel audit is off (auditctl -e 1 turns it on; cordon does not)"
            : "no: no audit netlink here (CONFIG_AUDIT, or not permitted)";
    // Whether the preload loads into a dynamic program here and checks in
    // (a missing or broken library, a loader that refuses it).
    const char* path_env = std::getenv("PATH");
    const std::string probe = ResolveCommand("true", path_env ? path_env : "/usr/bin:/bin");
    std::string why;
    const bool checks_in = !probe.empty() && ProbePreloadCheckIn(probe, &why);
    if (probe.empty()) why = "no dynamic probe: `true` not found on PATH";
    const std::string static_note =
        "static and musl binaries run without it (the kernel layers alone hold there)";
    auto yes = [](bool b) { return b ? "yes" : "no"; };
    if (json) {
      nlohmann::json j = {
          {"kernel", k.kernel},
          {"landlock_abi", k.landlock_abi},
          {"seccomp_filter", k.seccomp_filter},
          {"seccomp_user_notif", k.user_notif},
          {"seccomp_addfd", k.addfd},
          {"seccomp_addfd_send", k.addfd_send},
          {"seccomp_sync_wakeup", k.sync_wakeup},
          {"io_uring_on_host", k.io_uring},
          {"user_namespaces", k.user_namespaces},
          {"preload_applies_to_glibc_tools", k.glibc},
          {"preload_checks_in", checks_in},
          {"preload_probe", probe},
          {"preload_note", checks_in ? static_note : why},
          {"rung", RungName(rung)},
          {"full_confinement", full},
          {"kernel_audit", KernelAuditName(audit)},
          {"landlock_records_attached", readable},
          {"pidfd_getfd", k.pidfd_getfd},
          {"udp_private_loopback", udp.available},
          {"udp_private_loopback_detail", udp.detail},
          {"serves_undumpable_tools", k.serves_undumpable},
      };
      std::printf("%s\n", j.dump(2).c_str());
    } else {
      std::printf("kernel                 %s\n", k.kernel.c_str());
      std::printf("landlock               %s\n",
                  k.landlock_abi > 0 ? ("ABI " + std::to_string(k.landlock_abi)).c_str() : "missing");
      std::printf("  net rules (ABI 4)    %s\n", yes(k.landlock_abi >= 4));
      std::printf("  scoping (ABI 6)      %s\n", yes(k.landlock_abi >= 6));
      std::printf("seccomp filter         %s\n", yes(k.seccomp_filter));
      std::printf("  user notification   %s\n", yes(k.user_notif));
      std::printf("  ADDFD / ADDFD_SEND   %s / %s\n", yes(k.addfd), yes(k.addfd_send));
      std::printf("  sync wake-up (6.6+)  %s\n", yes(k.sync_wakeup));
      std::printf("io_uring on host       %s (always refused to tools)\n", yes(k.io_uring));
      std::printf("user namespaces        %s (refused to tools; cordon may use one for UDP)\n",
                  yes(k.user_namespaces));
      std::printf("preload (glibc tools)  %s\n", yes(k.glibc));
      if (checks_in) {
        std::printf("  check-in             yes (%s checked in); %s\n", probe.c_str(),
                    static_note.c_str());
      } else {
        std::printf("  check-in             no: %s\n", why.c_str());
      }
      std::printf("pidfd_getfd            %s\n",
                  k.pidfd_getfd ? "yes"
                                : "no (a container's seccomp profile?): the supervisor reaches the "
                                  "tool's files through /proc/PID/fd and makes a bind, connect or "
                                  "listen (AF_UNIX, TCP, UDP) on a stand-in socket installed over "
                                  "the tool's (options set before the call are not carried over); "
                                  "other sockets and an inotify watch fail with EBADF: run the "
                                  "container with --cap-add SYS_PTRACE to have them exactly");
      const std::string udp_line =
          udp.available ? "yes: made in a private loopback (" + udp.detail +
                              "): the tool's own UDP sockets talk, the host's are out of reach"
                        : "refused: no private loopback can be made here (" + udp.detail +
                              "); --network allow gives the host's UDP";
      std::printf("udp under network none %s\n", udp_line.c_str());
      std::printf("undumpable tools       %s\n",
                  k.serves_undumpable
                      ? "served (CAP_SYS_PTRACE)"
                      : "no CAP_SYS_PTRACE (an unprivileged user, a container): a tool's "
                        "prctl(PR_SET_DUMPABLE, 0) is refused (EPERM), and the tool stays "
                        "dumpable so that its file changes can still be made (ssh, ssh-agent go on)");
      std::printf("landlock denial log    %s\n", denial_log.c_str());
      std::printf("enforcement rung       %s\n", RungName(rung));
      std::printf("%s\n", full ? "full confinement available"
                               : "full confinement NOT available on this kernel");
    }
    exit_code = full ? 0 : kExitCordonError;
  });
}

}  // namespace cordon::tools
