// Emulation fidelity (issue 28): a call the supervisor performs for the tool
// behaves exactly as the kernel would. Each case runs the same probe call
// (`probe sys`, tests/helpers/probe_sys.c) twice on identical trees: bare,
// and under `cordon run --profile workspace-write`; the exit status (the
// errno) and the state of every file involved (type, mode, owner, size,
// times) must be the same. For the dynamic and the static probe, on both
// rungs. cordon itself runs under umask 022 and every tree's times are set
// to a fixed past instant first, so "now" and "untouched" tell apart.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <functional>
#include <string>
#include <vector>

#include "tests/support/probe_test.h"
#include "tests/support/test_env.h"

extern char** environ;

namespace cordon::testing {
namespace {

constexpr time_t kSetupTime = 1000000000;  // every entry's times before the call

// A time as a class: the setup time, "now" (within the last ten minutes), or
// the value itself (one the call set).
std::string TimeClass(const timespec& t) {
  if (t.tv_sec == kSetupTime && t.tv_nsec == 0) return "setup";
  if (t.tv_sec > std::time(nullptr) - 600) return "now";
  return std::to_string(t.tv_sec) + "." + std::to_string(t.tv_nsec);
}

std::string EntryState(const std::string& path) {
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) return "<missing>";
  char mode[16];
  std::snprintf(mode, sizeof mode, "%06o", st.st_mode);
  std::string s = std::string("mode=") + mode + " uid=" + std::to_string(st.st_uid) +
                  " gid=" + std::to_string(st.st_gid) +
                  " nlink=" + std::to_string(st.st_nlink) + " mtime=" + TimeClass(st.st_mtim) +
                  " atime=" + TimeClass(st.st_atim);
  if (!S_ISDIR(st.st_mode)) s += " size=" + std::to_string(st.st_size);
  return s;
}

struct Case {
  const char* name;
  // Makes the tree in `dir` (empty, existing) before the call.
  std::function<void(const std::string& dir)> setup;
  std::vector<std::string> call;   // probe sys ARGS, paths relative to the tree
  std::vector<std::string> watch;  // entries compared after the call ("." too)
  // On the notify-all rung, a README-documented limit: the errno there
  // instead of the kernel's (the state is then not compared). -1: none.
  int notify_all_errno = -1;
};

void File(const std::string& p, const std::string& content = "data") { WriteFile(p, content); }
void Dir(const std::string& p, mode_t mode = 0755) {
  ASSERT_EQ(::mkdir(p.c_str(), mode), 0) << p;
  ASSERT_EQ(::chmod(p.c_str(), mode), 0) << p;
}
void Link(const std::string& target, const std::string& p) {
  ASSERT_EQ(::symlink(target.c_str(), p.c_str()), 0) << p;
}

// Every entry of the tree, and the tree itself, to the setup time.
void SetTimes(const std::string& dir, const std::vector<std::string>& names) {
  const timespec ts[2] = {{kSetupTime, 0}, {kSetupTime, 0}};
  for (const std::string& n : names) {
    (void)::utimensat(AT_FDCWD, (dir + "/" + n).c_str(), ts, AT_SYMLINK_NOFOLLOW);
  }
  (void)::utimensat(AT_FDCWD, dir.c_str(), ts, 0);
}

std::vector<Case> Cases() {
  auto none = [](const std::string&) {};
  auto f = [](const std::string& d) { File(d + "/f"); };
  auto fd = [](const std::string& d) {
    File(d + "/f");
    Dir(d + "/d");
  };
  auto dirs = [](const std::string& d) {
    Dir(d + "/d", 0755);
    Dir(d + "/e", 0700);
  };
  auto full = [](const std::string& d) {
    Dir(d + "/d");
    File(d + "/d/x");
    Dir(d + "/e");
  };
  auto link_to_f = [](const std::string& d) {
    File(d + "/f");
    Link("f", d + "/l");
  };
  return {
      // Trailing slashes: the kernel wants a directory there.
      {"open_creat_slash_missing", none, {"open", "nodir/", "wronly|creat", "644"}, {"nodir"}},
      {"open_creat_slash_on_file", f, {"open", "f/", "wronly|creat", "644"}, {"f"}},
      {"open_write_slash_on_file", f, {"open", "f/", "wronly"}, {"f"}},
      {"open_creat_slash_on_dir", fd, {"open", "d/", "wronly|creat", "644"}, {"d"}},
      {"mkdir_slash", none, {"mkdir", "d2/", "755"}, {"d2"}},
      {"mkdir_slash_on_file", f, {"mkdir", "f/", "755"}, {"f"}},
      {"unlink_slash_on_file", f, {"unlink", "f/"}, {"f"}},
      {"unlink_slash_missing", none, {"unlink", "nope/"}, {"nope"}},
      {"rename_file_slash_from", f, {"rename", "f/", "g"}, {"f", "g"}},
      {"rename_file_slash_to", f, {"rename", "f", "g/"}, {"f", "g"}},
      {"rename_dir_slashes", fd, {"rename", "d/", "e/"}, {"d", "e"}},
      {"mknod_slash", none, {"mknod", "n/", "644"}, {"n"}},
      {"symlink_slash", none, {"symlink", "x", "s/"}, {"s"}},
      {"link_slash_to", f, {"link", "f", "h/"}, {"f", "h"}},
      {"link_slash_from", f, {"link", "f/", "h"}, {"f", "h"}},
      // AT_SYMLINK_FOLLOW on a file that is no link (Python's os.link with
      // dir fds, test_posix.test_link_dir_fd): a plain hard link.
      {"linkat_follow_file", f, {"link", "f", "h", "follow"}, {"f", "h"}},
      {"linkat_follow_across_dirs", full, {"link", "d/x", "e/x", "follow"}, {"d/x", "e/x"}},
      {"truncate_slash", f, {"truncate", "f/"}, {"f"}},
      {"chmod_slash_on_file", f, {"chmod", "f/", "600"}, {"f"}},
      {"utimensat_slash_on_dir", fd, {"utimensat", "d/", "1234567890", "omit"}, {"d"}},
      // Open flags.
      {"open_excl_dangling_symlink",
       [](const std::string& d) { Link("nope", d + "/dang"); },
       {"open", "dang", "wronly|creat|excl", "644"},
       {"dang", "nope"}},
      {"open_directory_write", fd, {"open", "d", "wronly"}, {"d"}},
      {"open_directory_flag_on_file", f, {"open", "f", "wronly|directory"}, {"f"}},
      {"open_path_creat_missing", none, {"open", "new", "path|creat", "644"}, {"new"}},
      {"open_path_file", f, {"open", "f", "path"}, {"f"}},
      {"open_tmpfile", none, {"open", ".", "wronly|tmpfile", "600"}, {}},
      {"open_trunc", f, {"open", "f", "wronly|trunc"}, {"f"}},
      {"open_creat_existing_keeps_mode", f, {"open", "f", "wronly|creat", "600"}, {"f"}},
      {"open_creat_excl_existing", f, {"open", "f", "wronly|creat|excl", "600"}, {"f"}},
      // The tool's umask, alone.
      {"umask_open_creat", none, {"umask=002", "open", "new", "wronly|creat", "666"}, {"new"}},
      {"umask_mkdir", none, {"umask=002", "mkdir", "nd", "777"}, {"nd"}},
      {"umask_mknod", none, {"umask=002", "mknod", "nf", "666"}, {"nf"}},
      {"umask_077_open", none, {"umask=077", "open", "new", "wronly|creat", "666"}, {"new"}},
      // mkdir on an existing name.
      {"mkdir_existing_dir", fd, {"mkdir", "d", "700"}, {"d"}},
      {"mkdir_existing_file", f, {"mkdir", "f", "700"}, {"f"}},
      {"mkdir_existing_symlink", link_to_f, {"mkdir", "l", "700"}, {"l", "f"}},
      // Rename flags on directories.
      {"rename_noreplace_dirs", dirs, {"rename", "d", "e", "noreplace"}, {"d", "e"}},
      {"rename_exchange_dirs", dirs, {"rename", "d", "e", "exchange"}, {"d", "e"}},
      {"rename_dir_over_file", fd, {"rename", "d", "f"}, {"d", "f"}},
      {"rename_file_over_dir", fd, {"rename", "f", "d"}, {"d", "f"}},
      // A full directory: ENOTEMPTY, whatever the rules say of deleting it.
      {"rmdir_full_dir", full, {"rmdir", "d"}, {"d", "d/x"}},
      {"rename_dir_over_full_dir", full, {"rename", "e", "d"}, {"d", "d/x", "e"}},
      {"rename_noreplace_over_full_dir", full, {"rename", "e", "d", "noreplace"}, {"d", "e"}},
      {"exchange_with_full_dir", full, {"rename", "e", "d", "exchange"}, {"d", "e", "e/x"}},
      // Write-opens through a last-component link to a workspace file.
      {"open_write_through_link", link_to_f, {"open", "l", "wronly"}, {"l", "f"}},
      {"open_trunc_through_link", link_to_f, {"open", "l", "wronly|trunc"}, {"l", "f"}},
      {"open_creat_through_link", link_to_f, {"open", "l", "rdwr|creat", "600"}, {"l", "f"}},
      {"open_creat_excl_through_link", link_to_f, {"open", "l", "wronly|creat|excl", "600"},
       {"l", "f"}},
      {"open_creat_through_dangling_link",
       [](const std::string& d) { Link("nope", d + "/dang"); },
       {"umask=002", "open", "dang", "wronly|creat", "666"}, {"dang", "nope"}},
      {"open_write_through_dangling_link",
       [](const std::string& d) { Link("nope", d + "/dang"); }, {"open", "dang", "wronly"},
       {"dang", "nope"}},
      {"open_nofollow_link", link_to_f, {"open", "l", "wronly|nofollow"}, {"l", "f"}},
      {"open_creat_nofollow_link", link_to_f, {"open", "l", "wronly|creat|nofollow", "644"},
       {"l", "f"}},
      {"open_write_slash_through_link", link_to_f, {"open", "l/", "wronly"}, {"l", "f"}},
      {"open_creat_slash_through_link", link_to_f, {"open", "l/", "wronly|creat", "644"},
       {"l", "f"}},
      {"open_write_through_link_to_dir",
       [](const std::string& d) {
         Dir(d + "/d");
         Link("d", d + "/l");
       },
       {"open", "l", "wronly"}, {"l", "d"}},
      {"open_write_through_link_chain",
       [](const std::string& d) {
         File(d + "/f");
         Link("f", d + "/e");
         Link("e", d + "/l");
       },
       {"open", "l", "wronly|append"}, {"l", "e", "f"}},
      {"open_write_through_link_up",
       [](const std::string& d) {
         File(d + "/f");
         Dir(d + "/d");
         Link("../f", d + "/d/l");
       },
       {"open", "d/l", "wronly"}, {"d/l", "f"}},
      {"open_write_through_link_loop",
       [](const std::string& d) {
         Link("e", d + "/l");
         Link("l", d + "/e");
       },
       {"open", "l", "wronly|creat", "644"}, {"l", "e"}},
      // Times.
      {"utimensat_now_omit", f, {"utimensat", "f", "now", "omit"}, {"f"}},
      {"utimensat_omit_value", f, {"utimensat", "f", "omit", "1234567890"}, {"f"}},
      {"utimensat_omit_omit", f, {"utimensat", "f", "omit", "omit"}, {"f"}},
      {"utimensat_dir", fd, {"utimensat", "d", "1234567890", "1234567890"}, {"d"}},
      {"utimensat_dir_now", fd, {"utimensat", "d", "now", "now"}, {"d"}},
      {"futimens_dir", fd, {"futimens", "d", "1234567890", "omit"}, {"d"}},
      {"futimens_file", f, {"futimens", "f", "omit", "1234567890"}, {"f"}},
      {"utimensat_nofollow_symlink", link_to_f,
       {"utimensat", "l", "1234567890", "1234567890", "nofollow"}, {"l", "f"}},
      // Modes.
      {"fchmodat_nofollow_file", f, {"fchmodat", "f", "600", "nofollow"}, {"f"}},
      // notify-all: ADDFD cannot install an O_PATH fd, so glibc's O_PATH
      // open of the link (to find it is one) is refused (README, limits).
      {"fchmodat_nofollow_symlink", link_to_f, {"fchmodat", "l", "600", "nofollow"}, {"l", "f"},
       EACCES},
      {"fchmodat_nofollow_dir", fd, {"fchmodat", "d", "700", "nofollow"}, {"d"}},
      // S_ISGID on a directory: new entries take its group (test_os).
      {"chmod_setgid_dir", fd, {"chmod", "d", "2755"}, {"d"}},
      // AT_EMPTY_PATH on an O_PATH descriptor.
      {"chown_empty_path", f, {"chown-empty", "f"}, {"f"}},
      // notify-all: an O_PATH open gets a read-only fd there (README).
      {"utimens_null_path_opath_fd", f, {"utimens-empty", "f"}, {"f"}, 0},
  };
}

// The probe bare, as a child with no preload; its exit status.
int RunBare(const std::string& probe, const std::vector<std::string>& args) {
  std::vector<std::string> all = {probe};
  all.insert(all.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& a : all) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<char*> env;
  for (char** e = environ; *e != nullptr; ++e) {
    if (std::strncmp(*e, "LD_PRELOAD=", 11) != 0) env.push_back(*e);
  }
  env.push_back(nullptr);
  pid_t pid;
  if (::posix_spawn(&pid, argv[0], nullptr, nullptr, argv.data(), env.data()) != 0) return -1;
  int status = 0;
  if (::waitpid(pid, &status, 0) != pid) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

class FidelityTest : public ProbeTest {
 protected:
  void SetUp() override { old_umask_ = ::umask(022); }
  void TearDown() override { ::umask(old_umask_); }

  // The case's tree in `dir`, made afresh, with every time at the setup time.
  static void Make(const Case& c, const std::string& dir) {
    Dir(dir);
    c.setup(dir);
    std::vector<std::string> names = c.watch;
    names.insert(names.end(), {"d", "e", "f", "l", "dang"});
    SetTimes(dir, names);
  }

  static std::string State(const Case& c, const std::string& dir) {
    std::string s = ". " + EntryState(dir) + "\n";
    for (const std::string& n : c.watch) s += n + " " + EntryState(dir + "/" + n) + "\n";
    return s;
  }

  void RunCases();

  mode_t old_umask_ = 022;
};

// Every case, the same for cordon started as in a Docker container with the
// default seccomp profile (tests/helpers/container_launcher.c): no
// pidfd_getfd (the fd forms reach the tool's file through /proc/PID/fd) and
// no unshare (a creation's mode is put right after it).
TEST_P(FidelityTest, SameResultAndStateAsTheKernelInAContainer) {
  launcher_ = CONTAINER_LAUNCHER;
  RunCases();
}

TEST_P(FidelityTest, SameResultAndStateAsTheKernel) { RunCases(); }

void FidelityTest::RunCases() {
  const std::string probe = std::get<0>(GetParam());
  int n = 0;
  for (const Case& c : Cases()) {
    SCOPED_TRACE(c.name);
    const std::string tag = std::to_string(n++);
    const std::string bare = t_.Out("bare" + tag);
    const std::string ws = t_.Ws("c" + tag);
    Make(c, bare);
    Make(c, ws);
    std::vector<std::string> in_bare = {"in", bare, "sys"};
    in_bare.insert(in_bare.end(), c.call.begin(), c.call.end());
    std::vector<std::string> in_ws = {"in", ws, "sys"};
    in_ws.insert(in_ws.end(), c.call.begin(), c.call.end());
    int want = RunBare(probe, in_bare);
    ASSERT_NE(want, 100) << "probe does not know the call";
    const bool limit = notify_all() && c.notify_all_errno >= 0;
    if (limit) want = c.notify_all_errno;
    int got = Probe("workspace-write", in_ws, {"--approvals", "deny"});
    EXPECT_EQ(got, want) << c.name << ": under cordon " << std::strerror(got) << ", bare "
                         << std::strerror(want) << "\n"
                         << last_.err;
    if (!limit) {
      EXPECT_EQ(State(c, ws), State(c, bare)) << c.name << "\n" << last_.err;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Probes, FidelityTest, ProbeParams(), ProbeParamName);

}  // namespace
}  // namespace cordon::testing
