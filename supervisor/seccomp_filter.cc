#include "supervisor/seccomp_filter.h"

#include <linux/audit.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstddef>
#include <cstring>

#include "policy/fd.h"
#include "supervisor/uapi.h"

namespace cordon::supervisor {
namespace {

using namespace cordon::uapi;

std::vector<sock_filter> Prefix() {
  constexpr uint32_t kArchOff = offsetof(SeccompData, arch);
  constexpr uint32_t kNrOff = offsetof(SeccompData, nr);
  constexpr uint32_t kArg0LowOff = offsetof(SeccompData, args);  // little-endian
  return {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, kArchOff),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
      BPF_STMT(BPF_RET | BPF_K, kSeccompRetKillProcess),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, kNrOff),
      BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, kX32SyscallBit, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, kSeccompRetKillProcess),
      BPF_JUMP(BPF_JMP | BPF_JGT | BPF_K, static_cast<uint32_t>(kMaxKnownSyscall), 0, 1),
      BPF_STMT(BPF_RET | BPF_K, kSeccompRetErrno | ENOSYS),
      // personality(2): only the query (0xffffffff) and PER_LINUX; libseccomp
      // cannot compare one argument twice, so this lives here. The kernel
      // reads an unsigned int: the low word is what counts.
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SCMP_SYS(personality), 0, 5),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, kArg0LowOff),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 2, 0),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0xffffffffu, 1, 0),
      BPF_STMT(BPF_RET | BPF_K, kSeccompRetErrno | EPERM),
      BPF_STMT(BPF_RET | BPF_K, kSeccompRetAllow),
  };
}

}  // namespace

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
  BpfProgram prog{Prefix(), has_notify_};
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
