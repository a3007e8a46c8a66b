#include "supervisor/tool_filter.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include <iterator>

#include "policy/fs_plan.h"
#include "preload/wire.h"
#include "supervisor/uapi.h"

namespace cordon::supervisor {
namespace {

using namespace cordon::uapi;

// The bits of an int argument (fcntl's cmd, socket's family): all the
// kernel reads of the 64-bit register.
constexpr uint64_t kIntMask = 0xffffffffu;

void DenyEscapes(SeccompBuilder& b) {
  // Kernel attack surface and ways around Landlock (see DESIGN.md).
  for (int nr : {SCMP_SYS(io_uring_setup), SCMP_SYS(io_uring_enter), SCMP_SYS(io_uring_register)}) {
    b.Deny(nr, ENOSYS);  // ENOSYS: runtimes fall back to plain I/O
  }
  for (int nr :
       {SCMP_SYS(ptrace), SCMP_SYS(process_vm_readv), SCMP_SYS(process_vm_writev), SCMP_SYS(mount),
        SCMP_SYS(umount2), SCMP_SYS(pivot_root), SCMP_SYS(chroot), SCMP_SYS(move_mount),
        SCMP_SYS(open_tree), SCMP_SYS(fsopen), SCMP_SYS(fsmount), SCMP_SYS(fsconfig),
        SCMP_SYS(fspick), SCMP_SYS(mount_setattr), SCMP_SYS(setns), SCMP_SYS(bpf),
        SCMP_SYS(perf_event_open), SCMP_SYS(keyctl), SCMP_SYS(add_key), SCMP_SYS(request_key),
        SCMP_SYS(userfaultfd), SCMP_SYS(open_by_handle_at), SCMP_SYS(name_to_handle_at),
        SCMP_SYS(kexec_load), SCMP_SYS(kexec_file_load), SCMP_SYS(init_module),
        SCMP_SYS(finit_module), SCMP_SYS(delete_module), SCMP_SYS(acct), SCMP_SYS(swapon),
        SCMP_SYS(swapoff), SCMP_SYS(reboot), SCMP_SYS(settimeofday), SCMP_SYS(clock_settime),
        SCMP_SYS(clock_adjtime), SCMP_SYS(adjtimex), SCMP_SYS(iopl), SCMP_SYS(ioperm),
        SCMP_SYS(quotactl), SCMP_SYS(quotactl_fd), SCMP_SYS(syslog), SCMP_SYS(sethostname),
        SCMP_SYS(setdomainname), SCMP_SYS(vhangup), SCMP_SYS(uselib), SCMP_SYS(fanotify_init),
        SCMP_SYS(lookup_dcookie), SCMP_SYS(pidfd_getfd), SCMP_SYS(kcmp), SCMP_SYS(process_madvise),
        // System V IPC has no path Landlock could fence and no
        // namespace here: a root tool would attach the host's
        // shared memory segments, queues and semaphores.
        SCMP_SYS(shmget), SCMP_SYS(shmat), SCMP_SYS(shmctl), SCMP_SYS(msgget), SCMP_SYS(msgsnd),
        SCMP_SYS(msgrcv), SCMP_SYS(msgctl), SCMP_SYS(semget), SCMP_SYS(semop), SCMP_SYS(semtimedop),
        SCMP_SYS(semctl)}) {
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
  // Keystroke injection into a terminal the tool still holds, and the
  // file changes an fd opened read-only allows (uapi.h).
  for (unsigned long cmd :
       {kTiocsti, kTioclinux, kFsIocSetversion, kExt4IocSetversion, kExt4IocMigrate,
        kFsIocEnableVerity, kFsIocSetEncryptionPolicy, kBtrfsIocSubvolSetflags}) {
    b.Deny(SCMP_SYS(ioctl), EPERM, {SCMP_A1(SCMP_CMP_MASKED_EQ, kIntMask, cmd)});
  }
  for (uint32_t type_nr :
       {kBtrfsIocSnapCreate, kBtrfsIocDefrag, kBtrfsIocSubvolCreate, kBtrfsIocSnapDestroy,
        kBtrfsIocDefragRange, kBtrfsIocSnapCreateV2, kBtrfsIocSubvolCreateV2,
        kBtrfsIocSetReceivedSubvol, kBtrfsIocSnapDestroyV2, kFsIocAddEncryptionKey,
        kFsIocRemoveEncryptionKey}) {
    b.Deny(SCMP_SYS(ioctl), EPERM, {SCMP_A1(SCMP_CMP_MASKED_EQ, kIoctlTypeNrMask, type_nr)});
  }
  b.Deny(SCMP_SYS(ioctl), EPERM, {SCMP_A1(SCMP_CMP_MASKED_EQ, kIoctlTypeMask, kF2fsIoctlType)});
  // A lease needs only ownership of a file opened read-only: a root tool
  // could hold one on /etc/passwd and stall every host process that opens
  // it for writing (lease-break-time, 45 s each). Locks stay: honest tools
  // lock their own files.
  // fcntl's cmd is an int: the kernel drops the upper 32 bits of the
  // register, so the match must too, or a raw syscall with one of them set
  // walks past it (kIntMask).
  b.Deny(SCMP_SYS(fcntl), EPERM, {SCMP_A1(SCMP_CMP_MASKED_EQ, kIntMask, F_SETLEASE)});
  // personality(2) is restricted in SeccompBuilder's prefix.
}

// The kernel's bare __O_TMPFILE bit; glibc's O_TMPFILE adds O_DIRECTORY and
// would send every directory open.
constexpr uint64_t kBareTmpfile = 020000000;
constexpr uint64_t kWriteOpenBits[] = {O_WRONLY, O_RDWR, O_CREAT, O_TRUNC, O_APPEND, kBareTmpfile};

// The socket type without SOCK_NONBLOCK and SOCK_CLOEXEC (the kernel's
// SOCK_TYPE_MASK).
constexpr uint64_t kSockTypeMask = 0xf;

constexpr uint32_t kAnyWriteOpenBit = [] {
  uint64_t any = 0;
  for (uint64_t bit : kWriteOpenBits) any |= bit;
  return static_cast<uint32_t>(any);
}();

// A brokered read (wire::kBrokerOpenFlag, policy/fs_plan.h CarvesReads):
// an openat carrying the bit goes to the supervisor whatever its other
// flags say, which decides it by policy whoever set it. The kernel would
// ignore the bit, so an open let through with it is a plain one.
constexpr uint32_t kBrokerBit = static_cast<uint32_t>(wire::kBrokerOpenFlag);

// Opens that can write (`write_opens`): one rule per flag bit (libseccomp
// ORs rules); brokered reads (`brokered`): the broker bit. No other rule
// names open or openat (openat2 is another number), so every other open is
// allowed: the prefix allows those before libseccomp's tree, testing the
// broker bit with the write bits. The kernel reads the flags as an int: the
// rules, too, test only the low word.
void NotifyOpens(SeccompBuilder& b, bool write_opens, bool brokered) {
  uint32_t early_openat = 0;
  if (brokered) {
    b.Notify(SCMP_SYS(openat), {SCMP_A2(SCMP_CMP_MASKED_EQ, kBrokerBit, kBrokerBit)});
    early_openat |= kBrokerBit;
  }
  if (write_opens) {
    for (uint64_t bit : kWriteOpenBits) {
      b.Notify(SCMP_SYS(open), {SCMP_A1(SCMP_CMP_MASKED_EQ, bit, bit)});
      b.Notify(SCMP_SYS(openat), {SCMP_A2(SCMP_CMP_MASKED_EQ, bit, bit)});
    }
    early_openat |= kAnyWriteOpenBit;
  }
  if (early_openat != 0) b.AllowEarlyWhenClear(SCMP_SYS(openat), 2, early_openat);
  if (write_opens) {
    b.AllowEarlyWhenClear(SCMP_SYS(open), 1, kAnyWriteOpenBit);
    b.Notify(SCMP_SYS(creat));
  }
}

// The bits of ToolFilterIndex.
constexpr size_t kBitNetworkNone = 1, kBitMutations = 2, kBitAllPaths = 4, kBitDeletes = 8,
                 kBitWriteOpens = 16, kBitExec = 32, kBitSignals = 64, kBitBroker = 128;

// The notified syscalls, one list each for the filter and for explain.
constexpr int kDeletes[] = {SCMP_SYS(unlink), SCMP_SYS(unlinkat), SCMP_SYS(rmdir)};
constexpr int kRenames[] = {SCMP_SYS(rename), SCMP_SYS(renameat), SCMP_SYS(renameat2)};
constexpr int kOpens[] = {SCMP_SYS(open), SCMP_SYS(openat), SCMP_SYS(creat)};
constexpr int kAlwaysNotified[] = {
    SCMP_SYS(link), SCMP_SYS(linkat), SCMP_SYS(symlink), SCMP_SYS(symlinkat), SCMP_SYS(mkdir),
    SCMP_SYS(mkdirat), SCMP_SYS(mknod), SCMP_SYS(mknodat), SCMP_SYS(truncate), SCMP_SYS(chmod),
    SCMP_SYS(fchmodat), static_cast<int>(kNrFchmodat2), SCMP_SYS(chown), SCMP_SYS(fchownat),
    SCMP_SYS(lchown), SCMP_SYS(utime), SCMP_SYS(utimes), SCMP_SYS(utimensat), SCMP_SYS(futimesat),
    SCMP_SYS(setxattr), SCMP_SYS(lsetxattr), SCMP_SYS(removexattr), SCMP_SYS(lremovexattr),
    static_cast<int>(kNrSetxattrat), static_cast<int>(kNrRemovexattrat),
    static_cast<int>(kNrFileSetattr), SCMP_SYS(fchmod), SCMP_SYS(fchown), SCMP_SYS(fsetxattr),
    SCMP_SYS(fremovexattr),
    // Changes no file, answered with CONTINUE: seen so the supervisor's
    // cached umask (tool_creds.h) is never stale.
    SCMP_SYS(umask)};
constexpr int kSchedTargets[] = {SCMP_SYS(sched_setaffinity), SCMP_SYS(sched_setscheduler),
                                 SCMP_SYS(sched_setparam), SCMP_SYS(sched_setattr)};
// Without Landlock's signal scope (ABI < 6, the notify-all rung) a root tool
// could signal any process of the host. kill(0, sig), the caller's own
// process group, needs no check.
constexpr int kSignals[] = {SCMP_SYS(tkill), SCMP_SYS(tgkill), SCMP_SYS(rt_sigqueueinfo),
                            SCMP_SYS(rt_tgsigqueueinfo), SCMP_SYS(pidfd_send_signal)};
// Landlock (ABI 7) does not check inotify watches: the supervisor adds them
// for what the tool may read only (emulator_watch.cc).
constexpr int kWatches[] = {SCMP_SYS(inotify_add_watch)};
// Landlock (ABI 7) does not fence a Unix socket's name: connect would reach
// any daemon listening on the host (systemd, D-Bus, docker, cordon policyd's
// approvals), bind would make names in protected places. The supervisor
// performs both, for Unix names beneath the writable roots only, and for
// other families (network allow) without its capabilities
// (emulator_socket.cc). Under network none listen(2) too: on an unbound
// socket it binds the wildcard address (policy/loopback.h).
constexpr int kSocketNames[] = {SCMP_SYS(connect), SCMP_SYS(bind)};

// Calls that act on another process and that no Landlock ABI scopes: a
// root tool (uid 0 like most of the host) could renice every root process,
// cut PID 1's limits or pin daemons to one CPU. Notified unless aimed at the
// caller itself, and let through only for the tool's own processes
// (emulator_process.cc). Conditions are ANDed within a rule, rules ORed.
void NotifyProcessTargets(SeccompBuilder& b) {
  // (which, who): PRIO_PROCESS (0) / IOPRIO_WHO_PROCESS (1) with who 0 is
  // the caller.
  b.Notify(SCMP_SYS(setpriority), {SCMP_A0(SCMP_CMP_NE, 0)});
  b.Notify(SCMP_SYS(setpriority), {SCMP_A1(SCMP_CMP_NE, 0)});
  b.Notify(SCMP_SYS(ioprio_set), {SCMP_A0(SCMP_CMP_NE, 1)});
  b.Notify(SCMP_SYS(ioprio_set), {SCMP_A1(SCMP_CMP_NE, 0)});
  // prlimit64(pid, resource, new, old): only a change is notified.
  b.Notify(SCMP_SYS(prlimit64), {SCMP_A0(SCMP_CMP_NE, 0), SCMP_A2(SCMP_CMP_NE, 0)});
  for (int nr : kSchedTargets) b.Notify(nr, {SCMP_A0(SCMP_CMP_NE, 0)});
  // A tool that makes itself undumpable (ssh, ssh-agent) shuts out a
  // supervisor without CAP_SYS_PTRACE (an unprivileged user's, a
  // container's): the supervisor decides whether it may (emulator_process.cc).
  b.Notify(SCMP_SYS(prctl), {SCMP_A0(SCMP_CMP_MASKED_EQ, kIntMask, PR_SET_DUMPABLE)});
}

// The groups a policy may leave to the kernel, and when they still notify.
// On the notify-all rung nothing else fences a path: every group notifies,
// whatever the policy relaxes. Otherwise Landlock fences them all, and:
// - write opens notify under links: strict (hard links, protected paths);
// - deletes notify when a delete of the user's file needs an approval;
// - renames notify as deletes do (one can replace a file), and also whenever
//   write opens do: a rename creates a name, and protected paths are then
//   decided by name (`mv x .envrc`). Under links: kernel creations trust
//   Landlock, which sees no names, so a notified rename would close nothing.
bool NotifiesWriteOpens(const ToolFilterOptions& o) {
  return o.notify_write_opens || o.notify_all_paths;
}
bool NotifiesDeletes(const ToolFilterOptions& o) { return o.notify_deletes || o.notify_all_paths; }
bool NotifiesRenames(const ToolFilterOptions& o) {
  return NotifiesDeletes(o) || NotifiesWriteOpens(o);
}

void NotifyMutations(SeccompBuilder& b, const ToolFilterOptions& o) {
  if (o.notify_all_paths) {
    // The notify-all rung: no Landlock, so reads are decided here too.
    for (int nr : kOpens) b.Notify(nr);
  } else {
    NotifyOpens(b, NotifiesWriteOpens(o), o.notify_brokered_reads);
  }
  if (NotifiesDeletes(o)) {
    for (int nr : kDeletes) b.Notify(nr);
  }
  if (NotifiesRenames(o)) {
    for (int nr : kRenames) b.Notify(nr);
  }
  for (int nr : kAlwaysNotified) b.Notify(nr);
  for (unsigned long cmd : {kFsIocSetflags, kFsIocFssetxattr}) {
    b.Notify(SCMP_SYS(ioctl), {SCMP_A1(SCMP_CMP_MASKED_EQ, kIntMask, cmd)});
  }
  if (NotifiesExec(o)) {
    b.Notify(SCMP_SYS(execve));
    b.Notify(SCMP_SYS(execveat));
  }
  for (int nr : kSocketNames) b.Notify(nr);
  if (policy::NetworkFenced(o.network)) b.Notify(SCMP_SYS(listen));
  for (int nr : kWatches) b.Notify(nr);
  NotifyProcessTargets(b);
  if (o.notify_signals) {
    b.Notify(SCMP_SYS(kill), {SCMP_A0(SCMP_CMP_NE, 0)});
    for (int nr : kSignals) b.Notify(nr);
  }
}

// Network none (and the proxied modes), where connect, bind and listen go
// to the supervisor: TCP sockets (AF_INET, AF_INET6; SOCK_STREAM with
// protocol 0 or IPPROTO_TCP) for the tool's own loopback
// (policy/loopback.h); UDP sockets (SOCK_DGRAM with protocol 0 or
// IPPROTO_UDP) sent to the supervisor, which makes them in the run's
// private loopback namespace (supervisor/emulator_udp.cc): a datagram goes
// wherever sendto or sendmsg say, and sendmsg keeps its address where BPF
// cannot read it, so a UDP socket of the host's network is never the
// tool's. Nothing else of the inet families: no raw, ICMP ping or UDP-Lite
// socket. No TCP Fast Open: sendto/sendmsg with MSG_FASTOPEN connects
// without connect(2). The rules for one socket(2) never overlap, so no
// action depends on libseccomp's order.
void FenceLoopbackInet(SeccompBuilder& b) {
  constexpr int kSocket = SCMP_SYS(socket);
  // The families besides AF_UNIX (1), AF_INET (2) and AF_INET6 (10). The
  // comparisons take the whole register: high bits set are refused.
  b.Deny(kSocket, EPERM, {SCMP_A0(SCMP_CMP_GT, AF_INET6)});
  for (uint64_t family = 0; family < AF_INET6; ++family) {
    if (family == AF_UNIX || family == AF_INET) continue;
    b.Deny(kSocket, EPERM, {SCMP_A0(SCMP_CMP_EQ, family)});
  }
  for (uint64_t family : {AF_INET, AF_INET6}) {
    const scmp_arg_cmp fam = SCMP_A0(SCMP_CMP_EQ, family);
    for (uint64_t type = 0; type <= kSockTypeMask; ++type) {
      if (type == SOCK_STREAM || type == SOCK_DGRAM) continue;
      b.Deny(kSocket, EPERM, {fam, SCMP_A1(SCMP_CMP_MASKED_EQ, kSockTypeMask, type)});
    }
    // TCP: protocol 0 or IPPROTO_TCP (6).
    const scmp_arg_cmp stream = SCMP_A1(SCMP_CMP_MASKED_EQ, kSockTypeMask, SOCK_STREAM);
    b.Deny(kSocket, EPERM, {fam, stream, SCMP_A2(SCMP_CMP_GT, IPPROTO_TCP)});
    for (uint64_t proto = 1; proto < IPPROTO_TCP; ++proto) {
      b.Deny(kSocket, EPERM, {fam, stream, SCMP_A2(SCMP_CMP_EQ, proto)});
    }
    // UDP: protocol 0 or IPPROTO_UDP (17, 0b10001) to the supervisor. The
    // rest: above 17; any of bits 1-3 set (2 to 15); 1; 16.
    const scmp_arg_cmp dgram = SCMP_A1(SCMP_CMP_MASKED_EQ, kSockTypeMask, SOCK_DGRAM);
    b.Notify(kSocket, {fam, dgram, SCMP_A2(SCMP_CMP_EQ, 0)});
    b.Notify(kSocket, {fam, dgram, SCMP_A2(SCMP_CMP_EQ, IPPROTO_UDP)});
    b.Deny(kSocket, EPERM, {fam, dgram, SCMP_A2(SCMP_CMP_GT, IPPROTO_UDP)});
    for (uint64_t bit : {2, 4, 8}) {
      b.Deny(kSocket, EPERM, {fam, dgram, SCMP_A2(SCMP_CMP_MASKED_EQ, bit, bit)});
    }
    for (uint64_t proto : {1, 16}) {
      b.Deny(kSocket, EPERM, {fam, dgram, SCMP_A2(SCMP_CMP_EQ, proto)});
    }
  }
  b.Deny(SCMP_SYS(sendto), EPERM, {SCMP_A3(SCMP_CMP_MASKED_EQ, MSG_FASTOPEN, MSG_FASTOPEN)});
  b.Deny(SCMP_SYS(sendmsg), EPERM, {SCMP_A2(SCMP_CMP_MASKED_EQ, MSG_FASTOPEN, MSG_FASTOPEN)});
  b.Deny(SCMP_SYS(sendmmsg), EPERM, {SCMP_A3(SCMP_CMP_MASKED_EQ, MSG_FASTOPEN, MSG_FASTOPEN)});
}

// No Unix datagram sockets, under either network mode. A datagram can be
// sent to any named socket with sendto or sendmsg (syslog, journald,
// systemd's notify socket), even from one end of a socketpair, and sendmsg
// keeps its address where BPF cannot read it; an AF_UNIX SOCK_RAW is a
// datagram socket too. Stream and seqpacket sockets reach a name only
// through connect, which is notified. Network none: AF_UNIX, and the
// loopback TCP and UDP sockets above where connect, bind and listen are
// notified.
void FenceSocketFamilies(SeccompBuilder& b, policy::Network network, bool notified) {
  if (policy::NetworkFenced(network) && notified) FenceLoopbackInet(b);
  for (int nr : {SCMP_SYS(socket), SCMP_SYS(socketpair)}) {
    if (policy::NetworkFenced(network) && !(notified && nr == SCMP_SYS(socket))) {
      b.Deny(nr, EPERM, {SCMP_A0(SCMP_CMP_NE, AF_UNIX)});
    }
    for (uint64_t type : {SOCK_DGRAM, SOCK_RAW}) {
      b.Deny(nr, EPERM,
             {SCMP_A0(SCMP_CMP_MASKED_EQ, kIntMask, AF_UNIX),
              SCMP_A1(SCMP_CMP_MASKED_EQ, kSockTypeMask, type)});
    }
  }
}

}  // namespace

bool BrokersReads(const std::vector<policy::PathRule>& rules) {
  if (policy::CarvesReads(rules)) return true;
  for (const policy::PathRule& r : rules) {
    // A disposable rule is the private cache's directory, made at launch.
    struct stat st;
    if (r.access == policy::Access::kReadWrite && !r.disposable &&
        ::lstat(r.path.c_str(), &st) != 0 && errno == ENOENT) {
      return true;
    }
  }
  return false;
}

bool NotifiesExec(const ToolFilterOptions& o) { return o.notify_exec || o.notify_all_paths; }

bool DecidesEveryChange(const ToolFilterOptions& o) {
  return NotifiesWriteOpens(o) && NotifiesDeletes(o) && NotifiesRenames(o);
}

void NotifyWhatPolicyNeeds(const policy::Policy& p, Rung rung, int landlock_abi,
                           ToolFilterOptions* o) {
  o->notify_all_paths = rung == Rung::kNotifyAll;
  o->notify_signals = rung == Rung::kNotifyAll || landlock_abi < 6;
  // A protected path past a cut-short scan has no kernel carve-out: the
  // supervisor must refuse it by name, whatever links and delete relax.
  // A directory carved for a read-only or denied path beneath it (a
  // protected .git/config, --deny WS/.env) keeps no kernel right to make or
  // remove its entries: the supervisor makes and removes them, whatever
  // links and delete relax (policy::CarvesWrites).
  const std::vector<policy::PathRule> rules = policy::EffectiveRules(p, "");
  const bool carved = policy::CarvesWrites(rules);
  // A change the policy refuses may be offered as a bypass (allowBypass):
  // the supervisor must see it to ask.
  o->notify_deletes = p.sensitive_delete != policy::SensitiveDelete::kAllow ||
                      p.protected_scan_truncated || carved || p.allow_bypass;
  // A deny glob's new matches are refused by name: creating one by an open
  // goes to the supervisor whatever links relax.
  // A recoverable run records every change to a name and keeps a file of
  // the user's before an open truncates or writes it.
  o->notify_write_opens =
      p.links == policy::LinkMode::kStrict || p.protected_scan_truncated || !p.deny_globs.empty() ||
      p.sensitive_delete == policy::SensitiveDelete::kRecoverable || carved || p.allow_bypass;
  o->notify_exec = !p.tools.empty();
  o->notify_brokered_reads = BrokersReads(rules);
}

std::vector<int> NotifiedSyscalls(const ToolFilterOptions& o) {
  std::vector<int> out;
  if (!o.notify_mutations) return out;
  if (NotifiesWriteOpens(o)) {
    out.insert(out.end(), std::begin(kOpens), std::end(kOpens));
  } else if (o.notify_brokered_reads) {
    out.push_back(SCMP_SYS(openat));  // brokered reads only
  }
  if (NotifiesDeletes(o)) out.insert(out.end(), std::begin(kDeletes), std::end(kDeletes));
  if (NotifiesRenames(o)) out.insert(out.end(), std::begin(kRenames), std::end(kRenames));
  out.insert(out.end(), std::begin(kAlwaysNotified), std::end(kAlwaysNotified));
  out.push_back(SCMP_SYS(ioctl));  // FS_IOC_SETFLAGS / FS_IOC_FSSETXATTR only
  if (NotifiesExec(o)) out.insert(out.end(), {SCMP_SYS(execve), SCMP_SYS(execveat)});
  out.insert(out.end(), std::begin(kSocketNames), std::end(kSocketNames));
  if (policy::NetworkFenced(o.network)) {
    out.push_back(SCMP_SYS(listen));
    out.push_back(SCMP_SYS(socket));  // AF_INET and AF_INET6 UDP only
  }
  out.insert(out.end(), std::begin(kWatches), std::end(kWatches));
  out.insert(out.end(), {SCMP_SYS(setpriority), SCMP_SYS(ioprio_set), SCMP_SYS(prlimit64)});
  out.insert(out.end(), std::begin(kSchedTargets), std::end(kSchedTargets));
  out.push_back(SCMP_SYS(prctl));  // PR_SET_DUMPABLE only
  if (o.notify_signals) {
    out.push_back(SCMP_SYS(kill));
    out.insert(out.end(), std::begin(kSignals), std::end(kSignals));
  }
  return out;
}

Result<BpfProgram> CompileToolFilter(const ToolFilterOptions& opts) {
  SeccompBuilder b;
  DenyEscapes(b);
  if (opts.notify_mutations) NotifyMutations(b, opts);
  FenceSocketFamilies(b, opts.network, opts.notify_mutations);
  return b.Build();
}

size_t ToolFilterIndex(const ToolFilterOptions& o) {
  // A new field of ToolFilterOptions fails to compile here until it is
  // given a bit (and kToolFilterCombinations grows).
  const auto& [network, mutations, all_paths, deletes, write_opens, exec, signals, broker] = o;
  return (policy::NetworkFenced(network) ? kBitNetworkNone : 0) |
         (mutations ? kBitMutations : 0) | (all_paths ? kBitAllPaths : 0) |
         (deletes ? kBitDeletes : 0) | (write_opens ? kBitWriteOpens : 0) | (exec ? kBitExec : 0) |
         (signals ? kBitSignals : 0) | (broker ? kBitBroker : 0);
}

ToolFilterOptions ToolFilterOptionsAt(size_t i) {
  ToolFilterOptions o;
  o.network = (i & kBitNetworkNone) ? policy::Network::kNone : policy::Network::kAllow;
  o.notify_mutations = i & kBitMutations;
  o.notify_all_paths = i & kBitAllPaths;
  o.notify_deletes = i & kBitDeletes;
  o.notify_write_opens = i & kBitWriteOpens;
  o.notify_exec = i & kBitExec;
  o.notify_signals = i & kBitSignals;
  o.notify_brokered_reads = i & kBitBroker;
  return o;
}

}  // namespace cordon::supervisor
