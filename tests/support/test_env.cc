#include "tests/support/test_env.h"

#include <dirent.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

namespace cordon::testing {
namespace {

}  // namespace

ScratchTree::ScratchTree() {
  const char* run_dir = std::getenv("CORDON_TEST_TMPDIR");
  std::string tmpl = std::string(run_dir ? run_dir : "/tmp") + "/cordon-test-XXXXXX";
  if (::mkdtemp(tmpl.data()) == nullptr) std::abort();
  root_ = tmpl;
  ::mkdir(ws().c_str(), 0755);
  ::mkdir(outside().c_str(), 0755);
}

ScratchTree::~ScratchTree() {
  std::string cmd = "chmod -R u+rwx '" + root_ + "' 2>/dev/null; rm -rf '" + root_ + "'";
  if (std::system(cmd.c_str()) != 0) {
  }
}

std::vector<std::string> CordonCommand(const std::string& bin) {
  std::vector<std::string> cmd;
  if (const char* l = std::getenv("CORDON_TEST_LAUNCHER"); l != nullptr && *l != '\0') {
    cmd.push_back(l);
  }
  cmd.push_back(bin);
  return cmd;
}

bool InContainerPass() {
  const char* l = std::getenv("CORDON_TEST_LAUNCHER");
  return l != nullptr && *l != '\0';
}

std::string CordonShellCommand() {
  std::string out;
  for (const auto& w : CordonCommand()) out += (out.empty() ? "'" : " '") + w + "'";
  return out;
}

[[noreturn]] void ExecArgv(std::vector<std::string> cmd, const std::vector<std::string>& args) {
  cmd.insert(cmd.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : cmd) argv.push_back(a.data());
  argv.push_back(nullptr);
  ::execv(argv[0], argv.data());
  _exit(112);
}

void ExecCordon(const std::vector<std::string>& args) { ExecArgv(CordonCommand(), args); }

namespace {
RunResult RunBinary(const char* bin, const std::vector<std::string>& args, const std::string& cwd,
                    const std::vector<std::string>& extra_env, const std::string& launcher);
}  // namespace

RunResult RunCordon(const std::vector<std::string>& args, const std::string& cwd,
                    const std::vector<std::string>& extra_env, const std::string& launcher) {
  return RunBinary(CORDON_BIN, args, cwd, extra_env, launcher);
}

RunResult RunCordonTestBuild(const std::vector<std::string>& args, const std::string& cwd,
                             const std::vector<std::string>& extra_env) {
  return RunBinary(CORDON_TESTHOOKS_BIN, args, cwd, extra_env, "");
}

namespace {
RunResult RunBinary(const char* bin, const std::vector<std::string>& args, const std::string& cwd,
                    const std::vector<std::string>& extra_env, const std::string& launcher) {
  int out[2], err[2];
  if (::pipe2(out, O_CLOEXEC) != 0 || ::pipe2(err, O_CLOEXEC) != 0) std::abort();
  pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(out[1], 1);
    ::dup2(err[1], 2);
    int devnull = ::open("/dev/null", O_RDONLY);
    ::dup2(devnull, 0);
    if (!cwd.empty() && ::chdir(cwd.c_str()) != 0) _exit(111);
    for (const auto& e : extra_env) ::putenv(const_cast<char*>(e.c_str()));
    ExecArgv(launcher.empty() ? CordonCommand(bin) : std::vector<std::string>{launcher, bin}, args);
  }
  ::close(out[1]);
  ::close(err[1]);
  RunResult r;
  // Read both pipes without deadlocking on a full one.
  pollfd fds[2] = {{out[0], POLLIN, 0}, {err[0], POLLIN, 0}};
  int open_count = 2;
  while (open_count > 0) {
    if (::poll(fds, 2, -1) < 0) break;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      char buf[4096];
      ssize_t n = ::read(fds[i].fd, buf, sizeof buf);
      if (n <= 0) {
        ::close(fds[i].fd);
        fds[i].fd = -1;
        --open_count;
      } else {
        (i == 0 ? r.out : r.err).append(buf, static_cast<size_t>(n));
      }
    }
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  r.status = WIFEXITED(status) ? WEXITSTATUS(status) : 1000 + WTERMSIG(status);
  return r;
}
}  // namespace

void WriteFile(const std::string& path, const std::string& content) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f << content;
  ASSERT_TRUE(f.good()) << path;
}

std::vector<std::string> GitTestEnv() {
  return {"GIT_AUTHOR_NAME=Tess Ter",    "GIT_AUTHOR_EMAIL=tess@example.org",
          "GIT_COMMITTER_NAME=Tess Ter", "GIT_COMMITTER_EMAIL=tess@example.org",
          "GIT_CONFIG_NOSYSTEM=1",       "HOME=/nonexistent"};
}

int Lines(const std::string& s) { return static_cast<int>(std::count(s.begin(), s.end(), '\n')); }

std::string ShOutput(const std::string& cmd, const std::vector<std::string>& env) {
  auto quoted = [](const std::string& w) {
    std::string q = "'";
    for (char c : w) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return q + "'";
  };
  std::string line = "env";
  for (const auto& e : env) line += " " + quoted(e);
  line += " sh -c " + quoted(cmd) + " 2>&1";
  FILE* f = ::popen(line.c_str(), "r");
  if (f == nullptr) return "<popen failed>";
  std::string out;
  char buf[512];
  while (size_t n = std::fread(buf, 1, sizeof buf, f)) out.append(buf, n);
  ::pclose(f);
  while (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

std::string ReadFile(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return "<missing>";
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

bool Exists(const std::string& path) {
  struct stat st;
  return ::lstat(path.c_str(), &st) == 0;
}

std::vector<std::string> ListDir(const std::string& dir) {
  std::vector<std::string> out;
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return out;
  while (dirent* e = ::readdir(d)) {
    if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0) {
      out.push_back(e->d_name);
    }
  }
  ::closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

std::string RunTmpdir(int cordon) {
  std::ifstream children("/proc/" + std::to_string(cordon) + "/task/" + std::to_string(cordon) +
                         "/children");
  int tool = 0;
  if (!(children >> tool)) return "";
  std::ifstream environ("/proc/" + std::to_string(tool) + "/environ");
  std::string var;
  while (std::getline(environ, var, '\0')) {
    if (var.rfind("TMPDIR=", 0) == 0) return var.substr(7);
  }
  return "";
}

std::string PrivateTmpPrefix() {
  return "/tmp/cordon-runs-" + std::to_string(::geteuid()) + "/run-";
}

std::string ProbeDir() {
  std::string p = PROBE_DYNAMIC;
  return p.substr(0, p.rfind('/'));
}

bool HavePython() { return ::access("/usr/bin/python3", X_OK) == 0; }

}  // namespace cordon::testing
