// The tool filter programs read as data: every one of the table's programs
// run in user space (tests/support/seccomp_bpf_eval.h) on syscalls and
// arguments no real-kernel test could enumerate. It checks that cordon's
// prefix, early allows included, changes no decision of libseccomp's
// program, and that the early allow is there exactly where it pays.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/audit.h>
#include <signal.h>
#include <sys/resource.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/syscall.h>

#include <cerrno>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "preload/wire.h"
#include "supervisor/tool_filter.h"
#include "supervisor/uapi.h"
#include "tests/support/seccomp_bpf_eval.h"

namespace cordon::supervisor {
namespace {

using cordon::testing::BpfRun;
using cordon::testing::RunSeccompBpf;

constexpr uint64_t kHighWord = 0xffffffff00000000u;
constexpr uint64_t kAtFdcwd = static_cast<uint64_t>(int64_t{AT_FDCWD});
constexpr uint64_t kPathPointer = 0x7ffc12345678u;

seccomp_data Call(long nr, std::initializer_list<uint64_t> args = {}) {
  seccomp_data d{};
  d.nr = static_cast<int>(nr);
  d.arch = AUDIT_ARCH_X86_64;
  d.instruction_pointer = 0x401000;
  size_t i = 0;
  for (uint64_t a : args) d.args[i++] = a;
  return d;
}
seccomp_data Openat(uint64_t flags) { return Call(SYS_openat, {kAtFdcwd, kPathPointer, flags}); }
seccomp_data Open(uint64_t flags) { return Call(SYS_open, {kPathPointer, flags, 0644}); }

// Open flags as the kernel sees them (glibc's O_TMPFILE includes
// O_DIRECTORY, its O_LARGEFILE is 0 on x86_64).
constexpr uint64_t kBareTmpfile = 020000000, kLargefile = 0100000;

// Read-only opens, as libc and tools make them, and each one with garbage
// in the high word, which the kernel ignores (flags is an int).
std::vector<uint64_t> OpenFlagsToTry() {
  std::vector<uint64_t> flags = {
      O_RDONLY,
      O_RDONLY | O_CLOEXEC,
      O_RDONLY | O_DIRECTORY | O_CLOEXEC,
      O_RDONLY | O_NOFOLLOW,
      O_RDONLY | O_NONBLOCK | O_NOCTTY,
      O_RDONLY | O_EXCL,  // no O_CREAT: nothing is created
      O_RDONLY | O_NOATIME | O_DIRECT | O_SYNC | kLargefile,
      O_PATH,
      O_PATH | O_CLOEXEC | O_NOFOLLOW | O_DIRECTORY,
      // Each write bit alone, and as tools combine them.
      O_WRONLY,
      O_RDWR,
      O_CREAT,
      O_TRUNC,
      O_APPEND,
      kBareTmpfile,
      O_TMPFILE | O_RDWR,
      O_WRONLY | O_RDWR,  // access mode 3: the kernel's "ioctl only" mode
      O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
      O_WRONLY | O_CREAT | O_EXCL,
      O_RDWR | O_APPEND | O_NONBLOCK,
      O_PATH | O_WRONLY,
      O_PATH | O_CREAT,
      O_PATH | O_TRUNC,
      0xffffffffu,
      // Brokered reads (wire::kBrokerOpenFlag), and the bit on a write.
      O_RDONLY | O_CLOEXEC | wire::kBrokerOpenFlag,
      O_RDONLY | O_DIRECTORY | wire::kBrokerOpenFlag,
      O_WRONLY | O_CREAT | wire::kBrokerOpenFlag,
  };
  for (unsigned bit = 0; bit < 32; ++bit) flags.push_back(uint64_t{1} << bit);
  const size_t n = flags.size();
  for (size_t i = 0; i < n; ++i) {
    flags.push_back(flags[i] | kHighWord);
    flags.push_back(flags[i] | (uint64_t{1} << 32));
  }
  return flags;
}

std::string Case(size_t variant, const seccomp_data& d) {
  return "variant " + std::to_string(variant) + ", syscall " + std::to_string(d.nr) + ", args " +
         std::to_string(d.args[0]) + " " + std::to_string(d.args[1]) + " " +
         std::to_string(d.args[2]);
}

struct Programs {
  BpfProgram prog;
  std::span<const sock_filter> whole, body;
};

Programs Load(size_t variant) {
  auto prog = BuildToolFilter(ToolFilterOptionsAt(variant));
  EXPECT_TRUE(prog.ok()) << variant;
  Programs p{std::move(prog.value()), {}, {}};
  p.whole = p.prog.insns;
  p.body = p.whole.subspan(p.prog.prefix_size);
  return p;
}

BpfRun Eval(std::span<const sock_filter> prog, const seccomp_data& d) {
  BpfRun r = RunSeccompBpf(prog, d);
  EXPECT_EQ(r.error, "") << d.nr;
  return r;
}

// The variants whose rules allow every read-only open and name the
// syscall: the early allow's. openat is named for write opens and for
// brokered reads, open for write opens only.
bool AllowsReadOnlyOpens(const ToolFilterOptions& o, bool openat = true) {
  return o.notify_mutations && !o.notify_all_paths &&
         (o.notify_write_opens || (openat && o.notify_brokered_reads));
}

// The prefix decides alone only foreign entries, numbers newer than cordon
// and personality(2); for everything else the whole program and
// libseccomp's program alone decide the same, in every variant.
TEST(ToolFilterProgram, PrefixChangesNoDecisionOfLibseccompsProgram) {
  std::vector<seccomp_data> calls;
  for (uint64_t flags : OpenFlagsToTry()) {
    calls.push_back(Openat(flags));
    calls.push_back(Open(flags));
  }
  // Every other known syscall, with arguments that match nothing, match
  // every bit, and look like a flag word.
  for (long nr = 0; nr <= uapi::kMaxKnownSyscall; ++nr) {
    if (nr == SYS_personality) continue;
    for (uint64_t arg : {uint64_t{0}, ~uint64_t{0}, uint64_t{O_WRONLY | O_CREAT}, uint64_t{2}}) {
      calls.push_back(Call(nr, {arg, arg, arg, arg, arg, arg}));
    }
  }
  for (size_t v = 0; v < kToolFilterCombinations; ++v) {
    Programs p = Load(v);
    ASSERT_GT(p.prog.prefix_size, 0u);
    for (const seccomp_data& d : calls) {
      EXPECT_EQ(Eval(p.whole, d).action, Eval(p.body, d).action) << Case(v, d);
    }
  }
}

// The anchors: what the strict filter must decide, so the comparison above
// cannot pass with an evaluator that says the same wrong thing twice.
TEST(ToolFilterProgram, StrictFilterDecidesOpensByTheirWriteBits) {
  Programs strict = Load(ToolFilterIndex({}));
  for (uint64_t flags : {uint64_t{O_RDONLY | O_CLOEXEC}, uint64_t{O_PATH}, kHighWord}) {
    EXPECT_EQ(Eval(strict.whole, Openat(flags)).action, uapi::kSeccompRetAllow) << flags;
    EXPECT_EQ(Eval(strict.whole, Open(flags)).action, uapi::kSeccompRetAllow) << flags;
  }
  for (uint64_t flags :
       {uint64_t{O_WRONLY}, uint64_t{O_RDWR}, uint64_t{O_CREAT}, uint64_t{O_TRUNC},
        uint64_t{O_APPEND}, kBareTmpfile, uint64_t{O_PATH | O_WRONLY}, O_WRONLY | kHighWord}) {
    EXPECT_EQ(Eval(strict.whole, Openat(flags)).action, uapi::kSeccompRetUserNotif) << flags;
    EXPECT_EQ(Eval(strict.whole, Open(flags)).action, uapi::kSeccompRetUserNotif) << flags;
  }
  EXPECT_EQ(Eval(strict.whole, Call(SYS_getpid)).action, uapi::kSeccompRetAllow);
  EXPECT_EQ(Eval(strict.whole, Call(SYS_socket, {AF_INET})).action, uapi::kSeccompRetErrno | EPERM);
  EXPECT_EQ(Eval(strict.whole, Call(SYS_personality, {0x0040000})).action,
            uapi::kSeccompRetErrno | EPERM);
  EXPECT_EQ(Eval(strict.whole, Call(uapi::kMaxKnownSyscall + 1)).action,
            uapi::kSeccompRetErrno | ENOSYS);
}

// Deletes and renames are the groups a policy may leave to the kernel
// (approvals off, links: kernel). Where they go to the kernel, only
// Landlock fences them, so the notify-all rung (no Landlock) notifies them
// whatever the policy relaxes; and a rename, which creates a name, is
// notified wherever creations are (write opens), so that a protected path
// cannot be made by renaming onto it.
TEST(ToolFilterProgram, DeletesAndRenamesGoToTheKernelOnlyBehindLandlock) {
  size_t variants = 0;
  for (size_t v = 0; v < kToolFilterCombinations; ++v) {
    const ToolFilterOptions o = ToolFilterOptionsAt(v);
    if (!o.notify_mutations) continue;
    ++variants;
    Programs p = Load(v);
    const uint32_t deletes = o.notify_deletes || o.notify_all_paths ? uapi::kSeccompRetUserNotif
                                                                    : uapi::kSeccompRetAllow;
    const uint32_t renames = o.notify_deletes || o.notify_write_opens || o.notify_all_paths
                                 ? uapi::kSeccompRetUserNotif
                                 : uapi::kSeccompRetAllow;
    for (long nr : {SYS_unlink, SYS_unlinkat, SYS_rmdir}) {
      EXPECT_EQ(Eval(p.whole, Call(nr, {kAtFdcwd, kPathPointer, 0})).action, deletes)
          << Case(v, Call(nr));
    }
    for (long nr : {SYS_rename, SYS_renameat, SYS_renameat2}) {
      EXPECT_EQ(Eval(p.whole, Call(nr, {kAtFdcwd, kPathPointer, kAtFdcwd, kPathPointer, 0})).action,
                renames)
          << Case(v, Call(nr));
    }
  }
  EXPECT_EQ(variants, kToolFilterCombinations / 2);
  // The anchors: the notify-all rung with every relaxation still decides
  // them, and the fast mode on Landlock leaves them to it.
  ToolFilterOptions all_paths_relaxed;
  all_paths_relaxed.notify_all_paths = true;
  all_paths_relaxed.notify_deletes = all_paths_relaxed.notify_write_opens = false;
  Programs relaxed = Load(ToolFilterIndex(all_paths_relaxed));
  EXPECT_EQ(Eval(relaxed.whole, Call(SYS_unlink, {kPathPointer})).action,
            uapi::kSeccompRetUserNotif);
  ToolFilterOptions fast;
  fast.notify_deletes = fast.notify_write_opens = false;
  Programs fast_p = Load(ToolFilterIndex(fast));
  EXPECT_EQ(Eval(fast_p.whole, Call(SYS_rename, {kPathPointer, kPathPointer})).action,
            uapi::kSeccompRetAllow);
}

// Calls that reach another process notify unless aimed at the caller (0),
// in every variant that notifies at all; signals only where Landlock has no
// signal scope. The kernel reads the ids as ints: a high word alone still
// notifies, the safe side.
TEST(ToolFilterProgram, CallsAimedAtAnotherProcessNotifyUnlessAimedAtTheCaller) {
  constexpr uint64_t kPid = 1;
  for (size_t v = 0; v < kToolFilterCombinations; ++v) {
    const ToolFilterOptions o = ToolFilterOptionsAt(v);
    if (!o.notify_mutations) continue;
    Programs p = Load(v);
    auto action = [&](const seccomp_data& d) { return Eval(p.whole, d).action; };
    const uint32_t notify = uapi::kSeccompRetUserNotif, allow = uapi::kSeccompRetAllow;
    EXPECT_EQ(action(Call(SYS_prlimit64, {kPid, RLIMIT_NOFILE, kPathPointer, 0})), notify) << v;
    EXPECT_EQ(action(Call(SYS_prlimit64, {kPid, RLIMIT_NOFILE, 0, kPathPointer})), allow) << v;
    EXPECT_EQ(action(Call(SYS_prlimit64, {0, RLIMIT_NOFILE, kPathPointer, 0})), allow) << v;
    EXPECT_EQ(action(Call(SYS_prlimit64, {kHighWord, RLIMIT_NOFILE, kPathPointer, 0})), notify);
    EXPECT_EQ(action(Call(SYS_setpriority, {0, kPid, 10})), notify) << v;  // PRIO_PROCESS
    EXPECT_EQ(action(Call(SYS_setpriority, {2, 0, 10})), notify) << v;     // PRIO_USER
    EXPECT_EQ(action(Call(SYS_setpriority, {0, 0, 10})), allow) << v;      // nice(2)
    EXPECT_EQ(action(Call(SYS_ioprio_set, {1, 0, 0})), allow) << v;
    EXPECT_EQ(action(Call(SYS_ioprio_set, {1, kPid, 0})), notify) << v;
    EXPECT_EQ(action(Call(SYS_ioprio_set, {3, 0, 0})), notify) << v;
    for (long nr :
         {SYS_sched_setaffinity, SYS_sched_setscheduler, SYS_sched_setparam, SYS_sched_setattr}) {
      EXPECT_EQ(action(Call(nr, {kPid, 8, kPathPointer})), notify) << v << " " << nr;
      EXPECT_EQ(action(Call(nr, {0, 8, kPathPointer})), allow) << v << " " << nr;
    }
    const uint32_t signals = o.notify_signals ? notify : allow;
    EXPECT_EQ(action(Call(SYS_kill, {kPid, SIGTERM})), signals) << v;
    EXPECT_EQ(action(Call(SYS_kill, {0, SIGTERM})), allow) << v;
    for (long nr : {SYS_tkill, SYS_tgkill, SYS_rt_sigqueueinfo, SYS_rt_tgsigqueueinfo,
                    SYS_pidfd_send_signal}) {
      EXPECT_EQ(action(Call(nr, {kPid, kPid, SIGTERM})), signals) << v << " " << nr;
    }
  }
}

// Set in a raw syscall's 64-bit register where the kernel reads an int.
constexpr uint64_t kHighBits = uint64_t{1} << 32;

// Leases are refused whatever the upper half of fcntl's cmd register holds;
// a record lock and a plain F_GETFL stay open.
TEST(ToolFilterProgram, LeasesAreRefusedWithTheCommandReadAsAnInt) {
  for (size_t v = 0; v < kToolFilterCombinations; ++v) {
    if (!ToolFilterOptionsAt(v).notify_mutations) continue;
    Programs p = Load(v);
    auto action = [&](const seccomp_data& d) { return Eval(p.whole, d).action; };
    const uint32_t eperm = uapi::kSeccompRetErrno | EPERM;
    EXPECT_EQ(action(Call(SYS_fcntl, {3, F_SETLEASE, F_RDLCK})), eperm) << v;
    EXPECT_EQ(action(Call(SYS_fcntl, {3, kHighBits | F_SETLEASE, F_RDLCK})), eperm) << v;
    EXPECT_EQ(action(Call(SYS_fcntl, {3, F_GETFL, 0})), uapi::kSeccompRetAllow) << v;
  }
}

// Network none: Unix stream and seqpacket sockets only, and their names
// decided by the supervisor.
TEST(ToolFilterProgram, SocketNamesNotifyAndUnixDatagramsAreRefused) {
  for (size_t v = 0; v < kToolFilterCombinations; ++v) {
    const ToolFilterOptions o = ToolFilterOptionsAt(v);
    if (!o.notify_mutations) continue;
    Programs p = Load(v);
    auto action = [&](const seccomp_data& d) { return Eval(p.whole, d).action; };
    const bool none = o.network == policy::Network::kNone;
    const uint32_t eperm = uapi::kSeccompRetErrno | EPERM;
    EXPECT_EQ(action(Call(SYS_connect, {3, kPathPointer, 110})), uapi::kSeccompRetUserNotif) << v;
    EXPECT_EQ(action(Call(SYS_bind, {3, kPathPointer, 110})), uapi::kSeccompRetUserNotif) << v;
    for (long nr : {SYS_socket, SYS_socketpair}) {
      for (uint64_t type : {uint64_t{SOCK_DGRAM}, uint64_t{SOCK_DGRAM | SOCK_CLOEXEC},
                            uint64_t{SOCK_RAW | SOCK_NONBLOCK}}) {
        EXPECT_EQ(action(Call(nr, {AF_UNIX, type, 0, kPathPointer})), eperm) << v << " " << nr;
      }
      // The kernel reads the family as an int: high bits change nothing.
      EXPECT_EQ(action(Call(nr, {kHighBits | AF_UNIX, SOCK_DGRAM, 0, kPathPointer})), eperm)
          << v << " " << nr;
      EXPECT_EQ(action(Call(nr, {AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, kPathPointer})),
                uapi::kSeccompRetAllow)
          << v;
      EXPECT_EQ(action(Call(nr, {AF_UNIX, SOCK_SEQPACKET, 0, kPathPointer})),
                uapi::kSeccompRetAllow)
          << v;
    }
    // Other families' datagrams are the network's: open under allow; under
    // none the supervisor makes UDP in the run's private loopback.
    EXPECT_EQ(action(Call(SYS_socket, {AF_INET, SOCK_DGRAM, 0, kPathPointer})),
              none ? uapi::kSeccompRetUserNotif : uapi::kSeccompRetAllow)
        << v;
    // Under none: TCP for the tool's own loopback (policy/loopback.h), and
    // nothing else of the inet families.
    const uint32_t allow = uapi::kSeccompRetAllow;
    for (uint64_t family : {uint64_t{AF_INET}, uint64_t{AF_INET6}}) {
      for (uint64_t proto : {uint64_t{0}, uint64_t{IPPROTO_TCP}}) {
        EXPECT_EQ(action(Call(SYS_socket, {family, SOCK_STREAM | SOCK_CLOEXEC, proto})), allow)
            << v;
      }
      for (uint64_t type : {uint64_t{SOCK_RAW}, uint64_t{SOCK_SEQPACKET}, uint64_t{SOCK_DCCP},
                            uint64_t{SOCK_PACKET}, uint64_t{0}}) {
        EXPECT_EQ(action(Call(SYS_socket, {family, type, 0})), none ? eperm : allow) << v;
      }
      // UDP goes to the supervisor (its private loopback), flags or not;
      // every other datagram protocol (ICMP ping, UDP-Lite) is refused.
      const uint32_t notif = uapi::kSeccompRetUserNotif;
      for (uint64_t type :
           {uint64_t{SOCK_DGRAM}, uint64_t{SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC},
            kHighBits | SOCK_DGRAM}) {
        for (uint64_t proto : {uint64_t{0}, uint64_t{IPPROTO_UDP}}) {
          EXPECT_EQ(action(Call(SYS_socket, {family, type, proto})), none ? notif : allow)
              << v << " " << type << " " << proto;
        }
      }
      for (uint64_t proto = 1; proto < 300; ++proto) {
        if (proto == IPPROTO_UDP) continue;
        EXPECT_EQ(action(Call(SYS_socket, {family, SOCK_DGRAM, proto})), none ? eperm : allow)
            << v << " " << proto;
      }
      for (uint64_t proto : {kHighBits, kHighBits | IPPROTO_UDP, uint64_t{0xffffffff00000000}}) {
        EXPECT_EQ(action(Call(SYS_socket, {family, SOCK_DGRAM, proto})), none ? eperm : allow)
            << v << " " << proto;
      }
      for (uint64_t proto : {uint64_t{1}, uint64_t{IPPROTO_UDP}, uint64_t{IPPROTO_SCTP},
                             uint64_t{262}, kHighBits | IPPROTO_TCP}) {
        EXPECT_EQ(action(Call(SYS_socket, {family, SOCK_STREAM, proto})), none ? eperm : allow)
            << v << " " << proto;
      }
      EXPECT_EQ(action(Call(SYS_socket, {kHighBits | family, SOCK_STREAM, 0})),
                none ? eperm : allow)
          << v;
      EXPECT_EQ(action(Call(SYS_socketpair, {family, SOCK_STREAM, 0, kPathPointer})),
                none ? eperm : allow)
          << v;
    }
    for (uint64_t family : {uint64_t{AF_UNSPEC}, uint64_t{AF_AX25}, uint64_t{AF_NETLINK},
                            uint64_t{AF_PACKET}, uint64_t{AF_VSOCK}, uint64_t{9}}) {
      EXPECT_EQ(action(Call(SYS_socket, {family, SOCK_STREAM, 0})), none ? eperm : allow)
          << v << " " << family;
    }
    // listen: an unbound socket would take the wildcard address.
    EXPECT_EQ(action(Call(SYS_listen, {3, 8})), none ? uapi::kSeccompRetUserNotif : allow) << v;
    // TCP Fast Open connects without connect(2).
    EXPECT_EQ(action(Call(SYS_sendto, {3, kPathPointer, 1, MSG_FASTOPEN, kPathPointer, 16})),
              none ? eperm : allow)
        << v;
    EXPECT_EQ(action(Call(SYS_sendmsg, {3, kPathPointer, MSG_FASTOPEN | MSG_NOSIGNAL})),
              none ? eperm : allow)
        << v;
    EXPECT_EQ(action(Call(SYS_sendmmsg, {3, kPathPointer, 1, MSG_FASTOPEN})), none ? eperm : allow)
        << v;
    EXPECT_EQ(action(Call(SYS_sendto, {3, kPathPointer, 1, MSG_NOSIGNAL, 0, 0})), allow) << v;
    EXPECT_EQ(action(Call(SYS_sendmsg, {3, kPathPointer, 0})), allow) << v;
  }
  // Without notified connect and bind, none keeps to AF_UNIX.
  for (size_t v = 0; v < kToolFilterCombinations; ++v) {
    const ToolFilterOptions o = ToolFilterOptionsAt(v);
    if (o.notify_mutations || o.network != policy::Network::kNone) continue;
    Programs p = Load(v);
    EXPECT_EQ(Eval(p.whole, Call(SYS_socket, {AF_INET, SOCK_STREAM, 0})).action,
              uapi::kSeccompRetErrno | EPERM)
        << v;
  }
}

// Filesystem ioctls that change what lies outside through an fd opened
// read-only are refused in every size and direction; the generic clone and
// dedupe calls that share btrfs's type, and plain reads, stay open.
TEST(ToolFilterProgram, FilesystemIoctlsThatChangeOutsideAreRefusedByTypeAndNumber) {
  constexpr uint64_t kSubvolCreate = 0x5000940e, kSubvolCreate32 = 0x4ffc940e;
  constexpr uint64_t kSnapCreateV2 = 0x50009417, kDefrag = 0x50009402;
  constexpr uint64_t kAddKey = 0xc0506617, kF2fsPin = 0x4004f50d;
  constexpr uint64_t kFiclone = 0x40049409, kFiclonerange = 0x4020940d;
  constexpr uint64_t kFidedupe = 0xc0189436, kFsIocGetflags = 0x80086601;
  const uint32_t eperm = uapi::kSeccompRetErrno | EPERM;
  for (size_t v = 0; v < kToolFilterCombinations; ++v) {
    Programs p = Load(v);
    auto action = [&](uint64_t cmd) { return Eval(p.whole, Call(SYS_ioctl, {3, cmd, 0})).action; };
    for (uint64_t cmd :
         {kSubvolCreate, kSubvolCreate32, kSnapCreateV2, kDefrag, kAddKey, kF2fsPin}) {
      EXPECT_EQ(action(cmd), eperm) << v << std::hex << " 0x" << cmd;
    }
    for (uint64_t cmd : {kFiclone, kFiclonerange, kFidedupe, kFsIocGetflags}) {
      EXPECT_EQ(action(cmd), uapi::kSeccompRetAllow) << v << std::hex << " 0x" << cmd;
    }
  }
}

// A read-only open is decided in the prefix, in a handful of instructions,
// where the rules allow it anyway; elsewhere it goes down libseccomp's
// program as before (the notify-all rung notifies it, and where open is not
// tested at all an argument test would defeat the kernel's action cache).
TEST(ToolFilterProgram, ReadOnlyOpensAreAllowedEarlyExactlyWhereTheRulesAllowThem) {
  for (size_t v = 0; v < kToolFilterCombinations; ++v) {
    Programs p = Load(v);
    const ToolFilterOptions o = ToolFilterOptionsAt(v);
    for (const bool openat : {true, false}) {
      const seccomp_data d = openat ? Openat(O_RDONLY | O_CLOEXEC) : Open(O_RDONLY);
      const bool early = AllowsReadOnlyOpens(o, openat);
      BpfRun r = Eval(p.whole, d);
      EXPECT_EQ(r.decided_at < p.prog.prefix_size, early) << Case(v, d);
      if (early) {
        EXPECT_EQ(r.action, uapi::kSeccompRetAllow) << Case(v, d);
        EXPECT_LE(r.executed, 10u) << Case(v, d);
      }
    }
    // A write open goes on to the rules where they notify it, a brokered
    // read where they notify that.
    if (o.notify_write_opens) {
      EXPECT_GE(Eval(p.whole, Openat(O_WRONLY)).decided_at, p.prog.prefix_size) << v;
    }
    if (AllowsReadOnlyOpens(o) && o.notify_brokered_reads) {
      EXPECT_GE(Eval(p.whole, Openat(O_RDONLY | wire::kBrokerOpenFlag)).decided_at,
                p.prog.prefix_size)
          << v;
    }
  }
}

// A brokered read (wire::kBrokerOpenFlag) goes to the supervisor in every
// variant that asks for it, whatever else its flags say, and on the
// notify-all rung; elsewhere it is a plain open (the kernel ignores the
// bit) and no open is notified for it: a policy without carve-outs keeps
// read-only opens in the kernel's action cache where write opens are not
// notified.
TEST(ToolFilterProgram, BrokeredReadsNotifyWhereThePolicyCarvesReads) {
  size_t brokered = 0;
  for (size_t v = 0; v < kToolFilterCombinations; ++v) {
    const ToolFilterOptions o = ToolFilterOptionsAt(v);
    if (!o.notify_mutations) continue;
    Programs p = Load(v);
    const bool notified = o.notify_brokered_reads || o.notify_all_paths;
    brokered += notified;
    for (uint64_t flags : {uint64_t{O_RDONLY}, uint64_t{O_RDONLY | O_CLOEXEC | O_DIRECTORY},
                           uint64_t{O_PATH}, uint64_t{O_RDONLY | O_NOFOLLOW} | kHighWord}) {
      const seccomp_data d = Openat(flags | wire::kBrokerOpenFlag);
      EXPECT_EQ(Eval(p.whole, d).action,
                notified ? uapi::kSeccompRetUserNotif : uapi::kSeccompRetAllow)
          << Case(v, d);
    }
    // Without the bit and without write opens notified, nothing names an
    // open: the body reads no argument of openat (the action cache).
    if (!o.notify_write_opens && !o.notify_all_paths && !o.notify_brokered_reads) {
      EXPECT_FALSE(Eval(p.whole, Openat(O_RDONLY)).read_args) << v;
    }
  }
  EXPECT_EQ(brokered, kToolFilterCombinations / 2 / 2 + kToolFilterCombinations / 2 / 4);
}

// The kernel skips the filter for a syscall the program allows whatever its
// arguments (its action cache): where libseccomp's program reads no
// argument of a syscall, the whole program must not either.
TEST(ToolFilterProgram, PrefixReadsNoArgumentTheRulesDoNotRead) {
  for (size_t v = 0; v < kToolFilterCombinations; ++v) {
    Programs p = Load(v);
    for (long nr = 0; nr <= uapi::kMaxKnownSyscall; ++nr) {
      if (nr == SYS_personality) continue;
      seccomp_data d = Call(nr, {0, 0, 0, 0, 0, 0});
      EXPECT_EQ(Eval(p.whole, d).read_args, Eval(p.body, d).read_args) << Case(v, d);
    }
  }
}

}  // namespace
}  // namespace cordon::supervisor
