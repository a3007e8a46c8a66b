#include "supervisor/preload_setup.h"

#include <elf.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <nlohmann/json.hpp>

#include "base/fd.h"
#include "policy/path_admission.h"
#include "policy/refusal_hint.h"
#include "preload/wire.h"
#include "supervisor/exec/elf_reader.h"
#include "supervisor/tool_filter.h"

namespace cordon::supervisor {
namespace {

bool UsesGlibcLoaderDepth(const std::string& path, std::string* why, int depth) {
  // O_NONBLOCK: a FIFO named as the tool or its interpreter is not waited on.
  Fd fd(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
  if (!fd) return *why = path + ": " + std::strerror(errno), false;
  unsigned char ident[EI_NIDENT] = {};
  ssize_t n = ::pread(fd.get(), ident, sizeof ident, 0);
  if (n >= 2 && ident[0] == '#' && ident[1] == '!') {
    if (depth >= 4) return *why = path + ": too many levels of #! interpreters", false;
    char line[256] = {};
    ssize_t m = ::pread(fd.get(), line, sizeof line - 1, 2);
    std::string s(line, m > 0 ? static_cast<size_t>(m) : 0);
    s = s.substr(0, s.find('\n'));
    size_t b = s.find_first_not_of(" \t");
    if (b == std::string::npos) return *why = path + ": empty #! line", false;
    s = s.substr(b, s.find_first_of(" \t", b) - b);
    return UsesGlibcLoaderDepth(s, why, depth + 1);
  }
  ElfHeaders elf;
  if (!ReadElfHeaders(fd.get(), /*with_needed=*/false, &elf, why)) {
    return *why = path + ": " + *why, false;
  }
  const std::string& interp = elf.interp;
  if (interp.empty()) return *why = path + " is statically linked", false;
  std::string base = interp.substr(interp.rfind('/') + 1);
  if (base.rfind("ld-linux", 0) == 0) return true;
  if (base.rfind("ld-musl", 0) == 0) return *why = path + " uses the musl loader " + interp, false;
  *why = path + " uses the loader " + interp + ", not glibc's";
  return false;
}

bool IsFile(const std::string& p) {
  struct stat st;
  return !p.empty() && ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::string RealPath(const std::string& p) {
  char buf[PATH_MAX];
  return ::realpath(p.c_str(), buf) ? std::string(buf) : std::string();
}

const wire::Report* AsReport(const void* data, size_t len) {
  if (len != sizeof(wire::Report)) return nullptr;
  auto* r = static_cast<const wire::Report*>(data);
  if (r->magic != wire::kReportMagic || r->version != wire::kReportVersion) return nullptr;
  return r;
}

const char* VerdictName(uint8_t v) {
  switch (static_cast<wire::ReportVerdict>(v)) {
    case wire::ReportVerdict::kAdmitted: return "admitted";
    case wire::ReportVerdict::kRefused: return "refused";
    case wire::ReportVerdict::kPassed: return "unchecked";
  }
  return "?";
}

std::string RecordPath(const wire::Report& r) {
  return std::string(r.path, strnlen(r.path, sizeof r.path));
}

const std::string& PathOf(const policy::RefusedEntry& e) { return e.path; }
const std::string& PathOf(const std::string& s) { return s; }

}  // namespace

bool UsesGlibcLoader(const std::string& exe_path, std::string* why) {
  std::string ignored;
  return UsesGlibcLoaderDepth(exe_path, why ? why : &ignored, 0);
}

std::string FindPreloadLibrary() {
#ifdef CORDON_PRELOAD_PATH
  if (IsFile(CORDON_PRELOAD_PATH)) return RealPath(CORDON_PRELOAD_PATH);
#endif
  std::string self = RealPath("/proc/self/exe");
  std::string dir = self.substr(0, self.rfind('/'));
  for (const char* rel : {"/../preload/libcordon_preload.so", "/../lib/cordon/libcordon_preload.so"}) {
    if (IsFile(dir + rel)) return RealPath(dir + rel);
  }
  return {};
}

bool MakePreloadEnv(const policy::Policy& p, const std::string& library,
                    const std::string& caller_ld_preload, PreloadReporting reporting,
                    PreloadEnv* out, std::string* why) {
  std::string ro, rw, deny;
  auto append = [](std::string& list, const std::string& path) {
    if (!list.empty()) list += wire::kPathSeparator;
    list += path;
  };
  std::vector<policy::PathRule> rules = policy::EffectiveRules(p, "");
  rules.push_back(policy::PathRule::ReadOnly(library));
  if (rules.size() > policy::kAdmissionMaxRules) {
    *why = "more path rules than the preload's table holds";
    return false;
  }
  for (const auto& r : rules) {
    if (r.path.find(wire::kPathSeparator) != std::string::npos ||
        !policy::IsAbsoluteNormal(r.path)) {
      *why = "path rule '" + r.path + "' cannot be passed to the preload";
      return false;
    }
    switch (r.access) {
      case policy::Access::kReadOnly: append(ro, r.path); break;
      case policy::Access::kReadWrite: append(rw, r.path); break;
      case policy::Access::kDenied: append(deny, r.path); break;
    }
  }
  std::string ld = library;
  if (!caller_ld_preload.empty()) ld += ":" + caller_ld_preload;
  out->set = {
      "LD_PRELOAD=" + ld,
      std::string(wire::kEnvWorkspace) + "=" + p.workspace,
      std::string(wire::kEnvWorkspaceMode) + "=" +
          (p.profile == policy::Profile::kWorkspaceWrite ? "rw" : "ro"),
      std::string(wire::kEnvReadOnly) + "=" + ro,
      std::string(wire::kEnvReadWrite) + "=" + rw,
      std::string(wire::kEnvDenied) + "=" + deny,
      std::string(wire::kEnvPrivateTmp) + "=" + (p.private_tmp ? "1" : "0"),
  };
  // The kernel refuses reads of what is made beside a carve-out (or of a
  // granted file made in the run): the preload asks the broker then
  // (wire::kEnvBroker), and only then.
  if (BrokersReads(rules)) out->set.push_back(std::string(wire::kEnvBroker) + "=1");
  if (reporting.bypass) out->set.push_back(std::string(wire::kEnvBypass) + "=1");
  if (reporting.log_refusals) out->set.push_back(std::string(wire::kEnvLog) + "=1");
  if (reporting.refused_only) {
    out->set.push_back(std::string(wire::kEnvReportMode) + "=" + wire::kReportRefusedOnly);
  }
  out->read_only = {library};
  return true;
}

void ApplyPreloadEnv(std::vector<std::string>* env, const std::vector<std::string>& add) {
  std::erase_if(*env, [](const std::string& e) {
    return e.rfind("CORDON_", 0) == 0 || e.rfind("LD_PRELOAD=", 0) == 0;
  });
  env->insert(env->end(), add.begin(), add.end());
}

bool DecodeReport(const void* data, size_t len, std::string* out) {
  const wire::Report* r = AsReport(data, len);
  if (r == nullptr) {
    *out = "malformed preload report (" + std::to_string(len) + " bytes)";
    return false;
  }
  if (r->call == static_cast<uint16_t>(wire::Call::kCheckIn)) {
    *out = "tool hint: pid " + std::to_string(r->pid) + " checked in as " + RecordPath(*r) +
           (r->truncated ? "..." : "");
    return true;
  }
  if (r->call == static_cast<uint16_t>(wire::Call::kExit)) {
    *out = "tool hint: pid " + std::to_string(r->pid) + " exited after " + std::to_string(r->seq) +
           " interposed calls, " + std::to_string(r->dropped) + " reports dropped";
    return true;
  }
  *out = "tool hint: pid " + std::to_string(r->pid) + " tid " + std::to_string(r->tid) + " #" +
         std::to_string(r->seq) + " " + wire::CallName(r->call) + "(\"" + RecordPath(*r) +
         (r->truncated ? "...\")" : "\")") + (r->op ? " mutate " : " read ") +
         VerdictName(r->verdict) + " [" +
         policy::PathClassName(static_cast<policy::PathClass>(r->path_class)) + "]";
  if (r->err) *out += std::string(" ") + std::strerror(r->err);
  return true;
}

bool DecodeReportJson(const void* data, size_t len, nlohmann::json* out) {
  const wire::Report* r = AsReport(data, len);
  nlohmann::json& j = *out;
  j = nlohmann::json::object();
  j["source"] = "preload";
  j["trusted"] = false;
  if (r == nullptr) {
    j["malformed"] = true;
    j["bytes"] = len;
    return false;
  }
  j["call"] = wire::CallName(r->call);
  j["pid"] = r->pid;
  j["tid"] = r->tid;
  j["seq"] = r->seq;
  j["dropped"] = r->dropped;
  if (r->call == static_cast<uint16_t>(wire::Call::kCheckIn)) {
    j["exe"] = RecordPath(*r);
    j["truncated"] = r->truncated != 0;
  } else if (r->call != static_cast<uint16_t>(wire::Call::kExit)) {
    j["path"] = RecordPath(*r);
    j["truncated"] = r->truncated != 0;
    j["op"] = r->op ? "mutate" : "read";
    j["verdict"] = VerdictName(r->verdict);
    j["class"] = policy::PathClassName(static_cast<policy::PathClass>(r->path_class));
    j["errno"] = r->err;
  }
  return true;
}

bool DescribeRefusal(const void* data, size_t len, std::string* what, std::string* hint,
                     const std::vector<policy::RefusedEntry>* refused, bool* probe) {
  const wire::Report* r = AsReport(data, len);
  if (r == nullptr || r->verdict != static_cast<uint8_t>(wire::ReportVerdict::kRefused) ||
      r->call == static_cast<uint16_t>(wire::Call::kExit) ||
      r->call == static_cast<uint16_t>(wire::Call::kCheckIn) ||
      r->call >= static_cast<uint16_t>(wire::Call::kCount)) {
    return false;
  }
  const auto cls = static_cast<policy::PathClass>(r->path_class);
  const bool mutate = r->op != 0;
  const std::string path = RecordPath(*r);
  const bool absolute = !r->truncated && policy::IsAbsoluteNormal(path);
  if (probe != nullptr) *probe = absolute && policy::IsRuntimeProbe(path);
  if (r->call == static_cast<uint16_t>(wire::Call::kExecve)) {
    *what = "execve: run " + path + (r->truncated ? "..." : "") + " (the kernel refused to execute it)";
    *hint = !absolute            ? std::string()
            : refused != nullptr ? policy::ExecuteHint(path, *refused)
                                 : policy::RefusalHint(policy::Refusal::kExecute, path);
    return true;
  }
  // A refused record's class names its rule; a refused workspace path can
  // only be a change in a read-only workspace.
  // The preload knows a denied rule, not its source: a refused hard-linked
  // or special file is named here, with what to do about it.
  const policy::RefusedEntry* entry = nullptr;
  if (cls == policy::PathClass::kDenied && absolute && refused != nullptr) {
    auto it = std::lower_bound(refused->begin(), refused->end(), path,
                               [](const auto& a, const auto& b) { return PathOf(a) < PathOf(b); });
    if (it != refused->end() && it->path == path) entry = &*it;
  }
  if (entry != nullptr) {
    *what = std::string(wire::CallName(r->call)) + ": " + (mutate ? "change " : "read ") + path +
            " (" + entry->Source() + ")";
    *hint = policy::RefusalHint(policy::FromRule(entry->Source()), path);
    return true;
  }
  const char* rule = cls == policy::PathClass::kHeldFd
                         ? "the descriptor it names is not open for that access"
                     : cls == policy::PathClass::kMalformed
                         ? "malformed path"
                         : policy::AdmitClass(cls, mutate ? policy::AdmitOp::kMutate
                                                          : policy::AdmitOp::kRead,
                                              false)
                               .reason;
  *what = std::string(wire::CallName(r->call)) + ": " + (mutate ? "change " : "read ") + path +
          (r->truncated ? "..." : "") + " (" + rule + ")";
  hint->clear();
  // unlink, remove, rename: a change of the name, granted by its directory.
  const auto call = static_cast<wire::Call>(r->call);
  const bool name_change = call == wire::Call::kUnlink || call == wire::Call::kUnlinkat ||
                           call == wire::Call::kRemove || call == wire::Call::kRename ||
                           call == wire::Call::kRenameat || call == wire::Call::kRenameat2;
  const policy::Refusal refusal = policy::FromAdmission(cls, mutate);
  if (absolute) {
    *hint =
        name_change ? policy::NameChangeHint(refusal, path) : policy::RefusalHint(refusal, path);
  }
  return true;
}

bool CheckInPid(const void* data, size_t len, int32_t* pid) {
  const wire::Report* r = AsReport(data, len);
  if (r == nullptr || r->call != static_cast<uint16_t>(wire::Call::kCheckIn)) return false;
  *pid = r->pid;
  return true;
}

bool ReportTally::Add(const void* data, size_t len) {
  const wire::Report* r = AsReport(data, len);
  if (r == nullptr) {
    ++malformed_;
    return false;
  }
  if (r->call == static_cast<uint16_t>(wire::Call::kCheckIn)) {
    ++checkins_;  // not a call (preload_checkin.h decides what it means)
    return true;
  }
  Process& p = procs_[{r->pid, r->image}];
  p.dropped = std::max(p.dropped, r->dropped);
  if (r->call == static_cast<uint16_t>(wire::Call::kExit)) {
    p.exited = true;
    p.total = r->seq;
    return true;
  }
  ++p.received;
  ++received_;
  if (r->verdict == static_cast<uint8_t>(wire::ReportVerdict::kRefused)) ++refused_;
  return true;
}

uint64_t ReportTally::dropped() const {
  uint64_t d = 0;
  for (const auto& [key, p] : procs_) d += p.dropped;
  return d;
}

uint64_t ReportTally::unaccounted() const {
  uint64_t u = 0;
  for (const auto& [key, p] : procs_) {
    if (p.exited && p.total > p.received + p.dropped) u += p.total - p.received - p.dropped;
  }
  return u;
}

std::string ReportTally::Summary() const {
  size_t exited = 0;
  for (const auto& [key, p] : procs_) exited += p.exited;
  return "preload reports: " + std::to_string(received_) + " received (" +
         std::to_string(refused_) + " refused), " + std::to_string(dropped()) +
         " dropped by the tool, " + std::to_string(unaccounted()) + " unaccounted, " +
         std::to_string(malformed_) + " malformed, " + std::to_string(procs_.size()) +
         " processes (" + std::to_string(exited) + " reported exit)";
}

}  // namespace cordon::supervisor
