#include "tools/bypass.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "supervisor/audit/audit_log.h"
#include "supervisor/launcher.h"

extern char** environ;

namespace cordon::tools {

bool RecordBypass(const policy::Policy& p, const std::vector<std::string>& argv,
                  const std::string& audit, const nlohmann::json& header) {
  std::fprintf(stderr,
               "cordon: SANDBOX BYPASSED for this run (policy allowBypass): %s runs unconfined "
               "in %s\n",
               argv.empty() ? "?" : argv[0].c_str(), p.workspace.c_str());
  if (audit.empty()) return true;
  auto log = supervisor::AuditLog::Open(audit);
  if (!log) {
    std::fprintf(stderr, "cordon: --audit %s: %s\n", audit.c_str(), Describe(log.error()).c_str());
    return false;
  }
  nlohmann::json session = policy::SessionHeader(p, "bypassed", argv);
  session.update(header);
  bool ok = (*log)->Append("header", std::move(session)).ok() &&
            (*log)->Append("bypass", {{"argv", argv}, {"workspace", p.workspace}}).ok() &&
            (*log)->Close().ok();
  if (!ok) std::fprintf(stderr, "cordon: --audit %s: cannot record the bypass\n", audit.c_str());
  return ok;
}

int RunUnconfined(const policy::Policy& p, std::vector<std::string> argv, const std::string& audit,
                  const nlohmann::json& header, const std::vector<std::string>* env) {
  const char* path_env = std::getenv("PATH");
  std::string resolved = supervisor::ResolveCommand(argv[0], path_env ? path_env : "");
  if (resolved.empty()) {
    std::fprintf(stderr, "cordon: %s: command not found\n", argv[0].c_str());
    return supervisor::kExitNotFound;
  }
  if (!RecordBypass(p, argv, audit, header)) return supervisor::kExitCordonError;
  if (::chdir(p.workspace.c_str()) != 0) {
    std::fprintf(stderr, "cordon: workspace %s: %s\n", p.workspace.c_str(), std::strerror(errno));
    return supervisor::kExitCordonError;
  }
  std::vector<char*> cargv;
  for (auto& a : argv) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  std::vector<std::string> envs = env ? *env : std::vector<std::string>{};
  std::vector<char*> cenv;
  for (auto& e : envs) cenv.push_back(e.data());
  cenv.push_back(nullptr);
  std::fflush(nullptr);
  ::execve(resolved.c_str(), cargv.data(), env ? cenv.data() : environ);
  int err = errno;
  std::fprintf(stderr, "cordon: %s: %s\n", resolved.c_str(), std::strerror(err));
  return err == ENOENT ? supervisor::kExitNotFound : supervisor::kExitNotExecutable;
}

}  // namespace cordon::tools
