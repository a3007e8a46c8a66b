#include "tools/grep_command.h"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <future>
#include <memory>

#include "base/fd.h"
#include "policy/path_admission.h"
#include "policy/policy.h"
#include "supervisor/exec/tool_pin.h"
#include "supervisor/launcher.h"
#include "supervisor/load/search_ignores.h"
#include "supervisor/walk/tree_check.h"
#include "tools/run_command.h"

extern char** environ;

namespace cordon::tools {
namespace {

// The one ripgrep cordon runs: resolved here, never through the caller's PATH.
constexpr const char* kRipgrep = "/usr/bin/rg";
constexpr int kExitCordonError = supervisor::kExitCordonError;

struct SearchOptions {
  RunOptions run;
  RipgrepOutput output;
  std::vector<std::string> args;  // PATTERN [PATH]...
};

bool StartsWith(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

// A user path once admitted: `rel` for the tree check (relative to the
// workspace, "." for the workspace itself) and `arg` for ripgrep, which
// prints paths as it was given them: the user's own spelling, which names
// the same file from the workspace, ripgrep's cwd (a raw ".." is refused,
// so "." and empty segments are all that `rel` drops).
struct Root {
  std::string rel, arg;
};

// ripgrep's exec waits for the tree check's verdict (ExecAdmission).
class TreeCheckGate final : public supervisor::ExecAdmission {
 public:
  explicit TreeCheckGate(std::shared_future<supervisor::TreeVerdict> tree)
      : tree_(std::move(tree)) {}
  Status Admit() override {
    const supervisor::TreeVerdict& v = tree_.get();
    if (!v.ok) return SysError{EACCES, "tree check", v.reason};
    return Ok();
  }

 private:
  std::shared_future<supervisor::TreeVerdict> tree_;
};

// Admits a user path, or logs the refusal. A relative path is the
// workspace's, whatever cordon's own cwd: it is a tool argument, and the
// tool runs in the workspace (as `cordon run -- rg PATTERN PATH` would).
bool AdmitRoot(const policy::AdmissionTable& table, const std::string& workspace,
               const std::string& path, Root& out) {
  if (policy::HasParentSegment(path)) {
    spdlog::error("search path '{}' refused: raw '..' segment", path);
    return false;
  }
  policy::Admission a = policy::AdmitPath(table, policy::AdmitOp::kRead, path, workspace.c_str());
  if (a.verdict != policy::AdmitVerdict::kAdmit || a.cls != policy::PathClass::kWorkspace) {
    spdlog::error("search path '{}' refused: {}", path,
                  a.verdict == policy::AdmitVerdict::kAdmit ? "not inside the workspace" : a.reason);
    return false;
  }
  char normal[policy::kAdmissionMaxPath];
  long n = policy::NormalizePath(path, workspace.c_str(), normal);
  if (n < 0) return false;
  std::string abs(normal, static_cast<std::size_t>(n));
  // Only for the message: a caller used to cwd-relative paths learns where
  // this one was looked for. The tree check still decides what is searched.
  struct stat st;
  if (::lstat(abs.c_str(), &st) != 0 && errno == ENOENT) {
    spdlog::error("search path '{}' refused: no such file or directory in the workspace {}", path,
                  workspace);
    return false;
  }
  out.rel = abs.size() == workspace.size() ? "." : abs.substr(workspace.size() + 1);
  out.arg = path;
  return true;
}

int Search(SearchKind kind, SearchOptions& o) {
  policy::Policy p;
  if (!BuildPolicy(o.run, p)) return kExitCordonError;
  supervisor::AddSearchIgnores(p);

  const std::string& pattern = o.args.front();
  policy::AdmissionTable table;
  if (!table.SetWorkspace(p.workspace, policy::Access::kReadOnly)) {
    spdlog::error("workspace {} cannot be used for path admission", p.workspace);
    return kExitCordonError;
  }
  std::vector<std::string> rels, args;
  for (std::size_t i = 1; i < o.args.size(); ++i) {
    Root root;
    if (!AdmitRoot(table, p.workspace, o.args[i], root)) return kExitCordonError;
    rels.push_back(std::move(root.rel));
    args.push_back(std::move(root.arg));
  }
  if (rels.empty()) rels.emplace_back(".");

  // The tree check walks the tree while ripgrep is pinned and its sandbox
  // built; the supervisor holds ripgrep's exec until the verdict is in
  // (exec_gate), so ripgrep reads nothing of a tree the check refuses, and
  // a refused tree is refused whole rather than searched in part.
  Fd ws(::open(p.workspace.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!ws) {
    spdlog::error("workspace {}: cannot open", p.workspace);
    return kExitCordonError;
  }
  supervisor::TreeLimits limits{p.limits.max_tree_entries, p.limits.max_tree_depth};
  std::shared_future<supervisor::TreeVerdict> tree =
      std::async(std::launch::async, [ws = std::move(ws), rels, limits] {
        return supervisor::CheckTrees(ws.get(), rels, limits);
      }).share();
  // Whatever happens below, the verdict decides a refused tree's status.
  auto finish = [&tree](int status) {
    const supervisor::TreeVerdict& v = tree.get();
    if (!v.ok) {
      spdlog::error("{}", v.reason);
      return kExitCordonError;
    }
    spdlog::info("tree check: {} entries, {} walker(s)", v.entries, v.walkers);
    return status;
  };
  o.run.exec_gate = std::make_shared<TreeCheckGate>(tree);

  // Pin ripgrep now: it is the only binary this run may execute, and the
  // identity checked just before launch is the one taken here.
  auto pin = supervisor::MakePin("rg", kRipgrep);
  if (!pin) {
    spdlog::error("ripgrep: {}", Describe(pin.error()));
    return finish(kExitCordonError);
  }
  std::string rg_path = pin->path;
  bool pinned = false;
  for (const policy::ToolPin& t : p.tools) pinned = pinned || t.path == rg_path;
  if (!pinned) p.tools.push_back(std::move(pin.value()));

  std::vector<std::string> argv = RipgrepTemplate(kind, rg_path, pattern, o.output, args);
  std::vector<std::string> caller;
  for (char** e = environ; e && *e; ++e) caller.emplace_back(*e);
  std::vector<std::string> env = ScrubbedEnv(caller);
  if (!o.run.audit.empty() || spdlog::should_log(spdlog::level::info)) {
    // The template with its two holes, and the version of the binary pinned
    // above (the session header records the filled-in argv besides).
    std::vector<std::string> tmpl =
        RipgrepTemplate(kind, rg_path, kPatternHole, o.output, {kPathsHole});
    std::string version = RipgrepVersion(o.run, p, rg_path, env);
    std::string line;
    for (const auto& a : tmpl) line += (line.empty() ? "" : " ") + a;
    spdlog::info("ripgrep template ({}): {}", version, line);
    o.run.audit_header["search"] = {{"command", kind == SearchKind::kGrep ? "grep" : "glob"},
                                    {"ripgrep_template", tmpl},
                                    {"ripgrep_version", version}};
  }
  return finish(RunTool(o.run, p, std::move(argv), &env));
}

void Register(CLI::App& app, int& exit_code, SearchKind kind) {
  auto* opts = new SearchOptions;  // lives as long as the process
  bool grep = kind == SearchKind::kGrep;
  CLI::App* cmd = app.add_subcommand(
      grep ? "grep" : "glob",
      grep ? "search file contents with ripgrep, confined to the workspace"
           : "list workspace files matching a glob with ripgrep, confined to the workspace");
  AddRunOptions(cmd, opts->run);
  if (grep) {
    auto* json = cmd->add_flag("--json", opts->output.json, "ripgrep's JSON lines output");
    cmd->add_flag("--count", opts->output.count, "one PATH:COUNT line per matching file (rg -c)")
        ->excludes(json);
  }
  cmd->add_option("args", opts->args, grep ? "-- PATTERN [PATH]..." : "-- GLOB [PATH]...")
      ->required();
  cmd->callback([opts, &exit_code, kind] { exit_code = Search(kind, *opts); });
}

}  // namespace

std::vector<std::string> RipgrepTemplate(SearchKind kind, const std::string& rg_path,
                                         const std::string& pattern, const RipgrepOutput& output,
                                         const std::vector<std::string>& roots) {
  // --no-config: no RIPGREP_CONFIG_PATH flags; --no-follow: links stay links
  // (the tree check has refused them anyway); --no-pre: no preprocessor
  // program, whatever a config might have said.
  std::vector<std::string> argv = {rg_path, "--no-config", "--no-follow", "--no-pre"};
  if (kind == SearchKind::kGrep) {
    if (output.json) argv.emplace_back("--json");
    if (output.count) argv.emplace_back("--count");
    argv.insert(argv.end(), {"-e", pattern});
  } else {
    argv.insert(argv.end(), {"--files", "--glob", pattern});
  }
  argv.emplace_back("--");
  argv.insert(argv.end(), roots.begin(), roots.end());
  return argv;
}

std::vector<std::string> ScrubbedEnv(const std::vector<std::string>& caller) {
  std::vector<std::string> env;
  for (const std::string& e : caller) {
    if (StartsWith(e, "PATH=") || StartsWith(e, "HOME=") || StartsWith(e, "LANG=") ||
        StartsWith(e, "LC_") || StartsWith(e, "TERM=")) {
      env.push_back(e);
    }
  }
  return env;
}

std::string RipgrepVersion(const RunOptions& run, const policy::Policy& p,
                           const std::string& rg_path, const std::vector<std::string>& env) {
  // A bypassed run has no fence to ask in: RunTool would exec ripgrep in
  // place of cordon (RunUnconfined), and the search would never run.
  if (!p.sandbox_enabled) return "not asked: sandbox bypassed";
  // The probe's own fence: the search's policy with nothing writable, no
  // private TMPDIR, no audit session, no approvals and no tree gate.
  RunOptions probe = run;
  probe.audit.clear();
  probe.audit_header = nlohmann::json::object();
  probe.exec_gate = nullptr;
  probe.session.clear();
  probe.approvals = "deny";
  policy::Policy fence = p;
  fence.profile = policy::Profile::kReadOnly;
  fence.private_tmp = false;
  for (auto* rules : {&fence.paths, &fence.base_paths}) {
    for (policy::PathRule& r : *rules) {
      if (r.access == policy::Access::kReadWrite) r.access = policy::Access::kReadOnly;
    }
  }
  // ripgrep's stdout is a pipe that never blocks it (a pipe holds far more
  // than a version line).
  int pipefd[2];
  if (::pipe2(pipefd, O_CLOEXEC | O_NONBLOCK) != 0) return {};
  Fd rd(pipefd[0]), wr(pipefd[1]);
  probe.stdout_fd = wr.get();
  spdlog::level::level_enum level = spdlog::get_level();
  spdlog::set_level(std::max(level, spdlog::level::warn));
  int status = RunTool(probe, fence, {rg_path, "--version"}, &env);
  spdlog::set_level(level);
  wr.reset();
  if (status != 0) {
    spdlog::warn("ripgrep --version exited with status {}: no version recorded", status);
    return {};
  }
  std::string out;
  char buf[512];
  ssize_t n;
  while ((n = ::read(rd.get(), buf, sizeof buf)) > 0) out.append(buf, static_cast<size_t>(n));
  return out.substr(0, out.find('\n'));
}

void RegisterGrep(CLI::App& app, int& exit_code) {
  Register(app, exit_code, SearchKind::kGrep);
  Register(app, exit_code, SearchKind::kGlob);
}

}  // namespace cordon::tools
