// Asking at a terminal, end to end (issue 26's first "Done when"): cordon
// runs on a real pty (forkpty: the pty is its controlling terminal, the
// tool's too), the test answers by writing to the master, and git's
// one-second progress timer (SIGALRM, SA_RESTART) interrupts the held
// unlink, which the kernel restarts as a new notification. Each file is
// asked about once and the answer applies to the restarted call.
#include <gtest/gtest.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <vector>

#include "tests/support/json_lines.h"
#include "tests/support/test_env.h"

namespace cordon::testing {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

constexpr char kPrompt[] = "anything else keeps it: ";

size_t Count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}

// `cordon ARGS...` on a new pty; answers[i] is typed (after `hold`) at the
// i-th prompt; prompts past the answers are left unanswered.
struct PtyRun {
  std::string screen;  // everything cordon and the tool wrote to the terminal
  int status = -1;
  size_t prompts = 0;
};

PtyRun RunOnPty(const std::vector<std::string>& args, const std::vector<std::string>& answers,
                std::chrono::milliseconds hold, const std::string& cwd,
                const std::vector<std::string>& env = {}) {
  PtyRun r;
  int master = -1;
  pid_t pid = ::forkpty(&master, nullptr, nullptr, nullptr);
  if (pid < 0) {
    ADD_FAILURE() << "forkpty";
    return r;
  }
  if (pid == 0) {
    if (::chdir(cwd.c_str()) != 0) _exit(111);
    for (const auto& e : env) ::putenv(const_cast<char*>(e.c_str()));
    ExecCordon(args);
  }
  const auto give_up = Clock::now() + 120s;
  Clock::time_point answer_at{};
  size_t answered = 0;
  for (;;) {
    pollfd p{master, POLLIN, 0};
    int n = ::poll(&p, 1, 50);
    if (n > 0) {
      char buf[4096];
      ssize_t got = ::read(master, buf, sizeof buf);
      if (got <= 0) break;  // EIO: every slave fd closed, the run is over
      r.screen.append(buf, static_cast<size_t>(got));
    }
    size_t prompts = Count(r.screen, kPrompt);
    if (prompts > r.prompts) {
      r.prompts = prompts;
      if (answered < answers.size() && answer_at == Clock::time_point{}) {
        answer_at = Clock::now() + hold;
      }
    }
    if (answer_at != Clock::time_point{} && Clock::now() >= answer_at) {
      const std::string line = answers[answered++] + "\n";
      EXPECT_EQ(::write(master, line.data(), line.size()), static_cast<ssize_t>(line.size()));
      answer_at = {};
      if (answered < answers.size() && r.prompts > answered) answer_at = Clock::now() + hold;
    }
    if (Clock::now() > give_up) {
      ADD_FAILURE() << "the run did not end; screen:\n" << r.screen;
      ::kill(pid, SIGKILL);
      break;
    }
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  ::close(master);
  r.status = WIFEXITED(status) ? WEXITSTATUS(status) : 1000 + WTERMSIG(status);
  return r;
}

void Sh(const std::string& cmd) { ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd; }

class TtyApprovalTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::access("/usr/bin/git", X_OK) != 0) GTEST_SKIP() << "SKIPPED LOUDLY: git not installed";
    policy_ = t_.Out("policy.json");
    log_ = t_.Out("audit.jsonl");
    // Today's asking, whatever the profile's default becomes.
    WriteFile(policy_, R"({"sensitive":{"delete":"ask"}})");
  }
  // A repository committed before the run: main has src/keep.txt,
  // src/old.txt and docs/gone.txt; feature deletes the last two.
  void MakeRepo() {
    const std::string g = "cd '" + t_.ws() + "' && git -c user.name=t -c user.email=t@t ";
    Sh("cd '" + t_.ws() + "' && git init -q -b main . && mkdir src docs && echo keep > src/keep.txt"
       " && echo old > src/old.txt && echo gone > docs/gone.txt");
    Sh(g + "add . && " + g + "commit -qm main && git checkout -qb feature && git rm -q "
       "src/old.txt docs/gone.txt && " + g + "commit -qm feature && git checkout -q main");
  }
  PtyRun Checkout(const std::vector<std::string>& answers) {
    return RunOnPty({"run", "--workspace", t_.ws(), "--profile", "workspace-write", "--policy",
                     policy_, "--approvals", "tty", "--approval-timeout", "20", "--audit", log_,
                     "--", "/usr/bin/git", "checkout", "--progress", "feature"},
                    answers, 3500ms, t_.ws(), {"GIT_PROGRESS_DELAY=0"});
  }
  int Events(const std::string& event) {
    int n = 0;
    for (const auto& r : JsonLines(ReadFile(log_))) {
      if (r.value("kind", "") == "approval" && r.value("event", "") == event) ++n;
    }
    return n;
  }

  ScratchTree t_;
  std::string policy_, log_;
};

TEST_F(TtyApprovalTest, GitCheckoutAsksOncePerFileAndTheYesDeletes) {
  MakeRepo();
  // The typed name allows; 3.5 s of waiting lets the timer interrupt the
  // held unlink three times or so.
  // git's order: docs/gone.txt, src/old.txt, then docs/ (emptied, so git
  // removes it: a pre-existing directory, asked about like its files).
  PtyRun r = Checkout({"gone.txt", "old.txt", "docs"});
  EXPECT_EQ(r.prompts, 3u) << r.screen;
  EXPECT_EQ(Count(r.screen, "wants to delete a file"), 2u) << r.screen;
  EXPECT_EQ(Count(r.screen, "wants to remove an empty directory"), 1u) << r.screen;
  EXPECT_EQ(r.status, 0) << r.screen;
  EXPECT_FALSE(Exists(t_.Ws("src/old.txt"))) << r.screen;
  EXPECT_FALSE(Exists(t_.Ws("docs/gone.txt"))) << r.screen;
  EXPECT_FALSE(Exists(t_.Ws("docs"))) << r.screen;
  EXPECT_TRUE(Exists(t_.Ws("src/keep.txt")));
  EXPECT_EQ(Events("request"), 3);
  EXPECT_GE(Events("joined"), 1) << "the progress timer never interrupted the held unlink";
  EXPECT_EQ(ReadFile(t_.Ws(".git/HEAD")), "ref: refs/heads/feature\n");
  // The interrupted calls were dropped without a word: no refusal the
  // tool never saw is reported.
  EXPECT_EQ(Count(r.screen, "stale"), 0u) << r.screen;
}

TEST_F(TtyApprovalTest, GitCheckoutAsksOncePerFileAndTheNoRefuses) {
  MakeRepo();
  PtyRun r = Checkout({"no", "no"});
  EXPECT_EQ(r.prompts, 2u) << r.screen;
  EXPECT_TRUE(Exists(t_.Ws("src/old.txt"))) << r.screen;
  EXPECT_TRUE(Exists(t_.Ws("docs/gone.txt"))) << r.screen;
  EXPECT_EQ(Events("request"), 2);
  EXPECT_GE(Events("joined"), 1) << "the progress timer never interrupted the held unlink";
  // git sees EACCES and reports each file ("warning: unable to unlink"),
  // then goes on: git 2.39's checkout treats a file it cannot remove as a
  // warning (unpack-trees.c unlink_entry -> remove_or_warn) whatever the
  // errno, and exits 0. That status is git's own, passed through.
  EXPECT_EQ(Count(r.screen, "unable to unlink 'src/old.txt': Permission denied"), 1u) << r.screen;
  EXPECT_EQ(Count(r.screen, "unable to unlink 'docs/gone.txt': Permission denied"), 1u)
      << r.screen;
  EXPECT_EQ(r.status, 0) << r.screen;
  // cordon says once per file what to do.
  EXPECT_EQ(Count(r.screen, "delete of src/old.txt (existed before the run)"), 1u) << r.screen;
  EXPECT_EQ(Count(r.screen, "delete of docs/gone.txt (existed before the run)"), 1u) << r.screen;
}

// A pre-existing directory emptied piecewise: its file, then itself, each
// asked about once (the directory's preview: path and identity).
TEST_F(TtyApprovalTest, RmRfOfAPreExistingTreeAsksForEachEntry) {
  Sh("mkdir -p '" + t_.Ws("build") + "' && echo o > '" + t_.Ws("build/x.o") + "'");
  PtyRun r = RunOnPty({"run", "--workspace", t_.ws(), "--profile", "workspace-write", "--policy",
                       policy_, "--approvals", "tty", "--approval-timeout", "20", "--audit", log_,
                       "--", "/bin/rm", "-rf", "build"},
                      {"x.o", "build"}, 100ms, t_.ws());
  EXPECT_EQ(r.status, 0) << r.screen;
  EXPECT_EQ(r.prompts, 2u) << r.screen;
  EXPECT_EQ(Count(r.screen, "wants to remove an empty directory"), 1u) << r.screen;
  EXPECT_FALSE(Exists(t_.Ws("build"))) << r.screen;
}

}  // namespace
}  // namespace cordon::testing
