// Capability drop with libcap: effective, permitted, inheritable, ambient
// and the bounding set, plus the securebits that stop a uid-0 tool from
// regaining them at exec. Prepared in the parent (libcap allocates there),
// applied in the child between clone and exec, where nothing may allocate:
// the child may share the parent's memory (launcher.cc).
#pragma once

#include <sys/capability.h>

#include <memory>
#include <type_traits>

namespace cordon::supervisor {

class CapabilityDrop {
 public:
  // Reads what the calling process holds; the child inherits the same.
  CapabilityDrop();

  // Returns 0 or -errno. Only system calls: no allocation, no locks but
  // libcap's own spin locks, so it is safe between clone and exec.
  // Dropping the bounding set needs CAP_SETPCAP; without it (an
  // unprivileged caller) the bounding set cannot grant anything at exec
  // anyway because no_new_privs is set right after.
  int Apply() const;

 private:
  struct CapFree {
    void operator()(cap_t c) const { cap_free(c); }
  };
  bool drop_bounding_set_ = false;
  std::unique_ptr<std::remove_pointer_t<cap_t>, CapFree> empty_;
};

// Prepares and applies in one go, for a process that may allocate.
int DropAllCapabilities();

// Empties the effective, permitted and inheritable sets of the calling
// thread only (libcap without libpsx sets one thread's, as capset(2) does):
// the rest of the process keeps its own. For a thread that acts for the
// tool and must be refused what the tool is refused. Returns 0 or -errno.
int DropThreadCapabilities();

// Lowers the calling thread's effective set while it lives and raises it
// again after (the permitted set is kept): the kernel then checks file
// permissions on this thread as it does for the tool, which holds no
// capability. For everything done on the tool's behalf: the notify loop's
// threads hold one for their whole life, so one taken again there (nested)
// costs nothing. When lowered() is false nothing may be done for the tool
// with it.
class ToolPermissions {
 public:
  ToolPermissions();
  ~ToolPermissions();
  ToolPermissions(const ToolPermissions&) = delete;
  ToolPermissions& operator=(const ToolPermissions&) = delete;
  bool lowered() const { return lowered_; }

 private:
  cap_t saved_ = nullptr;  // null: there was nothing to lower
  bool lowered_ = false;
  bool marked_ = false;  // this one marked the thread as lowered
};

// The inverse, for the supervisor's own business on a thread that acts for
// the tool: the approver, the pinned binary's hash, reading the memory or
// the descriptors of a tool that made itself undumpable. Raises the
// effective set to the permitted one while it lives; on a thread that holds
// no ToolPermissions it does nothing. Like ToolPermissions, its end leaves
// errno as the guarded call set it.
class SupervisorPermissions {
 public:
  SupervisorPermissions();
  ~SupervisorPermissions();
  SupervisorPermissions(const SupervisorPermissions&) = delete;
  SupervisorPermissions& operator=(const SupervisorPermissions&) = delete;

 private:
  cap_t saved_ = nullptr;  // the lowered set, restored at the end
};

// Runs `call` (returns < 0 with errno set on failure) as the thread is, and
// again with SupervisorPermissions when the kernel refused it with EPERM or
// EACCES: for the supervisor's reads of the tool's own state (its memory,
// descriptors and /proc links), which the tool can deny a capless reader by
// making itself undumpable.
template <class Call>
auto RetryAsSupervisor(Call&& call) -> decltype(call()) {
  auto r = call();
  if (r >= 0 || (errno != EPERM && errno != EACCES)) return r;
  SupervisorPermissions raised;
  return call();
}

// True when `cap` is in the calling thread's permitted set.
bool Permits(cap_value_t cap);

// True when the calling process holds no capability in any set.
bool HoldsNoCapabilities();

}  // namespace cordon::supervisor
