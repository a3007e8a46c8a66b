#include "supervisor/caps.h"

#include <linux/securebits.h>
#include <sys/prctl.h>

#include <cerrno>
#include <cstdlib>

namespace cordon::supervisor {
namespace {

struct CapFree {
  void operator()(cap_t c) const { cap_free(c); }
};
using CapPtr = std::unique_ptr<std::remove_pointer_t<cap_t>, CapFree>;

bool HasSetpcap() {
  CapPtr cur(cap_get_proc());
  cap_flag_value_t v = CAP_CLEAR;
  return cur && cap_get_flag(cur.get(), CAP_SETPCAP, CAP_EFFECTIVE, &v) == 0 && v == CAP_SET;
}

}  // namespace

CapabilityDrop::CapabilityDrop() : drop_bounding_set_(HasSetpcap()), empty_(cap_init()) {}

int CapabilityDrop::Apply() const {
  if (drop_bounding_set_) {
    // NOROOT: uid 0 gets no capabilities at execve; locked so the tool
    // cannot undo it. KEEP_CAPS locked off.
    unsigned bits = SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP |
                    SECBIT_NO_SETUID_FIXUP_LOCKED | SECBIT_KEEP_CAPS_LOCKED;
    if (cap_set_secbits(bits) != 0) return -errno;
    for (cap_value_t c = 0; c <= cap_max_bits() - 1; ++c) {
      if (cap_drop_bound(c) != 0 && errno != EINVAL) return -errno;
    }
  }
  // Emptying the permitted and inheritable sets empties the ambient set
  // too: the kernel keeps no capability ambient that is not both
  // (capabilities(7)). libcap's cap_reset_ambient would ask about each
  // capability first, ~40 syscalls in every launch.
  if (!empty_) return -ENOMEM;
  if (cap_set_proc(empty_.get()) != 0) return -errno;
  return 0;
}

int DropAllCapabilities() { return CapabilityDrop().Apply(); }

int DropThreadCapabilities() {
  CapPtr none(cap_init());
  if (!none) return -ENOMEM;
  return cap_set_proc(none.get()) == 0 ? 0 : -errno;
}

namespace {
// Whether the calling thread's effective set is lowered for the tool by a
// ToolPermissions that still lives.
thread_local bool t_acting_for_tool = false;

// Empties the calling thread's effective set (`raise` false) or fills it
// from the permitted set (true). False when that could not be done. When
// the set changed, *saved holds what it was (the caller restores it with
// Restore); when there was nothing to change, *saved stays null.
bool SetEffective(bool raise, cap_t* saved) {
  CapPtr cur(cap_get_proc());
  if (!cur) return false;
  CapPtr next(cap_dup(cur.get()));
  if (!next) return false;
  int rc = raise ? cap_fill(next.get(), CAP_EFFECTIVE, CAP_PERMITTED)
                 : cap_clear_flag(next.get(), CAP_EFFECTIVE);
  if (rc != 0) return false;
  if (cap_compare(cur.get(), next.get()) == 0) return true;
  if (cap_set_proc(next.get()) != 0) return false;
  *saved = cur.release();
  return true;
}

// Puts back a set SetEffective saved, keeping errno for the caller (a
// guard's end follows the call it guarded). Only the effective set moved
// and the permitted set still holds every bit of it, so this cannot fail
// but for a kernel bug; carrying on in the wrong state would act for the
// tool with the supervisor's permissions, or the reverse.
void Restore(cap_t saved) {
  int err = errno;
  if (cap_set_proc(saved) != 0) std::abort();
  cap_free(saved);
  errno = err;
}
}  // namespace

ToolPermissions::ToolPermissions() {
  if (t_acting_for_tool) {
    lowered_ = true;
    return;
  }
  if (!SetEffective(false, &saved_)) return;
  lowered_ = true;
  marked_ = true;
  t_acting_for_tool = true;
}

ToolPermissions::~ToolPermissions() {
  if (marked_) t_acting_for_tool = false;
  if (saved_ != nullptr) Restore(saved_);
}

SupervisorPermissions::SupervisorPermissions() {
  // On failure the thread stays lowered: the call it guards is refused.
  if (!t_acting_for_tool || !SetEffective(true, &saved_) || saved_ == nullptr) return;
  t_acting_for_tool = false;
}

SupervisorPermissions::~SupervisorPermissions() {
  if (saved_ == nullptr) return;
  Restore(saved_);
  t_acting_for_tool = true;
}

bool Permits(cap_value_t cap) {
  CapPtr cur(cap_get_proc());
  cap_flag_value_t v = CAP_CLEAR;
  return cur && cap_get_flag(cur.get(), cap, CAP_PERMITTED, &v) == 0 && v == CAP_SET;
}

bool HoldsNoCapabilities() {
  CapPtr cur(cap_get_proc());
  CapPtr none(cap_init());
  if (!cur || !none || cap_compare(cur.get(), none.get()) != 0) return false;
  for (cap_value_t c = 0; c < cap_max_bits(); ++c) {
    if (cap_get_bound(c) == 1) return false;
    if (cap_get_ambient(c) == 1) return false;
  }
  return true;
}

}  // namespace cordon::supervisor
