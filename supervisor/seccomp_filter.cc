#include "supervisor/seccomp_filter.h"

#include <linux/audit.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstddef>
#include <cstring>

#include "base/fd.h"
#include "supervisor/uapi.h"

namespace cordon::supervisor {
namespace {

using namespace cordon::uapi;

constexpr uint32_t kArchOff = offsetof(SeccompData, arch);
constexpr uint32_t kNrOff = offsetof(SeccompData, nr);

constexpr uint32_t ArgLowOff(unsigned arg) {  // little-endian: the low word comes first
  return static_cast<uint32_t>(offsetof(SeccompData, args) + arg * sizeof(uint64_t));
}

sock_filter Load(uint32_t off) { return BPF_STMT(BPF_LD | BPF_W | BPF_ABS, off); }
sock_filter Ret(uint32_t action) { return BPF_STMT(BPF_RET | BPF_K, action); }
sock_filter Jump(uint16_t op, uint32_t k, uint8_t jt, uint8_t jf) {
  return BPF_JUMP(BPF_JMP | op | BPF_K, k, jt, jf);
}

}  // namespace

std::vector<sock_filter> SeccompBuilder::Prefix(const std::vector<EarlyAllow>& early) {
  std::vector<sock_filter> p = {
      Load(kArchOff),
      Jump(BPF_JEQ, AUDIT_ARCH_X86_64, 1, 0),
      Ret(kSeccompRetKillProcess),  // ia32 or another architecture
      Load(kNrOff),
      Jump(BPF_JSET, kX32SyscallBit, 0, 1),
      Ret(kSeccompRetKillProcess),  // x32
  };
  // The early allows: the read-only openat every tool makes by the
  // thousand is decided in 8 instructions instead of 39 down libseccomp's
  // tree (the strict filter). A call with one of the bits set reloads the
  // number and goes on through the prefix into the rules.
  for (const EarlyAllow& e : early) {
    std::initializer_list<sock_filter> allow = {
        Jump(BPF_JEQ, static_cast<uint32_t>(e.nr), 0, 4),
        Load(ArgLowOff(e.arg)),
        Jump(BPF_JSET, e.bits, 1, 0),
        Ret(kSeccompRetAllow),
        Load(kNrOff),
    };
    p.insert(p.end(), allow);
  }
  // personality(2): only the query (0xffffffff) and PER_LINUX; libseccomp
  // cannot compare one argument twice, so this lives here. The kernel reads
  // an unsigned int: the low word is what counts.
  std::initializer_list<sock_filter> tail = {
      Jump(BPF_JGT, static_cast<uint32_t>(kMaxKnownSyscall), 0, 1),
      Ret(kSeccompRetErrno | ENOSYS),  // newer than cordon
      Jump(BPF_JEQ, SCMP_SYS(personality), 0, 5),
      Load(ArgLowOff(0)),
      Jump(BPF_JEQ, 0, 2, 0),
      Jump(BPF_JEQ, 0xffffffffu, 1, 0),
      Ret(kSeccompRetErrno | EPERM),
      Ret(kSeccompRetAllow),
  };
  p.insert(p.end(), tail);
  return p;
}

SeccompBuilder::SeccompBuilder() : ctx_(seccomp_init(SCMP_ACT_ALLOW)) {
  if (ctx_ == nullptr) {
    errors_.emplace_back("seccomp_init failed");
    return;
  }
  // Skip libseccomp's kernel probes: cordon installs the program itself.
  seccomp_attr_set(ctx_, SCMP_FLTATR_CTL_TSYNC, 0);
  seccomp_attr_set(ctx_, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
  seccomp_attr_set(ctx_, SCMP_FLTATR_CTL_OPTIMIZE, 2);
}

SeccompBuilder::~SeccompBuilder() {
  if (ctx_ != nullptr) seccomp_release(ctx_);
}

void SeccompBuilder::Add(uint32_t action, int nr, std::initializer_list<scmp_arg_cmp> when) {
  if (ctx_ == nullptr) return;
  int rc = seccomp_rule_add_array(ctx_, action, nr, static_cast<unsigned>(when.size()),
                                  when.size() ? when.begin() : nullptr);
  if (rc != 0) {
    errors_.push_back("seccomp_rule_add(syscall " + std::to_string(nr) + "): " + std::strerror(-rc));
  }
}

SeccompBuilder& SeccompBuilder::Deny(int nr, int err, std::initializer_list<scmp_arg_cmp> when) {
  Add(SCMP_ACT_ERRNO(static_cast<uint16_t>(err)), nr, when);
  return *this;
}

SeccompBuilder& SeccompBuilder::Notify(int nr, std::initializer_list<scmp_arg_cmp> when) {
  Add(SCMP_ACT_NOTIFY, nr, when);
  has_notify_ = true;
  return *this;
}

SeccompBuilder& SeccompBuilder::Kill(int nr) {
  Add(SCMP_ACT_KILL_PROCESS, nr, {});
  return *this;
}

SeccompBuilder& SeccompBuilder::AllowEarlyWhenClear(int nr, unsigned arg, uint32_t bits) {
  // Above the highest known number the prefix answers ENOSYS, and this
  // test comes before that one.
  if (nr < 0 || nr > kMaxKnownSyscall || arg > 5) {
    errors_.push_back("early allow of syscall " + std::to_string(nr) + ", argument " +
                      std::to_string(arg) + ": out of range");
  } else {
    early_.push_back({nr, arg, bits});
  }
  return *this;
}

Result<BpfProgram> SeccompBuilder::Build() {
  if (!errors_.empty()) {
    std::string all;
    for (const auto& e : errors_) all += (all.empty() ? "" : "; ") + e;
    return SysError{EINVAL, "seccomp filter", all};
  }
  // libseccomp 2.5 exports only to an fd; a memfd keeps it off the disk.
  Fd mem(static_cast<int>(::syscall(SYS_memfd_create, "cordon-bpf", MFD_CLOEXEC)));
  if (!mem) return Errno("memfd_create");
  int rc = seccomp_export_bpf(ctx_, mem.get());
  if (rc != 0) return SysError{-rc, "seccomp_export_bpf"};
  struct stat st;
  if (::fstat(mem.get(), &st) != 0) return Errno("fstat");
  std::vector<sock_filter> body(static_cast<size_t>(st.st_size) / sizeof(sock_filter));
  if (::pread(mem.get(), body.data(), body.size() * sizeof(sock_filter), 0) !=
      static_cast<ssize_t>(body.size() * sizeof(sock_filter))) {
    return Errno("pread");
  }
  BpfProgram prog{Prefix(early_), has_notify_};
  prog.prefix_size = prog.insns.size();
  prog.insns.insert(prog.insns.end(), body.begin(), body.end());
  if (prog.insns.size() > BPF_MAXINSNS) return SysError{E2BIG, "seccomp filter too long"};
  return prog;
}

int InstallFilter(const BpfProgram& prog) {
  sock_fprog fprog{static_cast<unsigned short>(prog.insns.size()),
                   const_cast<sock_filter*>(prog.insns.data())};
  unsigned flags = prog.has_notify ? kSeccompFilterFlagNewListener : 0;
  long rc = ::syscall(SYS_seccomp, kSeccompSetModeFilter, flags, &fprog);
  if (rc < 0) return -errno;
  return static_cast<int>(rc);
}

}  // namespace cordon::supervisor
