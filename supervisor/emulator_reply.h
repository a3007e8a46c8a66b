// A notified call as the emulator gets it (Request) and its answer (Reply):
// an errno, a value, an fd to install, or the checked rest of a call that
// may wait. Plain data; split from emulator.h.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "base/fd.h"
#include "base/result.h"
#include "policy/decide.h"

namespace cordon::supervisor {

struct Request {
  uint64_t id = 0;
  pid_t tid = 0;
  int nr = 0;
  uint64_t args[6] = {};
};

struct Reply {
  int64_t val = 0;
  int error = 0;               // errno for the tool; 0 on success
  Fd install;                  // an fd to install in the tool (opens)
  uint32_t install_flags = 0;  // O_CLOEXEC or 0
  // >= 0: `install` goes in at this descriptor number, over what the tool
  // holds there (as dup2), and the call returns `val`, not the number.
  int install_at = -1;
  // O_TRUNC of an existing file: done once `install` is in the tool and
  // before its call returns, so a call that fails to install (EMFILE)
  // leaves the file as it was.
  bool truncate_installed = false;
  // Run instead, once `install` is in the tool and before its call
  // returns: 0, or the errno the call fails with.
  std::function<int()> after_install;
  bool continue_syscall = false;  // execve and umask only
  // Run outside the policy, once: the policy refused it and the approver
  // allowed this one operation (policy/bypass.h). The audit record says
  // "bypassed".
  bool bypassed = false;
  // The checked rest of a call that may wait (a question to a person, a
  // blocking connect), holding what was resolved: the notify loop runs it
  // once on a worker of the kind named and answers with what it returns.
  // Empty: this is the answer.
  enum class Worker {
    kTool,     // a thread of its own with the tool's permissions (ToolPermissions)
    kCapless,  // the capless pool (network connect and bind: capless_pool.h)
  };
  std::function<Reply()> later;
  Worker later_on = Worker::kTool;
  // Run when `install` could not be installed (no room in the tool, or the
  // call interrupted): takes back what the call did, a file it created.
  std::function<void()> undo;
  // For the log: what was refused and the rule; for an allowed call, what
  // the audit log should name (a bypass, a brokered read), else empty.
  std::string why;
  std::string hint;  // for the user: the grant that would allow it (policy/refusal_hint.h)
  static Reply Errno(int e, std::string why = {}, std::string hint = {}) {
    Reply r;
    r.error = e;
    r.why = std::move(why);
    r.hint = std::move(hint);
    return r;
  }
  // The path step refused `what` (policy::CoverPath's reason in e.op, the
  // path in e.detail), or policy::Decide did (`d`, on `path`): the
  // refusal, with the grant or the policy edit that would allow it.
  static Reply PathRefused(const std::string& what, const SysError& e);
  // The same, with the hint naming `hint_path` in place of the path.
  static Reply PathRefused(const std::string& what, const SysError& e, std::string_view hint_path);
  static Reply Refused(const policy::Decision& d, const std::string& what, std::string_view path);
  // PathRefused for a change of the name (policy::NameChangeHint): a
  // delete, a rename's end, a link's new name, a create.
  static Reply NameRefused(const std::string& what, const SysError& e);
};

}  // namespace cordon::supervisor
