#include "tools/policy_reload_command.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>

#include "base/fd.h"
#include "policy/json_fields.h"
#include "supervisor/audit/run_records.h"
#include "supervisor/control_socket.h"
#include "supervisor/launcher.h"

namespace cordon::tools {
namespace {

struct ReloadArgs {
  std::string run;
  std::string file;
  bool hold = false;
};

int Fail(const std::string& msg) {
  std::fprintf(stderr, "cordon policy reload: %s\n", msg.c_str());
  return supervisor::kExitCordonError;
}

int Reload(const ReloadArgs& a) {
  // Everything the caller gave is checked before the run hears of it: a
  // bad request raises no guard and changes nothing.
  Fd file(::open(a.file.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY));
  if (!file) return Fail(a.file + ": " + std::strerror(errno));
  struct stat st;
  if (::fstat(file.get(), &st) != 0 || !S_ISREG(st.st_mode)) {
    return Fail(a.file + ": not a regular file");
  }
  auto dir = supervisor::OpenRunDir(a.run);
  if (!dir) return Fail(Describe(dir.error()) + " (cordon runs list shows the runs)");
  if (::fstatat(dir->get(), supervisor::kControlSocketName, &st, AT_SYMLINK_NOFOLLOW) != 0) {
    return Fail("run " + a.run + " is not running (it has no control socket)");
  }
  if (!S_ISSOCK(st.st_mode)) return Fail("run " + a.run + ": its control socket is not a socket");
  // The socket must be the caller's own: a policy goes to no one else.
  if (st.st_uid != ::getuid()) {
    return Fail("run " + a.run + "'s control socket belongs to uid " + std::to_string(st.st_uid) +
                ", not to you (uid " + std::to_string(::getuid()) + ")");
  }
  auto conn = supervisor::ConnectControl(dir->get());
  if (!conn) {
    if (conn.error().err == ECONNREFUSED) {
      return Fail("run " + a.run + " is not running (its cordon has gone)");
    }
    return Fail("run " + a.run + ": " + Describe(conn.error()));
  }
  Status sent = supervisor::SendControl(
      conn->get(), {{"type", "reload"}, {"file", a.file}, {"hold", a.hold}}, {file.get()});
  if (!sent) return Fail("run " + a.run + ": " + Describe(sent.error()));
  for (;;) {
    auto msg = supervisor::RecvControl(conn->get());
    if (!msg) return Fail("run " + a.run + " ended the request: " + Describe(msg.error()));
    const std::string type = msg->body["type"].get<std::string>();
    const std::string text = policy::StringField(msg->body, "message");
    if (type == "holding") {
      std::printf("holding: %s (press Enter to go on)\n", text.c_str());
      std::fflush(stdout);
      std::string line;
      std::getline(std::cin, line);
      (void)supervisor::SendControl(conn->get(), {{"type", "go"}});
      continue;
    }
    // What building the new policy warned of, before the outcome.
    if (auto w = msg->body.find("warnings"); w != msg->body.end() && w->is_array()) {
      for (const auto& line : *w) {
        if (line.is_string()) std::fprintf(stderr, "cordon: %s\n", line.get<std::string>().c_str());
      }
    }
    if (type == "result" && policy::BoolField(msg->body, "ok")) {
      std::printf("%s\n", text.c_str());
      return 0;
    }
    return Fail(text.empty() ? "refused" : text);
  }
}

}  // namespace

std::string ReloadLine(const supervisor::ToolFilterOptions& decided) {
  const std::string fixed =
      "; the kernel layers stay the launch's, so a reload needing more (a new path, a "
      "removed denial, a network mode change or a wider web grant, a sensitive.delete or links "
      "change) is refused: start a new run";
  if (!supervisor::DecidesEveryChange(decided)) {
    return "cordon policy reload --run RUN FILE may not change the path rules of such a run "
           "(the kernel takes some writes and deletes, and no supervisor would see them)" +
           fixed;
  }
  return "cordon policy reload --run RUN FILE may tighten what the supervisor decides (writes, "
         "creations, deletes, renames, metadata, protected paths, deny globs); reads the kernel "
         "grants stay granted" +
         fixed;
}

void AddPolicyReload(CLI::App* policy_cmd, int& exit_code) {
  static ReloadArgs args;
  CLI::App* reload = policy_cmd->add_subcommand(
      "reload",
      "replace what a running cordon's supervisor decides by with FILE (docs/policy.md, "
      "\"Reloading a running tool's policy\")");
  reload->add_option("--run", args.run, "the run (cordon runs list)")->required();
  reload->add_option("file", args.file, "the new policy file")->required();
  // Holds the guard (every decision refuses) until Enter: for tests and
  // for seeing the window. It can only refuse more, never grant.
  reload->add_flag("--hold", args.hold)->group("");
  reload->callback([&exit_code] { exit_code = Reload(args); });
}

}  // namespace cordon::tools
