// RunSeccompBpf: runs a classic BPF seccomp program on one seccomp_data in
// user space, as the kernel's interpreter would, so tests can ask what a
// filter decides for any syscall and arguments without installing it, and
// how it got there. It knows only the instructions cordon's programs use
// (32-bit absolute loads, AND with a constant, the constant jumps, RET of a
// constant); anything else is reported, never guessed.
#pragma once

#include <linux/filter.h>
#include <linux/seccomp.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

namespace cordon::testing {

struct BpfRun {
  uint32_t action = 0;     // the value of the RET that decided
  size_t executed = 0;     // instructions run, that RET included
  size_t decided_at = 0;   // the index of that RET
  bool read_args = false;  // loaded anything but nr and arch (the kernel's
                           // action cache cannot hold such a syscall)
  std::string error;       // set on an unknown opcode, a bad load or jump
};

BpfRun RunSeccompBpf(std::span<const sock_filter> prog, const seccomp_data& data);

}  // namespace cordon::testing
