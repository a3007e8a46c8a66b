#include "tests/support/seccomp_bpf_eval.h"

#include <cstring>

namespace cordon::testing {

BpfRun RunSeccompBpf(std::span<const sock_filter> prog, const seccomp_data& data) {
  BpfRun run;
  uint32_t a = 0;
  size_t pc = 0;
  // Jumps only go forward, so this ends.
  while (pc < prog.size()) {
    const sock_filter& f = prog[pc];
    ++run.executed;
    size_t next = pc + 1;
    switch (f.code) {
      case BPF_LD | BPF_W | BPF_ABS:
        // The kernel's checker accepts only aligned words inside seccomp_data.
        if (f.k % 4 != 0 || f.k + 4 > sizeof data) {
          run.error = "load at " + std::to_string(f.k);
          return run;
        }
        std::memcpy(&a, reinterpret_cast<const char*>(&data) + f.k, 4);
        if (f.k != offsetof(seccomp_data, nr) && f.k != offsetof(seccomp_data, arch)) {
          run.read_args = true;
        }
        break;
      case BPF_ALU | BPF_AND | BPF_K:
        a &= f.k;
        break;
      case BPF_JMP | BPF_JA:
        next += f.k;
        break;
      case BPF_JMP | BPF_JEQ | BPF_K:
        next += a == f.k ? f.jt : f.jf;
        break;
      case BPF_JMP | BPF_JGT | BPF_K:
        next += a > f.k ? f.jt : f.jf;
        break;
      case BPF_JMP | BPF_JGE | BPF_K:
        next += a >= f.k ? f.jt : f.jf;
        break;
      case BPF_JMP | BPF_JSET | BPF_K:
        next += (a & f.k) != 0 ? f.jt : f.jf;
        break;
      case BPF_RET | BPF_K:
        run.action = f.k;
        run.decided_at = pc;
        return run;
      default:
        run.error = "opcode " + std::to_string(f.code) + " at " + std::to_string(pc);
        return run;
    }
    pc = next;
  }
  run.error = "ran off the end";
  return run;
}

}  // namespace cordon::testing
