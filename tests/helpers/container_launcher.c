/* container_launcher: runs PROGRAM under the syscall refusals of Docker's
 * default seccomp profile that matter to cordon (moby profiles/seccomp/
 * default.json without CAP_SYS_ADMIN and CAP_SYS_PTRACE): pidfd_getfd,
 * kcmp, unshare, setns and mount answer EPERM, clone3 ENOSYS (so libc falls
 * back to clone); ptrace too, as older profiles had it (cordon uses none).
 * process_vm_readv/writev stay: the profile allows them on kernels 4.8+.
 * The filter stays on cordon and everything it starts, as in a container.
 *
 *   container_launcher PROGRAM [ARG...]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <seccomp.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <unistd.h>

int main(int argc, char** argv) {
  if (argc < 2) return 125;
  scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
  if (ctx == NULL) return 125;
  static const char* kEperm[] = {"pidfd_getfd", "ptrace", "kcmp", "unshare", "setns", "mount"};
  for (size_t i = 0; i < sizeof kEperm / sizeof kEperm[0]; ++i) {
    int nr = seccomp_syscall_resolve_name(kEperm[i]);
    if (nr == __NR_SCMP_ERROR || seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), nr, 0) != 0) {
      return 125;
    }
  }
  int clone3 = seccomp_syscall_resolve_name("clone3");
  if (clone3 == __NR_SCMP_ERROR || seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), clone3, 0) != 0) {
    return 125;
  }
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || seccomp_load(ctx) != 0) return 125;
  seccomp_release(ctx);
  execv(argv[1], argv + 1);
  perror("container_launcher: exec");
  return 127;
}
