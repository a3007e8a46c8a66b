/* container_launcher: runs PROGRAM under the syscall refusals of Docker's
 * default seccomp profile that matter to cordon (moby profiles/seccomp/
 * default.json without CAP_SYS_ADMIN and CAP_SYS_PTRACE): pidfd_getfd,
 * kcmp, unshare, setns and mount answer EPERM, clone3 ENOSYS (so libc falls
 * back to clone); ptrace too, as older profiles had it (cordon uses none).
 * process_vm_readv/writev stay: the profile allows them on kernels 4.8+.
 * The filter stays on cordon and everything it starts, as in a container.
 * Capabilities become Docker's default set (moby oci/caps/defaults.go), in
 * the bounding set too: no CAP_SYS_ADMIN, CAP_SYS_PTRACE, CAP_NET_ADMIN,
 * CAP_DAC_READ_SEARCH, CAP_SYS_RESOURCE.
 *
 * Run by a user other than root, only the profile applies (such a
 * container process has no capabilities).
 *
 * With CORDON_TEST_CONTAINER_UNSHARE=1 in its environment, unshare stays
 * open (a profile that lets user namespaces be made; the capabilities stay
 * Docker's, so a network namespace needs a user namespace of its own).
 *
 *   container_launcher PROGRAM [ARG...]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/prctl.h>
#include <unistd.h>

static const cap_value_t kDockerCaps[] = {
    CAP_CHOWN,  CAP_DAC_OVERRIDE, CAP_FSETID,           CAP_FOWNER,      CAP_MKNOD,
    CAP_NET_RAW, CAP_SETGID,      CAP_SETUID,           CAP_SETFCAP,     CAP_SETPCAP,
    CAP_NET_BIND_SERVICE,         CAP_SYS_CHROOT,       CAP_KILL,        CAP_AUDIT_WRITE};
enum { kDockerCapCount = sizeof kDockerCaps / sizeof kDockerCaps[0] };

static int InDockerSet(cap_value_t c) {
  for (int i = 0; i < kDockerCapCount; ++i) {
    if (kDockerCaps[i] == c) return 1;
  }
  return 0;
}

/* Docker's set as effective, permitted and inheritable; everything else out
 * of the bounding set, as runc leaves a container's process. */
static int DropToDockerCaps(void) {
  for (cap_value_t c = 0; c < (cap_value_t)cap_max_bits(); ++c) {
    if (!InDockerSet(c) && cap_drop_bound(c) != 0) return -1;
  }
  cap_t caps = cap_init();
  if (caps == NULL) return -1;
  int rc = cap_set_flag(caps, CAP_EFFECTIVE, kDockerCapCount, kDockerCaps, CAP_SET) |
           cap_set_flag(caps, CAP_PERMITTED, kDockerCapCount, kDockerCaps, CAP_SET) |
           cap_set_flag(caps, CAP_INHERITABLE, kDockerCapCount, kDockerCaps, CAP_SET);
  if (rc == 0) rc = cap_set_proc(caps);
  cap_free(caps);
  return rc;
}

int main(int argc, char** argv) {
  if (argc < 2) return 125;
  /* A container's process run as a user other than root (docker run
   * --user) has no capabilities to drop (nor the right to drop bounding
   * ones): only the profile applies, and no_new_privs keeps it so. */
  if (geteuid() == 0 && DropToDockerCaps() != 0) {
    perror("container_launcher: capabilities");
    return 125;
  }
  scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
  if (ctx == NULL) return 125;
  static const char* kEperm[] = {"pidfd_getfd", "ptrace", "kcmp", "unshare", "setns", "mount"};
  const char* unshare_env = getenv("CORDON_TEST_CONTAINER_UNSHARE");
  const int allow_unshare = unshare_env != NULL && strcmp(unshare_env, "1") == 0;
  for (size_t i = 0; i < sizeof kEperm / sizeof kEperm[0]; ++i) {
    if (allow_unshare && strcmp(kEperm[i], "unshare") == 0) continue;
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
