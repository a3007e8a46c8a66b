// cordon's own copy of the kernel UAPI constants it needs. Debian 12 ships
// 6.1 headers; cordon runs on newer kernels (Landlock ABI 7, syscalls up to
// file_setattr). Everything is used by number and probed at run time; no
// protection is ever #ifdef'd away because a build machine's header lacks it.
#pragma once

#include <cstdint>

namespace cordon::uapi {

// ---- syscall numbers (x86-64) ------------------------------------------
inline constexpr long kNrLandlockCreateRuleset = 444;
inline constexpr long kNrLandlockAddRule = 445;
inline constexpr long kNrLandlockRestrictSelf = 446;
inline constexpr long kNrOpenat2 = 437;
inline constexpr long kNrPidfdOpen = 434;
inline constexpr long kNrPidfdGetfd = 438;
inline constexpr long kNrPidfdSendSignal = 424;
inline constexpr unsigned kPidfdThread = 0200;  // pidfd_open flag, 6.9+ (O_EXCL)
inline constexpr long kNrCloseRange = 436;
inline constexpr long kNrClone3 = 435;
inline constexpr long kNrFchmodat2 = 452;
inline constexpr long kNrMapShadowStack = 453;
inline constexpr long kNrStatmount = 457;
inline constexpr long kNrListmount = 458;
inline constexpr long kNrLsmSetSelfAttr = 460;
inline constexpr long kNrSetxattrat = 463;
inline constexpr long kNrGetxattrat = 464;
inline constexpr long kNrListxattrat = 465;
inline constexpr long kNrRemovexattrat = 466;
inline constexpr long kNrOpenTreeAttr = 467;
inline constexpr long kNrFileGetattr = 468;
inline constexpr long kNrFileSetattr = 469;
// The highest syscall number cordon was written for. Anything above answers
// ENOSYS: a deny list naming only known syscalls lets tomorrow's through.
inline constexpr long kMaxKnownSyscall = 469;
// x32 ABI syscalls carry this bit on AUDIT_ARCH_X86_64.
inline constexpr uint32_t kX32SyscallBit = 0x40000000;

// ---- Landlock ------------------------------------------------------------
inline constexpr uint32_t kLandlockCreateRulesetVersion = 1u << 0;
inline constexpr uint32_t kLandlockRulePathBeneath = 1;
inline constexpr uint32_t kLandlockRuleNetPort = 2;

inline constexpr uint64_t kFsExecute = 1ull << 0;
inline constexpr uint64_t kFsWriteFile = 1ull << 1;
inline constexpr uint64_t kFsReadFile = 1ull << 2;
inline constexpr uint64_t kFsReadDir = 1ull << 3;
inline constexpr uint64_t kFsRemoveDir = 1ull << 4;
inline constexpr uint64_t kFsRemoveFile = 1ull << 5;
inline constexpr uint64_t kFsMakeChar = 1ull << 6;
inline constexpr uint64_t kFsMakeDir = 1ull << 7;
inline constexpr uint64_t kFsMakeReg = 1ull << 8;
inline constexpr uint64_t kFsMakeSock = 1ull << 9;
inline constexpr uint64_t kFsMakeFifo = 1ull << 10;
inline constexpr uint64_t kFsMakeBlock = 1ull << 11;
inline constexpr uint64_t kFsMakeSym = 1ull << 12;
inline constexpr uint64_t kFsRefer = 1ull << 13;     // ABI 2
inline constexpr uint64_t kFsTruncate = 1ull << 14;  // ABI 3
inline constexpr uint64_t kFsIoctlDev = 1ull << 15;  // ABI 5

inline constexpr uint64_t kNetBindTcp = 1ull << 0;     // ABI 4
inline constexpr uint64_t kNetConnectTcp = 1ull << 1;  // ABI 4

inline constexpr uint64_t kScopeAbstractUnixSocket = 1ull << 0;  // ABI 6
inline constexpr uint64_t kScopeSignal = 1ull << 1;              // ABI 6

// ABI 7: audit logging flags for landlock_restrict_self.
inline constexpr uint32_t kRestrictSelfLogSameExecOff = 1u << 0;
inline constexpr uint32_t kRestrictSelfLogNewExecOn = 1u << 1;
inline constexpr uint32_t kRestrictSelfLogSubdomainsOff = 1u << 2;

struct LandlockRulesetAttr {
  uint64_t handled_access_fs;
  uint64_t handled_access_net;
  uint64_t scoped;
};

struct __attribute__((packed)) LandlockPathBeneathAttr {
  uint64_t allowed_access;
  int32_t parent_fd;
};

struct LandlockNetPortAttr {
  uint64_t allowed_access;
  uint64_t port;
};

// ---- openat2 --------------------------------------------------------------
struct OpenHow {
  uint64_t flags;
  uint64_t mode;
  uint64_t resolve;
};
inline constexpr uint64_t kResolveNoXdev = 0x01;
inline constexpr uint64_t kResolveNoMagiclinks = 0x02;
inline constexpr uint64_t kResolveNoSymlinks = 0x04;
inline constexpr uint64_t kResolveBeneath = 0x08;
inline constexpr uint64_t kResolveInRoot = 0x10;

// ---- seccomp ---------------------------------------------------------------
inline constexpr unsigned kSeccompSetModeFilter = 1;
inline constexpr unsigned kSeccompGetNotifSizes = 3;
inline constexpr unsigned kSeccompFilterFlagNewListener = 1u << 3;
inline constexpr unsigned kSeccompFilterFlagTsync = 1u << 0;
inline constexpr uint32_t kSeccompRetKillProcess = 0x80000000u;
inline constexpr uint32_t kSeccompRetErrno = 0x00050000u;
inline constexpr uint32_t kSeccompRetUserNotif = 0x7fc00000u;
inline constexpr uint32_t kSeccompRetAllow = 0x7fff0000u;
inline constexpr uint32_t kUserNotifFlagContinue = 1u << 0;
inline constexpr uint32_t kAddfdFlagSetfd = 1u << 0;
inline constexpr uint32_t kAddfdFlagSend = 1u << 1;
inline constexpr uint32_t kUserNotifFdSyncWakeUp = 1u << 0;  // 6.6+

struct SeccompData {
  int nr;
  uint32_t arch;
  uint64_t instruction_pointer;
  uint64_t args[6];
};
struct SeccompNotif {
  uint64_t id;
  uint32_t pid;
  uint32_t flags;
  SeccompData data;
};
struct SeccompNotifResp {
  uint64_t id;
  int64_t val;
  int32_t error;
  uint32_t flags;
};
struct SeccompNotifAddfd {
  uint64_t id;
  uint32_t flags;
  uint32_t srcfd;
  uint32_t newfd;
  uint32_t newfd_flags;
};
struct SeccompNotifSizes {
  uint16_t seccomp_notif;
  uint16_t seccomp_notif_resp;
  uint16_t seccomp_data;
};

// ioctl numbers: _IOWR('!', 0, struct seccomp_notif) etc.
inline constexpr unsigned long kIoctlNotifRecv = 0xc0502100;
inline constexpr unsigned long kIoctlNotifSend = 0xc0182101;
inline constexpr unsigned long kIoctlNotifIdValid = 0x40082102;
inline constexpr unsigned long kIoctlNotifAddfd = 0x40182103;
inline constexpr unsigned long kIoctlNotifSetFlags = 0x40082104;

// ---- ioctls refused to the tool ------------------------------------------
inline constexpr unsigned long kTiocsti = 0x5412;
inline constexpr unsigned long kTioclinux = 0x541C;
inline constexpr unsigned long kFsIocSetflags = 0x40086602;
inline constexpr unsigned long kFsIocFssetxattr = 0x401c5820;
// Changes a file through an fd opened read-only, which is all Landlock lets
// a tool open outside its writable paths: refused to the tool everywhere.
inline constexpr unsigned long kFsIocSetversion = 0x40087602;           // inode generation
inline constexpr unsigned long kExt4IocSetversion = 0x40086604;         // the same, ext4's number
inline constexpr unsigned long kExt4IocMigrate = 0x6609;                // block map to extents
inline constexpr unsigned long kFsIocEnableVerity = 0x40806685;         // makes a file immutable
inline constexpr unsigned long kFsIocSetEncryptionPolicy = 0x800c6613;  // on an empty directory
inline constexpr unsigned long kBtrfsIocSubvolSetflags = 0x4008941a;    // a subvolume read-only
// By type and number alone (the low 16 bits of the command): every size,
// direction and 32-bit variant of the call. btrfs makes and removes
// subvolumes with ioctls that take a directory opened read-only and that no
// LSM path hook sees, so Landlock lets a new directory appear in /etc on a
// btrfs root; defrag rewrites a file read-only; a received UUID is set by
// the owner. The generic FICLONE, FICLONERANGE and FIDEDUPERANGE share
// btrfs's type (0x94) and stay open.
inline constexpr uint32_t kIoctlTypeNrMask = 0xffff;
inline constexpr uint32_t kBtrfsIocSnapCreate = 0x9401;
inline constexpr uint32_t kBtrfsIocDefrag = 0x9402;
inline constexpr uint32_t kBtrfsIocSubvolCreate = 0x940e;
inline constexpr uint32_t kBtrfsIocSnapDestroy = 0x940f;
inline constexpr uint32_t kBtrfsIocDefragRange = 0x9410;
inline constexpr uint32_t kBtrfsIocSnapCreateV2 = 0x9417;
inline constexpr uint32_t kBtrfsIocSubvolCreateV2 = 0x9418;
inline constexpr uint32_t kBtrfsIocSetReceivedSubvol = 0x9425;
inline constexpr uint32_t kBtrfsIocSnapDestroyV2 = 0x943f;
// fscrypt keys are the filesystem's: a key one user adds unlocks the files
// for every user of the host.
inline constexpr uint32_t kFsIocAddEncryptionKey = 0x6617;
inline constexpr uint32_t kFsIocRemoveEncryptionKey = 0x6618;
// f2fs's own ioctls (type 0xf5): atomic writes, pinning and compression
// through fds its checks do not all require writable. None audited
// one by one, none needed by a tool: the whole type is refused.
inline constexpr uint32_t kIoctlTypeMask = 0xff00;
inline constexpr uint32_t kF2fsIoctlType = 0xf500;

// ---- namespaces --------------------------------------------------------------
inline constexpr uint64_t kCloneNewTime = 0x00000080;
inline constexpr uint64_t kCloneNewNs = 0x00020000;
inline constexpr uint64_t kCloneNewCgroup = 0x02000000;
inline constexpr uint64_t kCloneNewUts = 0x04000000;
inline constexpr uint64_t kCloneNewIpc = 0x08000000;
inline constexpr uint64_t kCloneNewUser = 0x10000000;
inline constexpr uint64_t kCloneNewPid = 0x20000000;
inline constexpr uint64_t kCloneNewNet = 0x40000000;
inline constexpr uint64_t kCloneNamespaceFlags = kCloneNewTime | kCloneNewNs | kCloneNewCgroup |
                                                 kCloneNewUts | kCloneNewIpc | kCloneNewUser |
                                                 kCloneNewPid | kCloneNewNet;

}  // namespace cordon::uapi
