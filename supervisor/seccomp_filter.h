// SeccompBuilder: collects rules with libseccomp, reports every error at
// Build(), and exports a classic BPF program the child installs with one
// seccomp(2) call (InstallFilter is async-signal-safe, so it runs between
// fork and exec with no allocation).
//
// Build() puts cordon's own prefix in front of libseccomp's program:
// a foreign architecture (ia32 entry) or an x32 syscall kills the process,
// and every syscall number above uapi::kMaxKnownSyscall answers ENOSYS, so a
// newer kernel's syscalls never slip past a deny list written before them.
// The prefix also holds the early allows (AllowEarlyWhenClear).
#pragma once

#include <linux/filter.h>
#include <seccomp.h>

#include <initializer_list>
#include <string>
#include <vector>

#include "base/result.h"

namespace cordon::supervisor {

struct BpfProgram {
  std::vector<sock_filter> insns;
  bool has_notify = false;
  // How many of `insns` are cordon's prefix. The rest is libseccomp's
  // program, whole on its own: tests run it alone to show the prefix
  // changes none of its decisions.
  size_t prefix_size = 0;
};

class SeccompBuilder {
 public:
  SeccompBuilder();
  ~SeccompBuilder();
  SeccompBuilder(const SeccompBuilder&) = delete;
  SeccompBuilder& operator=(const SeccompBuilder&) = delete;

  SeccompBuilder& Deny(int nr, int err, std::initializer_list<scmp_arg_cmp> when = {});
  SeccompBuilder& Notify(int nr, std::initializer_list<scmp_arg_cmp> when = {});
  SeccompBuilder& Kill(int nr);
  // Allows `nr` in the prefix, before libseccomp's program walks its tree,
  // when no bit of `bits` is set in the low word of argument `arg` (an int
  // argument: the kernel ignores the high word). Other calls go on to the
  // rules. Only for calls the rules allow anyway: the builder cannot check
  // that, tests/supervisor/tool_filter_program_test.cc does. Not for a
  // syscall the rules allow whatever its arguments: the kernel skips the
  // filter for those (its action cache), and an argument test would stop it.
  SeccompBuilder& AllowEarlyWhenClear(int nr, unsigned arg, uint32_t bits);

  Result<BpfProgram> Build();

 private:
  void Add(uint32_t action, int nr, std::initializer_list<scmp_arg_cmp> when);

  struct EarlyAllow {
    int nr;
    unsigned arg;
    uint32_t bits;
  };
  static std::vector<sock_filter> Prefix(const std::vector<EarlyAllow>& early);

  scmp_filter_ctx ctx_;
  bool has_notify_ = false;
  std::vector<EarlyAllow> early_;
  std::vector<std::string> errors_;
};

// seccomp(SECCOMP_SET_MODE_FILTER), with a listener when the program
// notifies. Returns the listener fd, 0 when none, or -errno.
int InstallFilter(const BpfProgram& prog);

}  // namespace cordon::supervisor
