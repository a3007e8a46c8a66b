// Tool pins on real files: an honest binary matches its pin, a replaced one
// (new inode) or a modified one (same inode, other bytes) does not; the exec
// closure of ripgrep holds its loader and libraries; pinned policies grant
// EXECUTE only on that closure.
#include "supervisor/exec/tool_pin.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <functional>

#include "policy/digest.h"
#include "supervisor/exec/change_watch.h"
#include "supervisor/exec/exec_closure.h"
#include "base/fd.h"
#include "policy/policy.h"
#include "policy/policy_parser.h"
#include "tests/support/test_env.h"

namespace cordon::testing {
namespace {

using policy::ToolPin;
using supervisor::CheckIdentity;
using supervisor::DecideExec;
using supervisor::ExecClosure;
using supervisor::MakePin;

constexpr const char* kRg = "/usr/bin/rg";

bool Contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

std::string Real(const std::string& p) {
  char buf[4096];
  return ::realpath(p.c_str(), buf) ? buf : "";
}

class ToolPinTest : public ::testing::Test {
 protected:
  void SetUp() override {
    tool_ = t_.Ws("tool");
    WriteFile(tool_, "#!/bin/sh\necho honest\n");
    auto pin = MakePin("tool", tool_);
    ASSERT_TRUE(pin.ok()) << Describe(pin.error());
    pin_ = pin.value();
    // The policy is loaded once its pins are hashed; the tests change the
    // file after that.
    ASSERT_TRUE(pin_.identity.Sha256().ok());
  }
  Fd Open(const std::string& p) { return Fd(::open(p.c_str(), O_RDONLY | O_CLOEXEC)); }
  struct stat Stat(int fd) {
    struct stat st{};
    EXPECT_EQ(::fstat(fd, &st), 0);
    return st;
  }
  ScratchTree t_;
  std::string tool_;
  ToolPin pin_;
};

TEST_F(ToolPinTest, PinRecordsTheIdentity) {
  struct stat st;
  ASSERT_EQ(::stat(tool_.c_str(), &st), 0);
  EXPECT_EQ(pin_.path, Real(tool_));
  EXPECT_EQ(pin_.identity.ino, st.st_ino);
  EXPECT_EQ(pin_.identity.dev, st.st_dev);
  EXPECT_EQ(pin_.identity.size, st.st_size);
  auto digest = pin_.identity.Sha256();
  ASSERT_TRUE(digest.ok()) << Describe(digest.error());
  EXPECT_EQ(digest.value(), policy::Sha256Hex(ReadFile(tool_)));
}

TEST_F(ToolPinTest, UnchangedBinaryMatches) {
  Fd fd = Open(tool_);
  Status s = CheckIdentity(pin_, fd.get());
  EXPECT_TRUE(s.ok()) << Describe(s.error());
}

TEST_F(ToolPinTest, ReplacedBinaryIsRefused) {
  // Same bytes, new inode: what `cp tool x && mv x tool` leaves behind.
  WriteFile(t_.Ws("copy"), ReadFile(tool_));
  ASSERT_EQ(::rename(t_.Ws("copy").c_str(), tool_.c_str()), 0);
  Fd fd = Open(tool_);
  Status s = CheckIdentity(pin_, fd.get());
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().err, EACCES);
  EXPECT_NE(s.error().detail.find("replaced"), std::string::npos) << s.error().detail;
}

TEST_F(ToolPinTest, SameInodeWithOtherBytesIsRefusedEvenWithSizeAndMtimeRestored) {
  struct stat before;
  ASSERT_EQ(::stat(tool_.c_str(), &before), 0);
  {
    Fd w(::open(tool_.c_str(), O_WRONLY | O_CLOEXEC));
    ASSERT_TRUE(w.valid());
    ASSERT_EQ(::pwrite(w.get(), "EVIL", 4, 10), 4);  // same size
  }
  struct timespec times[2] = {before.st_atim, before.st_mtim};
  ASSERT_EQ(::utimensat(AT_FDCWD, tool_.c_str(), times, 0), 0);  // same mtime
  Fd fd = Open(tool_);
  ASSERT_EQ(Stat(fd.get()).st_ino, pin_.identity.ino);
  Status s = CheckIdentity(pin_, fd.get());
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().err, EACCES);
  EXPECT_NE(s.error().detail.find("SHA-256"), std::string::npos) << s.error().detail;
}

TEST_F(ToolPinTest, AppendedBytesAreRefusedBySize) {
  {
    Fd w(::open(tool_.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC));
    ASSERT_EQ(::write(w.get(), "x", 1), 1);
  }
  Fd fd = Open(tool_);
  Status s = CheckIdentity(pin_, fd.get());
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().detail.find("size"), std::string::npos) << s.error().detail;
}

TEST_F(ToolPinTest, BadPinsAreRefused) {
  EXPECT_FALSE(MakePin("", tool_).ok());
  EXPECT_FALSE(MakePin("x", "relative/tool").ok());
  EXPECT_FALSE(MakePin("x", t_.Ws("missing")).ok());
  EXPECT_FALSE(MakePin("x", t_.ws()).ok()) << "a directory is not a tool";
  ASSERT_EQ(::symlink(tool_.c_str(), t_.Ws("alias").c_str()), 0);
  auto via_link = MakePin("x", t_.Ws("alias"));
  ASSERT_TRUE(via_link.ok());
  EXPECT_EQ(via_link->path, Real(tool_)) << "the pin names the file, not the link";
}

TEST_F(ToolPinTest, DecideExecAllowsOnlyPinnedUnchangedInodes) {
  std::vector<ToolPin> pins = {pin_};
  Fd honest = Open(tool_);
  auto d = DecideExec(pins, Stat(honest.get()), honest.get());
  EXPECT_TRUE(d.allow) << d.reason;
  EXPECT_EQ(d.pin, &pins[0]);

  Fd other = Open("/usr/bin/env");
  auto refused = DecideExec(pins, Stat(other.get()), other.get());
  EXPECT_FALSE(refused.allow);
  EXPECT_EQ(refused.err, EACCES);
  EXPECT_NE(refused.reason.find("allowlist"), std::string::npos) << refused.reason;

  auto open = DecideExec({}, Stat(other.get()), other.get());
  EXPECT_TRUE(open.allow) << "without an allowlist exec is the filesystem rules' business";

  {
    Fd w(::open(tool_.c_str(), O_WRONLY | O_CLOEXEC));
    ASSERT_EQ(::pwrite(w.get(), "EVIL", 4, 10), 4);
  }
  Fd modified = Open(tool_);
  auto m = DecideExec(pins, Stat(modified.get()), modified.get());
  EXPECT_FALSE(m.allow);
  EXPECT_EQ(m.err, EACCES);
}

// A pin watches its file from before the hash: while nothing touched it, an
// exec compares inode, size and mtime and does not read the bytes again;
// the same-size, same-mtime write the hash exists for makes it hash again.
TEST_F(ToolPinTest, AQuietPinIsNotHashedAgainAndAWrittenOneIs) {
  ASSERT_TRUE(pin_.identity.bytes && pin_.identity.bytes->Watched())
      << "the scratch tree is on a local filesystem";
  std::vector<ToolPin> pins = {pin_};
  Fd honest = Open(tool_);
  auto quiet = DecideExec(pins, Stat(honest.get()), honest.get());
  EXPECT_TRUE(quiet.allow) << quiet.reason;
  EXPECT_NE(quiet.reason.find("unchanged since it was hashed"), std::string::npos) << quiet.reason;

  struct stat before = Stat(honest.get());
  {
    Fd w(::open(tool_.c_str(), O_WRONLY | O_CLOEXEC));
    ASSERT_EQ(::pwrite(w.get(), "EVIL", 4, 10), 4);
  }
  struct timespec times[2] = {before.st_atim, before.st_mtim};
  ASSERT_EQ(::utimensat(AT_FDCWD, tool_.c_str(), times, 0), 0);
  Fd modified = Open(tool_);
  auto m = DecideExec(pins, Stat(modified.get()), modified.get());
  EXPECT_FALSE(m.allow) << m.reason;
  EXPECT_NE(m.reason.find("SHA-256"), std::string::npos) << m.reason;
}

// A pin is hashed on a thread of its own: bytes changed while it reads them
// (here the last ones, written before the hash gets there, with size and
// mtime put back) make no pin, rather than a pin of the changed bytes.
TEST(ToolPinHash, BytesChangedWhileThePinIsHashedMakeNoPin) {
  ScratchTree t;
  const std::string big = t.Ws("big-tool");
  const std::size_t size = 64 << 20;
  WriteFile(big, std::string(size, 'a'));
  struct stat before;
  ASSERT_EQ(::stat(big.c_str(), &before), 0);
  auto pin = MakePin("big", big);
  ASSERT_TRUE(pin.ok()) << Describe(pin.error());
  {
    Fd w(::open(big.c_str(), O_WRONLY | O_CLOEXEC));
    ASSERT_EQ(::pwrite(w.get(), "EVIL", 4, static_cast<off_t>(size - 4)), 4);
  }
  struct timespec times[2] = {before.st_atim, before.st_mtim};
  ASSERT_EQ(::utimensat(AT_FDCWD, big.c_str(), times, 0), 0);
  auto digest = pin->identity.Sha256();
  ASSERT_FALSE(digest.ok()) << "hashed the changed bytes as the pinned ones";
  EXPECT_EQ(digest.error().err, EAGAIN);
  std::vector<ToolPin> pins = {pin.value()};
  Fd fd(::open(big.c_str(), O_RDONLY | O_CLOEXEC));
  struct stat st;
  ASSERT_EQ(::fstat(fd.get(), &st), 0);
  auto d = DecideExec(pins, st, fd.get());
  EXPECT_FALSE(d.allow) << d.reason;
  EXPECT_NE(d.reason.find("could not be hashed when it was pinned"), std::string::npos) << d.reason;
}

TEST(ChangeWatch, EveryKindOfChangeEndsTheQuiet) {
  ScratchTree t;
  const std::string f = t.Ws("f");
  auto watched = [&] {
    WriteFile(f, "0123456789\n");
    Fd fd(::open(f.c_str(), O_RDONLY | O_CLOEXEC));
    auto w = supervisor::ChangeWatch::Start(fd.get());
    EXPECT_NE(w, nullptr);
    return w;
  };
  const std::vector<std::pair<const char*, std::function<void()>>> changes = {
      {"write",
       [&] {
         Fd w(::open(f.c_str(), O_WRONLY | O_CLOEXEC));
         (void)::pwrite(w.get(), "x", 1, 0);
       }},
      {"open for writing, nothing written", [&] { Fd w(::open(f.c_str(), O_WRONLY | O_CLOEXEC)); }},
      {"truncate", [&] { (void)::truncate(f.c_str(), 3); }},
      {"utimensat", [&] { (void)::utimensat(AT_FDCWD, f.c_str(), nullptr, 0); }},
      {"chmod", [&] { (void)::chmod(f.c_str(), 0700); }},
      {"rename", [&] { (void)::rename(f.c_str(), t.Ws("g").c_str()); }},
      {"unlink", [&] { (void)::unlink(f.c_str()); }},
  };
  for (const auto& [what, change] : changes) {
    SCOPED_TRACE(what);
    auto w = watched();
    ASSERT_NE(w, nullptr);
    EXPECT_TRUE(w->Quiet());
    {
      Fd r(::open(f.c_str(), O_RDONLY | O_CLOEXEC));
      char buf[4];
      EXPECT_EQ(::read(r.get(), buf, sizeof buf), 4);
    }
    EXPECT_TRUE(w->Quiet()) << "reading is no change";
    change();
    EXPECT_FALSE(w->Quiet());
    EXPECT_FALSE(w->Quiet()) << "for good";
    ::unlink(t.Ws("g").c_str());
  }
  // One inotify instance serves every watch: a change is the changed
  // file's alone, and a file watched anew starts quiet.
  WriteFile(t.Ws("a"), "a\n");
  WriteFile(t.Ws("b"), "b\n");
  Fd fa(::open(t.Ws("a").c_str(), O_RDONLY | O_CLOEXEC));
  Fd fb(::open(t.Ws("b").c_str(), O_RDONLY | O_CLOEXEC));
  auto wa = supervisor::ChangeWatch::Start(fa.get());
  auto wb = supervisor::ChangeWatch::Start(fb.get());
  ASSERT_NE(wa, nullptr);
  ASSERT_NE(wb, nullptr);
  ASSERT_EQ(::truncate(t.Ws("a").c_str(), 1), 0);
  EXPECT_FALSE(wa->Quiet());
  EXPECT_TRUE(wb->Quiet()) << "another file's change";
  auto again = supervisor::ChangeWatch::Start(fa.get());
  ASSERT_NE(again, nullptr);
  EXPECT_TRUE(again->Quiet()) << "watched anew after the change";
  EXPECT_FALSE(wa->Quiet()) << "the first watch of the same file saw the change all the same";
  ASSERT_EQ(::truncate(t.Ws("a").c_str(), 0), 0);
  EXPECT_FALSE(again->Quiet());
  EXPECT_TRUE(wb->Quiet());
  // procfs is no filesystem whose changes this kernel reports: no watch.
  Fd proc(::open("/proc/self/status", O_RDONLY | O_CLOEXEC));
  EXPECT_EQ(supervisor::ChangeWatch::Start(proc.get()), nullptr);
}

TEST(ExecClosure, RipgrepNeedsItsLoaderAndLibraries) {
  auto pin = MakePin("rg", kRg);
  ASSERT_TRUE(pin.ok()) << "ripgrep is a runtime dependency: " << Describe(pin.error());
  auto closure = ExecClosure({pin.value()});
  EXPECT_TRUE(Contains(closure, Real(kRg)));
  EXPECT_TRUE(Contains(closure, Real("/lib64/ld-linux-x86-64.so.2")));
  EXPECT_TRUE(Contains(closure, Real("/lib/x86_64-linux-gnu/libc.so.6")));
  EXPECT_TRUE(Contains(closure, Real("/lib/x86_64-linux-gnu/libpcre2-8.so.0")));
  EXPECT_FALSE(Contains(closure, Real("/usr/bin/env")));
  for (const auto& f : closure) EXPECT_EQ(f, Real(f)) << "closure paths are realpaths";
}

TEST(ExecClosure, StaticBinaryAndScriptAreJustThemselves) {
  auto pin = MakePin("probe", PROBE_STATIC);
  ASSERT_TRUE(pin.ok());
  EXPECT_EQ(ExecClosure({pin.value()}), std::vector<std::string>{Real(PROBE_STATIC)});
}

TEST(EffectiveRules, PinnedToolsGetTheOnlyExecuteRules) {
  policy::Policy p;
  p.workspace = "/tmp";
  for (const auto& r : policy::EffectiveRules(p, "")) {
    if (r.path == "/usr") {
      EXPECT_TRUE(r.executable) << "no allowlist: exec as before";
    }
  }
  auto pin = MakePin("rg", kRg);
  ASSERT_TRUE(pin.ok());
  p.tools.push_back(pin.value());
  auto closure = ExecClosure(p.tools);
  std::vector<std::string> exec;
  for (const auto& r : policy::EffectiveRules(p, "/tmp/private")) {
    if (!r.executable) continue;
    exec.push_back(r.path);
    EXPECT_EQ(r.access, policy::Access::kReadOnly) << r.path;
  }
  std::sort(exec.begin(), exec.end());
  EXPECT_EQ(exec, closure);
}

// What tools/policy_file.cc does: parse, then pin what the parser named.
std::vector<policy::PolicyError> Load(const std::string& text, policy::Policy& p) {
  auto errors = policy::ParsePolicy(text, p);
  for (auto& e : supervisor::PinTools(p)) errors.push_back(std::move(e));
  return errors;
}

TEST(ParseTools, ThePolicyParserOnlyNamesTools) {
  policy::Policy p;
  auto errors = policy::ParsePolicy(R"({"tools": [{"name": "x", "path": "/nonexistent/x"}]})", p);
  EXPECT_TRUE(errors.empty()) << "a missing binary is the loader's finding";
  ASSERT_EQ(p.tools.size(), 1u);
  EXPECT_EQ(p.tools[0].path, "/nonexistent/x");
  EXPECT_EQ(p.tools[0].source, "/tools/0");
  EXPECT_EQ(p.tools[0].identity.bytes, nullptr) << "not pinned by the parser";
  auto pin_errors = supervisor::PinTools(p);
  ASSERT_EQ(pin_errors.size(), 1u);
  EXPECT_EQ(pin_errors[0].pointer, "/tools/0");
  EXPECT_TRUE(p.tools.empty()) << "a tool that cannot be pinned is not kept";
}

TEST(ParseTools, PolicyFileToolsArePinnedAtLoad) {
  policy::Policy p;
  auto errors = Load(R"({"tools": [{"name": "rg", "path": "/usr/bin/rg"}]})", p);
  EXPECT_TRUE(errors.empty());
  ASSERT_EQ(p.tools.size(), 1u);
  struct stat st;
  ASSERT_EQ(::stat(kRg, &st), 0);
  EXPECT_EQ(p.tools[0].name, "rg");
  EXPECT_EQ(p.tools[0].identity.ino, st.st_ino);
  auto digest = p.tools[0].identity.Sha256();
  ASSERT_TRUE(digest.ok()) << Describe(digest.error());
  EXPECT_EQ(digest.value().size(), 64u);
  for (const char* bad : {R"({"tools": {"rg": "/usr/bin/rg"}})",
                          R"({"tools": [{"name": "x", "path": "relative"}]})",
                          R"({"tools": [{"name": "x", "path": "/nonexistent/x"}]})",
                          R"({"tools": [{"name": "x", "path": "/usr/bin/rg", "sha": "1"}]})",
                          R"({"tools": [{"path": "/usr/bin/rg"}]})"}) {
    policy::Policy q;
    EXPECT_FALSE(Load(bad, q).empty()) << "errors refuse the whole policy: " << bad;
  }
}

}  // namespace
}  // namespace cordon::testing
