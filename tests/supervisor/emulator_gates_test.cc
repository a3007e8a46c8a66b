// The emulator's gate path through the RunGates seam (supervisor/run_gates.h),
// with a fake for the gates and real files in a scratch workspace: a
// sensitive delete is decided once, handed back as the checked rest of the
// call (Reply::later) holding the parent it resolved, asked about once on
// the worker that runs it, and performed on the held name or not at all.
//
// The emulator is driven directly: Handle with a Request whose path lies in
// this process's memory (the emulator reads a tool's memory with
// process_vm_readv, and this process may read its own), the rest run on a
// thread of its own that acts as the tool, as NotifyLoop::Defer does.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <seccomp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <future>
#include <mutex>
#include <thread>

#include "policy/policy.h"
#include "supervisor/caps.h"
#include "supervisor/emulator.h"
#include "supervisor/launcher.h"
#include "supervisor/rules.h"
#include "supervisor/run_gates.h"
#include "tests/support/test_env.h"

namespace cordon::supervisor {
namespace {

using cordon::testing::Exists;
using cordon::testing::ReadFile;
using cordon::testing::ScratchTree;
using cordon::testing::WriteFile;

// Deletes may be asked about; each question is recorded, and answered with
// `answer` once `release` is set (at once unless the test holds it).
class FakeGates final : public RunGates {
 public:
  bool CanAsk(Ask what) const override { return what == Ask::kDelete; }
  Status AskDelete(const Request& req, const policy::DeletePreview& preview,
                   const std::function<bool()>& still_valid) override {
    {
      std::lock_guard<std::mutex> l(mu_);
      ++asked;
      asked_id = req.id;
      asked_preview = preview;
      asked_on = std::this_thread::get_id();
    }
    if (while_asked) while_asked();
    released.wait();
    if (!still_valid()) return SysError{ESRCH, "the tool is gone", "(stale request)"};
    return answer;
  }
  Status AskWrite(const Request&, const policy::DeletePreview&,
                  const std::function<bool()>&) override {
    return SysError{EACCES, "approval", "denied"};
  }
  Status AskBypass(const Request&, const policy::DeletePreview&,
                   const std::function<bool()>&) override {
    return SysError{EACCES, "bypass", "denied"};
  }
  Status AdmitExec() override { return Ok(); }
  bool SeesExecs() const override { return false; }
  void ExecSeen(pid_t, const std::string&) override {}
  void Shutdown() override {}

  // Holds every answer until Release().
  void Hold() { released = release_.get_future().share(); }
  void Release() { release_.set_value(); }

  std::mutex mu_;
  int asked = 0;
  uint64_t asked_id = 0;
  policy::DeletePreview asked_preview;
  std::thread::id asked_on;
  Status answer = Ok();
  std::function<void()> while_asked;  // run inside the question (the file changes)

 private:
  std::promise<void> release_;
  std::shared_future<void> released = Ready();
  static std::shared_future<void> Ready() {
    std::promise<void> p;
    p.set_value();
    return p.get_future().share();
  }
};

class EmulatorGatesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char real[PATH_MAX];
    ASSERT_NE(::realpath(t_.ws().c_str(), real), nullptr);
    ws_ = real;
    ASSERT_EQ(::mkdir((ws_ + "/sub").c_str(), 0755), 0);
    WriteFile(ws_ + "/sub/notes.txt", "the user's notes\n");
  }

  // An emulator for a workspace-write run under sensitive.delete "ask",
  // with `gates` (null: DenyGates). By default every file made so far is
  // the user's: the run starts a minute from now.
  std::shared_ptr<Emulator> Make(std::shared_ptr<RunGates> gates,
                                 int64_t run_start_ns = NowRealtimeNs() + 60'000'000'000) {
    policy::Policy p;
    p.workspace = ws_;
    p.profile = policy::Profile::kWorkspaceWrite;
    p.sensitive_delete = policy::SensitiveDelete::kAsk;
    auto rules = MakeRules(p, {});
    EXPECT_TRUE(rules.ok()) << (rules.ok() ? "" : Describe(rules.error()));
    if (!rules.ok()) return nullptr;
    auto live = std::make_shared<LiveRules>();
    live->Start(rules.value(), {});
    EmulatorOptions opts;
    opts.gates = std::move(gates);
    return std::make_shared<Emulator>(live, run_start_ns, std::move(opts));
  }

  // unlink(path) as the tool asks it: the path in this process's memory.
  Reply Unlink(Emulator& e, const std::string& path, uint64_t id = 7) {
    path_ = path;
    Request req;
    req.id = id;
    req.tid = static_cast<pid_t>(::gettid());
    req.nr = SCMP_SYS(unlink);
    req.args[0] = reinterpret_cast<uint64_t>(path_.c_str());
    return e.Handle(req, [this] { return live_.load(); });
  }

  // Runs the rest of a call as NotifyLoop::Defer does: on a thread of its
  // own that acts as the tool.
  static std::future<Reply> RunLater(Reply& r) {
    return std::async(std::launch::async, [later = std::move(r.later)] {
      ToolPermissions as_tool;
      return as_tool.lowered() ? later() : Reply::Errno(EACCES, "cannot lower capabilities");
    });
  }

  ScratchTree t_;
  std::string ws_;
  std::string path_;
  std::atomic<bool> live_{true};
};

TEST_F(EmulatorGatesTest, DeleteOfUsersFileIsAskedOnceOnTheWorkerWithTheResolvedPath) {
  auto gates = std::make_shared<FakeGates>();
  auto e = Make(gates);
  ASSERT_TRUE(e);
  struct stat st;
  ASSERT_EQ(::stat((ws_ + "/sub/notes.txt").c_str(), &st), 0);
  Reply r = Unlink(*e, ws_ + "/sub/notes.txt");
  // Decided, not asked: the rest waits for a worker that acts as the tool.
  ASSERT_TRUE(r.later);
  EXPECT_EQ(r.later_on, Reply::Worker::kTool);
  EXPECT_EQ(gates->asked, 0);
  EXPECT_TRUE(Exists(ws_ + "/sub/notes.txt"));
  std::future<Reply> done = RunLater(r);
  Reply answered = done.get();
  EXPECT_EQ(answered.error, 0) << answered.why;
  EXPECT_FALSE(Exists(ws_ + "/sub/notes.txt"));
  // One question, for this call, on the worker, about the file it held.
  EXPECT_EQ(gates->asked, 1);
  EXPECT_EQ(gates->asked_id, 7u);
  EXPECT_NE(gates->asked_on, std::this_thread::get_id());
  EXPECT_EQ(gates->asked_preview.rel_path, "sub/notes.txt");
  EXPECT_EQ(gates->asked_preview.size, 17u);
  EXPECT_EQ(gates->asked_preview.ino, static_cast<uint64_t>(st.st_ino));
  EXPECT_FALSE(gates->asked_preview.directory);
}

TEST_F(EmulatorGatesTest, DeferredDeleteIsPerformedOnTheHeldNameNotResolvedAgain) {
  auto gates = std::make_shared<FakeGates>();
  gates->Hold();
  auto e = Make(gates);
  ASSERT_TRUE(e);
  Reply r = Unlink(*e, ws_ + "/sub/notes.txt");
  ASSERT_TRUE(r.later);
  // Between the decision and its worker, the directory moves and a new
  // file takes the path the tool wrote: the rest of the call acts through
  // the parent it holds, on the file decided on, and does not resolve the
  // path a second time.
  ASSERT_EQ(::rename((ws_ + "/sub").c_str(), (ws_ + "/moved").c_str()), 0);
  ASSERT_EQ(::mkdir((ws_ + "/sub").c_str(), 0755), 0);
  WriteFile(ws_ + "/sub/notes.txt", "a new file at the old path\n");
  std::future<Reply> done = RunLater(r);
  for (int i = 0; i < 5000; ++i) {
    {
      std::lock_guard<std::mutex> l(gates->mu_);
      if (gates->asked == 1) break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  // Asked, not answered: nothing is done yet.
  EXPECT_EQ(done.wait_for(std::chrono::milliseconds(50)), std::future_status::timeout);
  EXPECT_TRUE(Exists(ws_ + "/moved/notes.txt"));
  EXPECT_EQ(gates->asked_preview.rel_path, "sub/notes.txt");
  gates->Release();  // the answer, on the worker
  Reply answered = done.get();
  EXPECT_EQ(answered.error, 0) << answered.why;
  EXPECT_EQ(gates->asked, 1);
  EXPECT_FALSE(Exists(ws_ + "/moved/notes.txt"));
  EXPECT_EQ(ReadFile(ws_ + "/sub/notes.txt"), "a new file at the old path\n");
}

TEST_F(EmulatorGatesTest, DeniedDeleteLeavesTheFile) {
  auto gates = std::make_shared<FakeGates>();
  gates->answer = SysError{EACCES, "approval", "denied"};
  auto e = Make(gates);
  ASSERT_TRUE(e);
  Reply r = Unlink(*e, ws_ + "/sub/notes.txt");
  ASSERT_TRUE(r.later);
  Reply answered = RunLater(r).get();
  EXPECT_EQ(answered.error, EACCES);
  EXPECT_EQ(answered.why, "delete of sub/notes.txt (existed before the run): approval denied");
  EXPECT_EQ(gates->asked, 1);
  EXPECT_EQ(ReadFile(ws_ + "/sub/notes.txt"), "the user's notes\n");
}

TEST_F(EmulatorGatesTest, CallGoneWhileAskedLeavesTheFile) {
  auto gates = std::make_shared<FakeGates>();
  gates->while_asked = [this] { live_ = false; };  // the tool's thread was killed
  auto e = Make(gates);
  ASSERT_TRUE(e);
  Reply r = Unlink(*e, ws_ + "/sub/notes.txt");
  ASSERT_TRUE(r.later);
  Reply answered = RunLater(r).get();
  EXPECT_EQ(answered.error, EACCES);
  EXPECT_EQ(answered.why, "delete sub/notes.txt: the tool is gone (stale request)");
  EXPECT_TRUE(Exists(ws_ + "/sub/notes.txt"));
}

TEST_F(EmulatorGatesTest, FileChangedWhileAskedIsNotDeleted) {
  auto gates = std::make_shared<FakeGates>();
  gates->while_asked = [this] {
    FILE* f = std::fopen((ws_ + "/sub/notes.txt").c_str(), "a");
    std::fputs("more\n", f);
    std::fclose(f);
  };
  auto e = Make(gates);
  ASSERT_TRUE(e);
  Reply r = Unlink(*e, ws_ + "/sub/notes.txt");
  ASSERT_TRUE(r.later);
  Reply answered = RunLater(r).get();
  EXPECT_EQ(answered.error, EACCES);
  EXPECT_NE(answered.why.find("delete sub/notes.txt: the file changed after the preview"),
            std::string::npos)
      << answered.why;
  EXPECT_EQ(ReadFile(ws_ + "/sub/notes.txt"), "the user's notes\nmore\n");
}

TEST_F(EmulatorGatesTest, FileReplacedBeforeTheQuestionIsNotAskedAbout) {
  auto gates = std::make_shared<FakeGates>();
  auto e = Make(gates);
  ASSERT_TRUE(e);
  Reply r = Unlink(*e, ws_ + "/sub/notes.txt");
  ASSERT_TRUE(r.later);
  // Another file takes the name between the decision and the question.
  WriteFile(ws_ + "/sub/other.txt", "another file\n");
  ASSERT_EQ(::rename((ws_ + "/sub/other.txt").c_str(), (ws_ + "/sub/notes.txt").c_str()), 0);
  Reply answered = RunLater(r).get();
  EXPECT_EQ(answered.error, EACCES);
  EXPECT_EQ(answered.why, "delete sub/notes.txt: the file changed after the decision (not asked)");
  EXPECT_EQ(gates->asked, 0);
  EXPECT_EQ(ReadFile(ws_ + "/sub/notes.txt"), "another file\n");
}

TEST_F(EmulatorGatesTest, NobodyToAskRefusesAtOnce) {
  auto e = Make(nullptr);  // DenyGates
  ASSERT_TRUE(e);
  Reply r = Unlink(*e, ws_ + "/sub/notes.txt");
  EXPECT_FALSE(r.later);
  EXPECT_EQ(r.error, EACCES);
  EXPECT_TRUE(Exists(ws_ + "/sub/notes.txt"));
}

TEST_F(EmulatorGatesTest, FileOfTheRunIsDeletedWithoutAQuestion) {
  auto gates = std::make_shared<FakeGates>();
  // A run that began a minute ago, and a file born since.
  auto e = Make(gates, NowRealtimeNs() - 60'000'000'000);
  ASSERT_TRUE(e);
  WriteFile(ws_ + "/sub/made.txt", "made in the run\n");
  struct statx stx {};
  ASSERT_EQ(::statx(AT_FDCWD, (ws_ + "/sub/made.txt").c_str(), 0, STATX_BTIME, &stx), 0);
  if (!(stx.stx_mask & STATX_BTIME)) GTEST_SKIP() << "no birth times on this filesystem";
  Reply r = Unlink(*e, ws_ + "/sub/made.txt");
  EXPECT_FALSE(r.later);
  EXPECT_EQ(r.error, 0) << r.why;
  EXPECT_FALSE(Exists(ws_ + "/sub/made.txt"));
  EXPECT_EQ(gates->asked, 0);
}

}  // namespace
}  // namespace cordon::supervisor
