// The wire format between cordon's supervisor and libcordon_preload.so: the
// environment variables that configure the preload and the fixed-size report
// record it sends back. Plain C-compatible data only; this is the one header
// the preload and the supervisor share.
//
// Everything the preload sends is an untrusted hint from inside the tool.
#pragma once

#include <stdint.h>

namespace cordon::wire {

// Absolute, normal workspace root. Its absence means "not under cordon":
// the preload warns once and passes every call through.
inline constexpr char kEnvWorkspace[] = "CORDON_PRELOAD_WORKSPACE";
// "rw" (workspace-write) or "ro" (read-only profile).
inline constexpr char kEnvWorkspaceMode[] = "CORDON_PRELOAD_WORKSPACE_MODE";
// ':'-separated absolute normal paths (a path holding ':' cannot be listed;
// the supervisor then runs without the preload).
inline constexpr char kEnvReadOnly[] = "CORDON_PRELOAD_RO";
inline constexpr char kEnvReadWrite[] = "CORDON_PRELOAD_RW";
inline constexpr char kEnvDenied[] = "CORDON_PRELOAD_DENY";
// "1": $TMPDIR is the run's private temporary directory (read-write). The
// launcher makes it, so its path is only known in the tool's environment.
inline constexpr char kEnvPrivateTmp[] = "CORDON_PRELOAD_TMPDIR";
// "1": one line on stderr per refusal, naming the call, the path and the rule.
inline constexpr char kEnvLog[] = "CORDON_LOG";
// The tool's end of the SOCK_SEQPACKET report channel (set by the launcher).
inline constexpr char kEnvReportFd[] = "CORDON_REPORT_FD";
// "refused": only refusals are reported (each at once, so that the user is
// told of it), nothing else: no admitted calls and no final totals. Set
// when nobody tallies the run (no audit, default log level).
inline constexpr char kEnvReportMode[] = "CORDON_REPORT_MODE";
inline constexpr char kReportRefusedOnly[] = "refused";
// "1": Landlock's launch-time grant leaves paths the policy lets the tool
// read without a kernel grant (an entry created beside a carved-out path,
// a granted file that did not exist at launch: supervisor::BrokersReads). A read-only open the kernel refused with EACCES is
// then asked of the supervisor once more, as a brokered open.
inline constexpr char kEnvBroker[] = "CORDON_PRELOAD_BROKER";
// "1": the run offers per-operation bypass (policy/bypass.h). A change the
// rules refuse under a denied or read-only rule is then left to the
// supervisor, which may ask the approver about it, instead of being
// refused early here (the preload never grants, so nothing is loosened).
inline constexpr char kEnvBypass[] = "CORDON_PRELOAD_BYPASS";
// The openat(2) flag bit that asks the supervisor to open a file for
// reading on the tool's behalf (the broker). The kernel's openat ignores
// it (not in VALID_OPEN_FLAGS, whose highest bit is __O_TMPFILE, 0x400000;
// openat2 would refuse it, and is answered ENOSYS anyway); the seccomp
// filter sends every openat carrying it to the supervisor, which decides
// by policy whoever set it. Not the sign bit: flags are an int.
inline constexpr int kBrokerOpenFlag = 0x40000000;
inline constexpr char kPathSeparator = ':';

inline constexpr uint32_t kReportMagic = 0x43524550;  // "CREP"
inline constexpr uint16_t kReportVersion = 1;
inline constexpr unsigned kReportPathMax = 256;

// The interposed call. Values are wire format: append only.
enum class Call : uint16_t {
  kOpen = 0,
  kOpen64,
  kOpenat,
  kOpenat64,
  kOpen2,
  kOpen64_2,
  kOpenat2,
  kOpenat64_2,
  kCreat,
  kCreat64,
  kFopen,
  kFopen64,
  kFreopen,
  kUnlink,
  kUnlinkat,
  kRemove,
  kRename,
  kRenameat,
  kRenameat2,
  kExit,  // not a call: the process's last record, carrying its final counts
  // Not a call: the image's first record, sent once from the library's
  // constructor; path[] holds /proc/self/exe as the image reads it. The
  // supervisor uses it for attribution only (which exec'd images ran
  // without the preload), never to grant: a tool can fake or skip it.
  kCheckIn,
  // An exec the kernel refused with EACCES in a run with carve-outs
  // (kEnvBroker): reported so that the user hears why, since a program
  // made beside a carve-out has no EXECUTE grant and nobody can broker one.
  kExecve,
  kFreopen64,
  // A directory listing the kernel refused with EACCES (opendir):
  // reported so that the user hears why (glibc opens it internally, where
  // no hook admits it).
  kOpendir,
  kCount,
};

enum class ReportOp : uint8_t { kRead = 0, kMutate = 1 };
// kPassed: the preload could not check (no base for a relative path, e.g. a
// dirfd that is not a directory) and left the call to the kernel.
enum class ReportVerdict : uint8_t { kAdmitted = 0, kRefused = 1, kPassed = 2 };

struct Report {
  uint32_t magic;
  uint16_t version;
  uint16_t call;     // Call
  uint8_t op;        // ReportOp
  uint8_t verdict;   // ReportVerdict
  uint8_t path_class;  // policy::PathClass
  uint8_t truncated;   // 1 when path[] holds only the first bytes
  int32_t err;       // errno of a refusal; 0 when admitted
  int32_t pid;
  int32_t tid;
  uint32_t image;    // random per exec'd image: (pid, image) names one process image
  uint64_t seq;      // per process, from 1; kExit: calls seen in total
  uint64_t dropped;  // records this process could not send before this one
  // NUL-terminated; for renames, the source. The bytes after the NUL are
  // unspecified (the preload leaves what an earlier record of the same
  // process held there): read up to the NUL.
  char path[kReportPathMax];
};
static_assert(sizeof(Report) == 304, "the report record is wire format");

// A datagram carries 1 to kReportBatchMax records back to back (the preload
// batches them per thread); 215 records fill 64 KiB.
inline constexpr unsigned kReportBatchMax = 215;
inline constexpr unsigned kReportDatagramMax = kReportBatchMax * sizeof(Report);

inline const char* CallName(uint16_t c) {
  static constexpr const char* kNames[] = {
      "open",       "open64",       "openat",   "openat64", "__open_2",  "__open64_2",
      "__openat_2", "__openat64_2", "creat",    "creat64",  "fopen",     "fopen64",
      "freopen",    "unlink",       "unlinkat", "remove",   "rename",    "renameat",
      "renameat2",  "exit",         "checkin",  "execve",   "freopen64", "opendir"};
  static_assert(sizeof(kNames) / sizeof(kNames[0]) == static_cast<unsigned>(Call::kCount));
  return c < static_cast<uint16_t>(Call::kCount) ? kNames[c] : "?";
}

}  // namespace cordon::wire
