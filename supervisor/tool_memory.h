// Reading the tool's memory for a seccomp notification: strings and small
// structs, with process_vm_readv (never /proc/PID/mem writes), page by page
// so a string ending just before an unmapped page is read correctly.
// Callers must check SECCOMP_IOCTL_NOTIF_ID_VALID after reading (see
// NotifyLoop), or the pid may have been reused. Thread-safe.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>

#include "base/result.h"

namespace cordon::supervisor {

// A NUL-terminated string of at most `max` bytes (ENAMETOOLONG beyond).
Result<std::string> ReadToolString(pid_t tid, uint64_t addr, size_t max);

// Exactly `len` bytes.
Status ReadToolBytes(pid_t tid, uint64_t addr, void* out, size_t len);

}  // namespace cordon::supervisor
