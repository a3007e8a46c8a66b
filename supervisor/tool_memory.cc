#include "supervisor/tool_memory.h"

#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "supervisor/caps.h"

namespace cordon::supervisor {

Result<std::string> ReadToolString(pid_t tid, uint64_t addr, size_t max) {
  if (addr == 0) return SysError{EFAULT, "read tool string"};
  static const size_t kPage = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  std::string out;
  char buf[4096];
  while (out.size() <= max) {
    size_t to_page_end = kPage - (addr % kPage);
    size_t want = std::min({to_page_end, sizeof buf, max + 1 - out.size()});
    iovec local{buf, want};
    iovec remote{reinterpret_cast<void*>(addr), want};
    ssize_t n =
        RetryAsSupervisor([&] { return ::process_vm_readv(tid, &local, 1, &remote, 1, 0); });
    if (n <= 0) return SysError{n < 0 ? errno : EFAULT, "process_vm_readv"};
    const void* nul = std::memchr(buf, 0, static_cast<size_t>(n));
    if (nul != nullptr) {
      out.append(buf, static_cast<const char*>(nul) - buf);
      return out;
    }
    out.append(buf, static_cast<size_t>(n));
    addr += static_cast<uint64_t>(n);
  }
  return SysError{ENAMETOOLONG, "read tool string"};
}

Status ReadToolBytes(pid_t tid, uint64_t addr, void* out, size_t len) {
  if (addr == 0) return SysError{EFAULT, "read tool memory"};
  iovec local{out, len};
  iovec remote{reinterpret_cast<void*>(addr), len};
  ssize_t n = RetryAsSupervisor([&] { return ::process_vm_readv(tid, &local, 1, &remote, 1, 0); });
  if (n != static_cast<ssize_t>(len)) return SysError{n < 0 ? errno : EFAULT, "process_vm_readv"};
  return Ok();
}

}  // namespace cordon::supervisor
