#include "supervisor/tool_filter.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/syscall.h>

#include "supervisor/uapi.h"

namespace cordon::supervisor {
namespace {

using namespace cordon::uapi;

void DenyEscapes(SeccompBuilder& b) {
  // Kernel attack surface and ways around Landlock (see DESIGN.md).
  for (int nr : {SCMP_SYS(io_uring_setup), SCMP_SYS(io_uring_enter), SCMP_SYS(io_uring_register)}) {
    b.Deny(nr, ENOSYS);  // ENOSYS: runtimes fall back to plain I/O
  }
  for (int nr : {SCMP_SYS(ptrace), SCMP_SYS(process_vm_readv), SCMP_SYS(process_vm_writev),
                 SCMP_SYS(mount), SCMP_SYS(umount2), SCMP_SYS(pivot_root), SCMP_SYS(chroot),
                 SCMP_SYS(move_mount), SCMP_SYS(open_tree), SCMP_SYS(fsopen), SCMP_SYS(fsmount),
                 SCMP_SYS(fsconfig), SCMP_SYS(fspick), SCMP_SYS(mount_setattr), SCMP_SYS(setns),
                 SCMP_SYS(bpf), SCMP_SYS(perf_event_open), SCMP_SYS(keyctl), SCMP_SYS(add_key),
                 SCMP_SYS(request_key), SCMP_SYS(userfaultfd), SCMP_SYS(open_by_handle_at),
                 SCMP_SYS(name_to_handle_at), SCMP_SYS(kexec_load), SCMP_SYS(kexec_file_load),
                 SCMP_SYS(init_module), SCMP_SYS(finit_module), SCMP_SYS(delete_module),
                 SCMP_SYS(acct), SCMP_SYS(swapon), SCMP_SYS(swapoff), SCMP_SYS(reboot),
                 SCMP_SYS(settimeofday), SCMP_SYS(clock_settime), SCMP_SYS(clock_adjtime),
                 SCMP_SYS(adjtimex), SCMP_SYS(iopl), SCMP_SYS(ioperm), SCMP_SYS(quotactl),
                 SCMP_SYS(quotactl_fd), SCMP_SYS(syslog), SCMP_SYS(sethostname),
                 SCMP_SYS(setdomainname), SCMP_SYS(vhangup), SCMP_SYS(uselib),
                 SCMP_SYS(fanotify_init), SCMP_SYS(lookup_dcookie), SCMP_SYS(pidfd_getfd),
                 SCMP_SYS(kcmp), SCMP_SYS(process_madvise)}) {
    b.Deny(nr, EPERM);
  }
  for (long nr : {kNrOpenTreeAttr, kNrLsmSetSelfAttr, kNrListmount, kNrStatmount}) {
    b.Deny(static_cast<int>(nr), EPERM);
  }
  // New namespaces would give a root tool a fresh mount table.
  // libseccomp has no "masked != 0", so one rule per namespace flag.
  for (uint64_t flag : {kCloneNewTime, kCloneNewNs, kCloneNewCgroup, kCloneNewUts, kCloneNewIpc,
                        kCloneNewUser, kCloneNewPid, kCloneNewNet}) {
    b.Deny(SCMP_SYS(unshare), EPERM, {SCMP_A0(SCMP_CMP_MASKED_EQ, flag, flag)});
    b.Deny(SCMP_SYS(clone), EPERM, {SCMP_A0(SCMP_CMP_MASKED_EQ, flag, flag)});
  }
  // clone3 takes its flags in memory BPF cannot read: ENOSYS makes glibc use clone.
  b.Deny(SCMP_SYS(clone3), ENOSYS);
  // openat2 could ask for RESOLVE flags the supervisor does not emulate;
  // ENOSYS makes libc fall back to openat, which is filtered by flags.
  b.Deny(static_cast<int>(kNrOpenat2), ENOSYS);
  // Keystroke injection into a terminal the tool still holds.
  for (unsigned long cmd : {kTiocsti, kTioclinux}) {
    b.Deny(SCMP_SYS(ioctl), EPERM, {SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffu, cmd)});
  }
  // personality(2) is restricted in SeccompBuilder's prefix.
}

}  // namespace

Result<BpfProgram> BuildToolFilter(const ToolFilterOptions& opts) {
  SeccompBuilder b;
  DenyEscapes(b);
  if (opts.network == policy::Network::kNone) {
    b.Deny(SCMP_SYS(socket), EPERM, {SCMP_A0(SCMP_CMP_NE, AF_UNIX)});
    b.Deny(SCMP_SYS(socketpair), EPERM, {SCMP_A0(SCMP_CMP_NE, AF_UNIX)});
  }
  return b.Build();
}

}  // namespace cordon::supervisor
