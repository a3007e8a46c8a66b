#include "tools/workspace_command.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cerrno>
#include <ctime>
#include <iostream>
#include <nlohmann/json.hpp>

#include "policy/policy_digest.h"
#include "policy/workspace_record.h"
#include "supervisor/launcher.h"
#include "supervisor/workspace_store.h"

namespace cordon::tools {
namespace {

constexpr int kExitBusy = 1;

std::string Iso8601(int64_t t) {
  std::time_t tt = static_cast<std::time_t>(t);
  std::tm tm{};
  char buf[32];
  if (::gmtime_r(&tt, &tm) == nullptr || std::strftime(buf, sizeof buf, "%FT%TZ", &tm) == 0) {
    return std::to_string(t);
  }
  return buf;
}

nlohmann::json RecordJson(const policy::WorkspaceRecord& r, const std::string& files) {
  return {{"session", r.session},       {"owner_uid", r.owner_uid},
          {"created", Iso8601(r.created)}, {"policy_digest", r.policy_digest},
          {"files", files}};
}

// Opens the store or logs why; the caller exits 125.
std::optional<supervisor::WorkspaceStore> OpenStore(const std::string& root) {
  Result<supervisor::WorkspaceStore> s = supervisor::WorkspaceStore::Open(root);
  if (!s) {
    spdlog::error("{}", Describe(s.error()));
    return std::nullopt;
  }
  return std::move(*s);
}

struct Args {
  std::string root;
  std::string session;
  bool wait = false;
};

void AddRoot(CLI::App* cmd, std::string& root) {
  cmd->add_option("--workspaces-root", root,
                  "where managed workspaces live (default ${XDG_STATE_HOME:-~/.local/state}/cordon)");
}

int Create(RunOptions& o) {
  if (o.session.empty()) {
    spdlog::error("workspace create needs --session ID");
    return supervisor::kExitCordonError;
  }
  policy::Policy p;
  if (!BuildPolicy(o, p)) return supervisor::kExitCordonError;
  auto store = OpenStore(o.workspaces_root);
  if (!store) return supervisor::kExitCordonError;
  Result<std::string> files = store->Create(o.session, policy::PolicyDigest(p), std::time(nullptr));
  if (!files) {
    spdlog::error("{}", Describe(files.error()));
    return supervisor::kExitCordonError;
  }
  std::cout << *files << "\n";
  return 0;
}

int List(const Args& a) {
  auto store = OpenStore(a.root);
  if (!store) return supervisor::kExitCordonError;
  for (const supervisor::ListedWorkspace& w : store->List()) {
    if (w.record) {
      std::cout << w.record->session << "\t" << Iso8601(w.record->created) << "\t" << w.dir
                << "/files\n";
    } else {
      std::cout << "-\t-\t" << w.dir << "\t(invalid: " << w.error << ")\n";
    }
  }
  return 0;
}

int Show(const Args& a) {
  auto store = OpenStore(a.root);
  if (!store) return supervisor::kExitCordonError;
  Result<policy::WorkspaceRecord> r = store->Load(a.session);
  if (!r) {
    spdlog::error("session {}: {}", a.session, Describe(r.error()));
    return supervisor::kExitCordonError;
  }
  std::cout << RecordJson(*r, store->FilesDir(a.session)).dump(2) << "\n";
  return 0;
}

int Retire(const Args& a) {
  auto store = OpenStore(a.root);
  if (!store) return supervisor::kExitCordonError;
  Result<supervisor::RemoveStats> r = store->Retire(a.session, a.wait);
  if (!r && r.error().err == EBUSY) {
    spdlog::error("{}; nothing removed (retry later, or pass --wait)", Describe(r.error()));
    return kExitBusy;
  }
  if (!r) {
    spdlog::error("session {}: {}", a.session, Describe(r.error()));
    return supervisor::kExitCordonError;
  }
  if (r->skipped_mounts > 0) {
    spdlog::error(
        "session {}: {} mount(s) inside the workspace were left in place; unmount them and retire "
        "again (the record is kept)",
        a.session, r->skipped_mounts);
    return kExitBusy;
  }
  return 0;
}

}  // namespace

std::string SessionFilesDir(const RunOptions& o, std::vector<std::string>& errors) {
  if (!policy::ValidSessionId(o.session)) {
    errors.push_back("--session " + o.session + ": must be 1-128 characters of [A-Za-z0-9._:@-]");
    return {};
  }
  Result<supervisor::WorkspaceStore> s = supervisor::WorkspaceStore::Open(o.workspaces_root);
  if (!s) {
    errors.push_back(Describe(s.error()));
    return {};
  }
  return s->FilesDir(o.session);
}

Fd AcquireSession(const RunOptions& o, const policy::Policy& p) {
  Result<supervisor::WorkspaceStore> s = supervisor::WorkspaceStore::Open(o.workspaces_root);
  if (!s) {
    spdlog::error("{}", Describe(s.error()));
    return Fd();
  }
  Result<Fd> lock = s->Acquire(o.session, policy::PolicyDigest(p));
  if (!lock) {
    spdlog::error("session {}: {}; nothing was run", o.session, Describe(lock.error()));
    return Fd();
  }
  return std::move(*lock);
}

void RegisterWorkspace(CLI::App& app, int& exit_code) {
  CLI::App* ws = app.add_subcommand("workspace", "managed per-session workspaces");
  ws->require_subcommand(1);
  auto* run_opts = new RunOptions;  // live as long as the process
  auto* args = new Args;

  CLI::App* create = ws->add_subcommand(
      "create", "create the session's private workspace for the policy the run options describe");
  AddRunOptions(create, *run_opts);
  create->callback([run_opts, &exit_code] { exit_code = Create(*run_opts); });

  CLI::App* list = ws->add_subcommand("list", "list the workspaces of this user");
  AddRoot(list, args->root);
  list->callback([args, &exit_code] { exit_code = List(*args); });

  CLI::App* show = ws->add_subcommand("show", "print a session's validated ownership record");
  AddRoot(show, args->root);
  show->add_option("session", args->session, "session id")->required();
  show->callback([args, &exit_code] { exit_code = Show(*args); });

  CLI::App* retire = ws->add_subcommand(
      "retire", "remove a session's workspace once no supervisor of the session runs");
  AddRoot(retire, args->root);
  retire->add_option("--session", args->session, "session id")->required();
  retire->add_flag("--wait", args->wait, "wait for running supervisors instead of refusing");
  retire->callback([args, &exit_code] { exit_code = Retire(*args); });
}

}  // namespace cordon::tools
