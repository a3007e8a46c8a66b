// The kernel's audit subsystem, as far as cordon's reports need it: since
// Landlock ABI 7 the kernel can record Landlock's own denials there
// (LANDLOCK_RESTRICT_SELF_LOG_*), but only while audit is enabled, and only
// a reader with CAP_AUDIT_READ sees them. cordon does not turn audit on (a
// machine-wide setting, and without auditd its records flood the kernel
// log); it says which holds.
#pragma once

#include <cstdint>
#include <string_view>

namespace cordon::supervisor {

enum class KernelAudit {
  kUnavailable,  // no audit netlink here (no CONFIG_AUDIT, or not permitted)
  kOff,          // audit present but disabled (auditctl -e 0, no audit=1)
  kOn,           // enabled
};

// One AUDIT_GET over NETLINK_AUDIT.
KernelAudit ProbeKernelAudit();

// Sends the kernel one audit netlink message on `sock` (a NETLINK_AUDIT
// socket): `type` (AUDIT_GET, AUDIT_SET, AUDIT_USER, ...) with
// NLM_F_REQUEST and `flags`, `payload` as its data. False (errno set) when
// the kernel did not take it.
bool SendToKernelAudit(int sock, std::uint16_t type, std::uint16_t flags,
                       std::string_view payload = {});

const char* KernelAuditName(KernelAudit a);

}  // namespace cordon::supervisor
