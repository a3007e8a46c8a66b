#include "tools/run_services.h"

#include <fcntl.h>
#include <limits.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cmath>
#include <ctime>

#include "policy/journal_change.h"
#include "supervisor/approvals/make_approver.h"
#include "supervisor/emulator.h"
#include "supervisor/journal/journal.h"
#include "supervisor/notify_loop.h"
#include "supervisor/owned_dir.h"
#include "tools/run_command.h"

namespace cordon::tools {
namespace {

std::string Absolute(const std::string& path) {
  if (path.empty() || path[0] == '/') return path;
  char cwd[PATH_MAX];
  if (::getcwd(cwd, sizeof cwd) == nullptr) return path;
  return std::string(cwd) + "/" + path;
}

// --events FD|FILE: a number is an fd cordon inherited (kept from the
// tool), anything else a file appended to.
bool OpenEvents(const std::string& spec, Fd& out) {
  if (spec.empty()) return true;
  if (spec.find_first_not_of("0123456789") == std::string::npos && spec.size() < 10) {
    const int fd = std::stoi(spec);
    if (::fcntl(fd, F_GETFD) < 0) {
      spdlog::error("--events {}: no such open file descriptor", spec);
      return false;
    }
    out = Fd(::fcntl(fd, F_DUPFD_CLOEXEC, 3));
  } else {
    out = Fd(::open(spec.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600));
  }
  if (!out) {
    spdlog::error("--events {}: {}", spec, std::strerror(errno));
    return false;
  }
  return true;
}

void Emit(const RunServices& s, nlohmann::json event) {
  if (!s.events) return;
  const std::string line =
      event.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  if (Status w = supervisor::WriteAll(s.events.get(), line); !w) {
    spdlog::warn("--events: {}", Describe(w.error()));
  }
}

// A decision record's result. A refusal is the supervisor's (a rule named,
// or permission denied); any other errno is the call's own failure, as the
// kernel would have answered it bare (opening /dev/tty without a terminal,
// a file that is not there) and is not counted as a refusal.
const char* ResultOf(const supervisor::Reply& rep) {
  if (rep.bypassed) return "bypassed";
  if (rep.error == 0) return "allowed";
  const bool refused = rep.error == EACCES || rep.error == EPERM || !rep.why.empty();
  return refused ? "refused" : "failed";
}

class AuditLogObserver final : public supervisor::RunObserver {
 public:
  explicit AuditLogObserver(std::shared_ptr<supervisor::AuditLog> log) : log_(std::move(log)) {}

  void Decided(const supervisor::Request& r, const supervisor::Reply& rep) override {
    nlohmann::json f = {
        {"pid", r.tid}, {"syscall", supervisor::SyscallName(r.nr)}, {"result", ResultOf(rep)}};
    if (rep.error != 0) f["errno"] = rep.error;
    if (!rep.why.empty()) f["why"] = rep.why;
    Append("decision", std::move(f));
  }

  void Changed(const supervisor::ChangeEvent& c) override {
    nlohmann::json f = {{"change", c.kind}, {"path", policy::EscapeBytes(c.path)}, {"kept", c.kept}};
    if (!c.to.empty()) f["to"] = policy::EscapeBytes(c.to);
    Append("change", std::move(f));
  }

  void Proxied(const supervisor::ProxyEvent& e) override {
    nlohmann::json f = {{"method", e.method},   {"host", e.host},
                        {"port", e.port},       {"address", e.address},
                        {"bytes_up", e.bytes_up}, {"bytes_down", e.bytes_down},
                        {"result", e.allowed ? "allowed" : "refused"}};
    if (e.status != 0) f["status"] = e.status;
    if (!e.reason.empty()) f["why"] = e.reason;
    Append("web", std::move(f));
  }

 private:
  void Append(const char* kind, nlohmann::json f) {
    if (!log_->Append(kind, std::move(f))) spdlog::warn("audit log append failed");
  }
  std::shared_ptr<supervisor::AuditLog> log_;
};

// Subscribes to Landlock's records for this run: what the header says.
std::string OpenLandlockRecords(RunServices& s, int landlock_abi) {
  if (landlock_abi == 0) return "not attached: the run has no Landlock layer";
  if (landlock_abi < 7) {
    return "not attached: Landlock ABI " + std::to_string(landlock_abi) + " logs no denials (7 does)";
  }
  std::string why;
  s.landlock = supervisor::LandlockAuditReader::Open(s.run_id, &why);
  if (!s.landlock) {
    spdlog::info("Landlock's own denial records are not attached to this run's log: {}", why);
    return "not attached: " + why;
  }
  return "attached";
}

// The kernel's account of the run's Landlock denials: a `landlock` record
// each, and the count and whether it is whole in the `end` record.
void AttachLandlockRecords(RunServices& s, nlohmann::json& end) {
  supervisor::LandlockAuditReader::Finished f =
      s.landlock->Finish(std::chrono::milliseconds(1000));
  s.landlock.reset();
  const policy::LandlockAccount& a = f.account;
  for (const policy::LandlockDenial& d : a.denials) {
    nlohmann::json object = nlohmann::json::object();
    for (const auto& [k, v] : d.object) object[k] = policy::EscapeBytes(v);
    nlohmann::json r = {{"blockers", d.blockers}, {"object", std::move(object)}};
    if (d.pid != 0) r["pid"] = d.pid;
    if (!d.comm.empty()) r["comm"] = policy::EscapeBytes(d.comm);
    if (!d.exe.empty()) r["exe"] = policy::EscapeBytes(d.exe);
    if (int nr = 0; !d.syscall.empty() && std::from_chars(d.syscall.data(), d.syscall.data() + d.syscall.size(), nr).ec == std::errc()) {
      r["syscall"] = supervisor::SyscallName(nr);
    }
    const auto* path = r["object"].contains("path") ? &r["object"]["path"] : nullptr;
    spdlog::info("the kernel refused ({}): {}{}", d.blockers,
                 path != nullptr ? path->get<std::string>() : r["object"].dump(),
                 d.comm.empty() ? std::string() : " (" + d.comm + ")");
    if (!s.audit->Append("landlock", std::move(r)).ok()) spdlog::warn("audit log append failed");
  }
  nlohmann::json account = {{"attached", a.denials.size()}, {"complete", f.complete}};
  if (a.kernel_denials) account["kernel_count"] = *a.kernel_denials;
  if (a.dropped > 0) account["dropped"] = a.dropped;
  if (a.ambiguous) {
    account["complete"] = false;
    account["why"] = "two Landlock domains named the tool's pid; none is attached";
  } else if (!f.complete) {
    account["why"] = f.incomplete_why;
  }
  if (!account["complete"].get<bool>()) {
    spdlog::info("Landlock's records of this run may be incomplete: {}",
                 account["why"].get<std::string>());
  }
  end["landlock"] = std::move(account);
}

}  // namespace

bool OpenRunServices(const RunOptions& o, const policy::Policy& p, const std::string& rung,
                     int landlock_abi, const std::vector<std::string>& argv, RunServices& out) {
  if (!(o.approval_timeout_s > 0) || o.approval_timeout_s > 86400 ||
      !std::isfinite(o.approval_timeout_s)) {
    spdlog::error("--approval-timeout must be between 0 and 86400 seconds");
    return false;
  }
  // Rounded to the nearest millisecond (the value is positive and bounded
  // above); no libm call, so the binary does not load libm at every launch.
  out.approval_timeout =
      std::chrono::milliseconds(static_cast<int64_t>(o.approval_timeout_s * 1000 + 0.5));
  std::string error;
  std::unique_ptr<supervisor::Approver> approver = supervisor::MakeApprover(o.approvals, &error);
  if (!approver) {
    spdlog::error("{}", error);
    return false;
  }
  out.approver = std::move(approver);
  if (!OpenEvents(o.events, out.events)) return false;
  out.run_id = supervisor::NewRunId();
  out.record.meta.id = out.run_id;
  out.record.meta.workspace = p.workspace;
  out.record.meta.started_s = std::time(nullptr);
  out.record.meta.argv = argv;
  struct stat ws {};
  if (::stat(p.workspace.c_str(), &ws) == 0) {
    out.record.meta.workspace_dev = ws.st_dev;
    out.record.meta.workspace_ino = ws.st_ino;
  }
  const bool no_log = o.audit == "none";
  if (!no_log) {
    // The run's record, where `cordon runs` and `audit verify` find it. A
    // machine with no state home still runs, and says what it lacks.
    auto dir = supervisor::CreateRunDir(out.run_id);
    if (dir) {
      out.run_dir = std::move(dir.value());
    } else if (o.audit.empty()) {
      spdlog::warn("this run has no audit log: {} ({}); --audit FILE names one",
                   supervisor::RunsRoot(), Describe(dir.error()));
    } else {
      spdlog::warn("run {}: no run record ({}): --audit {} cannot be anchored against truncation",
                   out.run_id, Describe(dir.error()), o.audit);
    }
  }
  const std::string log_path = no_log          ? std::string()
                               : !o.audit.empty() ? Absolute(o.audit)
                               : out.run_dir      ? out.run_dir->path + "/audit.jsonl"
                                                  : std::string();
  if (!log_path.empty()) {
    // A log the user named is fsync'd at the end; the default one is not.
    auto log = supervisor::AuditLog::Open(log_path, /*sync=*/!o.audit.empty());
    if (!log) {
      spdlog::error("--audit {}: {}", log_path, Describe(log.error()));
      return false;
    }
    out.audit = std::move(log.value());
    nlohmann::json header = policy::SessionHeader(p, rung, argv);
    header.update(o.audit_header);
    header["run"] = out.run_id;
    header["approvals"] = out.approver->Name();
    header["approval_timeout_ms"] = out.approval_timeout.count();
    header["landlock_records"] = OpenLandlockRecords(out, landlock_abi);
    if (!out.audit->Append("header", std::move(header)).ok()) {
      spdlog::error("--audit {}: cannot write the session header", log_path);
      return false;
    }
    out.approver->SetAuditLog(out.audit);
    out.record.audit_path = log_path;
  }
  if (out.run_dir) {
    if (Status s = supervisor::WriteRunRecord(*out.run_dir, out.record); !s) {
      spdlog::error("run record {}: {}", out.run_dir->path, Describe(s.error()));
      return false;
    }
  }
  Emit(out, {{"event", "run.start"},
             {"run", out.run_id},
             {"workspace", policy::EscapeBytes(p.workspace)},
             {"audit", log_path.empty() ? nlohmann::json() : nlohmann::json(policy::EscapeBytes(log_path))}});
  return true;
}

void DenyRunRecords(const RunServices& s, policy::Policy& p) {
  if (s.run_dir) {
    // Unlisted: a grant of a directory above does not let the tool list
    // the runs (policy/fs_plan.h).
    // The realpath (OwnedDir's), as the ruleset opens it.
    const std::string& dir = s.run_dir->path;
    p.paths.push_back(policy::PathRule::DeniedUnlisted(dir.substr(0, dir.rfind('/')), "the run records"));
  }
  if (s.audit && !s.record.audit_path.empty() &&
      (!s.run_dir || s.record.audit_path.rfind(s.run_dir->path + "/", 0) != 0)) {
    p.paths.push_back({s.record.audit_path, policy::Access::kDenied, false, "the run's audit log"});
  }
}

std::shared_ptr<supervisor::RunObserver> AuditObserver(const RunServices& s) {
  if (!s.audit) return nullptr;
  return std::make_shared<AuditLogObserver>(s.audit);
}

bool CloseRunServices(RunServices& s, int exit_status, bool recoverable) {
  if (s.approver) s.approver->CancelAll();
  bool ok = true;
  if (s.audit) {
    nlohmann::json end = {{"exit_status", exit_status}};
    if (s.landlock) AttachLandlockRecords(s, end);
    ok = s.audit->Append("end", std::move(end)).ok();
    Status closed = s.audit->Close();
    if (!ok || !closed.ok()) {
      spdlog::error("--audit {}: the log could not be completed", s.audit->path());
      ok = false;
    } else {
      s.record.anchor = s.audit->Anchor();
    }
  }
  s.record.ended_s = std::time(nullptr);
  s.record.exit_status = exit_status;
  s.record.recoverable = recoverable;
  if (s.run_dir) {
    if (Status w = supervisor::WriteRunRecord(*s.run_dir, s.record); !w) {
      spdlog::error("run record {}: {}", s.run_dir->path, Describe(w.error()));
      ok = false;
    }
  }
  nlohmann::json end = {{"event", "run.end"}, {"run", s.run_id}, {"exit_status", exit_status}};
  if (!s.record.audit_path.empty()) end["audit"] = policy::EscapeBytes(s.record.audit_path);
  if (s.record.anchor) end["anchor"] = policy::AnchorJson(*s.record.anchor);
  Emit(s, std::move(end));
  return ok;
}

}  // namespace cordon::tools
