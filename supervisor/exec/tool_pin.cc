#include "supervisor/exec/tool_pin.h"

#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <future>

#include "base/fd.h"
#include "policy/digest.h"
#include "supervisor/exec/change_watch.h"
#include "supervisor/exec/exec_closure.h"
#include "supervisor/file_digest.h"

namespace cordon::supervisor {
namespace {

bool SameTime(const struct timespec& a, const struct timespec& b) {
  return a.tv_sec == b.tv_sec && a.tv_nsec == b.tv_nsec;
}

SysError Refused(const ToolPin& pin, const std::string& why) {
  return SysError{EACCES, "exec", "tool '" + pin.name + "' (" + pin.path + ") " + why};
}

// Everything but the hash; the cheap part of the comparison.
std::string MetadataMismatch(const ToolIdentity& want, const struct stat& got) {
  if (got.st_dev != want.dev || got.st_ino != want.ino) {
    return "was replaced since the policy was loaded (another inode at the path)";
  }
  if (got.st_size != want.size) return "was modified since the policy was loaded (size)";
  if (!SameTime(got.st_mtim, want.mtime)) {
    return "was modified since the policy was loaded (mtime)";
  }
  return {};
}

// The watch taken before the hash, and the hash running on a thread of its
// own once the file is open, typed and watched: a launch does not wait for
// it, nor does an exec while the watch is quiet.
class Bytes final : public policy::PinnedBytes {
 public:
  Bytes(std::shared_ptr<ChangeWatch> watch, std::shared_future<Result<std::string>> digest)
      : watch_(std::move(watch)), digest_(std::move(digest)) {}
  bool Watched() const override { return watch_ != nullptr; }
  bool Quiet() const override { return watch_ && watch_->Quiet(); }
  Result<std::string> Sha256() const override { return digest_.get(); }

 private:
  std::shared_ptr<ChangeWatch> watch_;
  std::shared_future<Result<std::string>> digest_;
};

}  // namespace

Result<ToolIdentity> RecordIdentity(const std::string& path) {
  // O_NONBLOCK: a FIFO at the path is refused below, not waited on.
  Fd fd(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
  if (!fd) return Errno("open", path);
  struct stat st;
  if (::fstat(fd.get(), &st) != 0) return Errno("fstat", path);
  if (!S_ISREG(st.st_mode)) return SysError{EACCES, "pin", path + ": not a regular file"};
  if (static_cast<uint64_t>(st.st_size) > policy::kMaxToolBytes) {
    return SysError{EFBIG, "pin", path + ": larger than a pin may hash"};
  }
  ToolIdentity id;
  id.dev = st.st_dev;
  id.ino = st.st_ino;
  id.size = st.st_size;
  id.mtime = st.st_mtim;
  std::shared_ptr<ChangeWatch> watch = ChangeWatch::Start(fd.get());  // before the first byte is read
  // The hash must describe the bytes the file had when it was pinned: a
  // change while it is read (the write moves ctime before its bytes land,
  // and raises an event) makes it no pin at all.
  auto hash_it = [fd = std::move(fd), st, path, watch]() -> Result<std::string> {
    auto hash = Sha256Fd(fd.get(), policy::kMaxToolBytes);
    if (!hash) return SysError{hash.error().err, "sha256", path};
    struct stat after;
    if (::fstat(fd.get(), &after) != 0) return Errno("fstat", path);
    if (after.st_size != st.st_size || !SameTime(after.st_mtim, st.st_mtim) ||
        !SameTime(after.st_ctim, st.st_ctim) || (watch && !watch->Quiet())) {
      return SysError{EAGAIN, "pin", path + ": changed while it was hashed"};
    }
    return hash;
  };
  id.bytes = std::make_shared<Bytes>(
      std::move(watch), std::async(std::launch::async, std::move(hash_it)).share());
  return id;
}

Result<ToolPin> MakePin(const std::string& name, const std::string& path) {
  if (auto bad = policy::CheckToolSpec(name, path)) return *bad;
  char real[PATH_MAX];
  if (::realpath(path.c_str(), real) == nullptr) return Errno("realpath", path);
  auto id = RecordIdentity(real);
  if (!id) return id.error();
  ToolPin pin{name, real, std::move(id.value())};
  pin.exec_files = ExecClosure(pin.path);
  return pin;
}

std::vector<policy::PolicyError> PinTools(policy::Policy& p) {
  std::vector<policy::PolicyError> errors;
  std::vector<ToolPin> pinned;
  for (ToolPin& spec : p.tools) {
    if (spec.identity.bytes) {  // pinned already
      pinned.push_back(std::move(spec));
      continue;
    }
    auto pin = MakePin(spec.name, spec.path);
    if (!pin) {
      errors.push_back({spec.source, Describe(pin.error())});
      continue;
    }
    pin->source = std::move(spec.source);
    pinned.push_back(std::move(pin.value()));
  }
  p.tools = std::move(pinned);
  return errors;
}

Status CheckMetadata(const ToolPin& pin, int fd) {
  struct stat st;
  if (::fstat(fd, &st) != 0) return Errno("fstat", pin.path);
  if (std::string why = MetadataMismatch(pin.identity, st); !why.empty()) {
    return Refused(pin, why);
  }
  return Ok();
}

Status CheckIdentity(const ToolPin& pin, int fd) {
  if (Status s = CheckMetadata(pin, fd); !s) return s;
  auto want = pin.identity.Sha256();
  if (!want)
    return Refused(pin, "could not be hashed when it was pinned: " + Describe(want.error()));
  auto hash = Sha256Fd(fd, policy::kMaxToolBytes);
  if (!hash) return Refused(pin, "could not be hashed: " + Describe(hash.error()));
  if (!policy::DigestEquals(hash.value(), want.value())) {
    return Refused(pin, "was modified since the policy was loaded (SHA-256)");
  }
  return Ok();
}

ExecDecision DecideExec(const std::vector<ToolPin>& pins, const struct stat& target,
                        int target_fd) {
  ExecDecision d;
  if (pins.empty()) {
    d.allow = true;
    d.reason = "no exec allowlist: allowed by the filesystem rules";
    return d;
  }
  for (const ToolPin& pin : pins) {
    if (pin.identity.dev != target.st_dev || pin.identity.ino != target.st_ino) continue;
    d.pin = &pin;
    // Unchanged since it was hashed (the watch began before the hash): the
    // inode, size and mtime are compared, the bytes need not be read again.
    bool quiet = pin.identity.bytes && pin.identity.bytes->Quiet();
    Status s = quiet ? CheckMetadata(pin, target_fd) : CheckIdentity(pin, target_fd);
    if (!s) {
      d.err = EACCES;
      d.reason = s.error().detail;
      return d;
    }
    d.allow = true;
    d.reason = "tool '" + pin.name + "' matches its pin" +
               (quiet ? " (unchanged since it was hashed)" : " (hashed again)");
    return d;
  }
  d.err = EACCES;
  d.reason = "not on the exec allowlist (inode " + std::to_string(target.st_ino) + ")";
  return d;
}

}  // namespace cordon::supervisor
