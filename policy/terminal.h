// Pseudo-terminals the tool makes for itself: which device paths are its
// own. os.openpty(), script(1), expect-style tests and editors' terminals
// open /dev/ptmx (a new pair, master side) and then /dev/pts/N (its
// subsidiary side). /dev/ptmx is always the tool's: each open makes a new
// pair. /dev/pts/N is the tool's only while it is a pair this run made AND
// the tool holds its master: a number is reused once its pair is gone, and
// the caller's own terminal (a pre-existing /dev/pts/N) is never the
// tool's, so no keystroke or screen of the caller's reaches it.
//
// The supervisor opens both for the tool (supervisor/emulator_pty.cc) and
// gathers the facts; the preload passes these paths through to it (they
// are outside every rule lexically). Pure and async-signal-safe.
#pragma once

namespace cordon::policy {

// kControlling: /dev/tty, the caller's controlling terminal. The tool starts
// in a session of its own without one (supervisor/child.cc), so the kernel
// answers ENXIO, unless it took one of its own pairs (TIOCSCTTY): then it
// names that pair's subsidiary, under the same rule.
enum class TerminalKind { kNone, kMaster, kSubsidiary, kControlling };

struct TerminalPath {
  TerminalKind kind = TerminalKind::kNone;
  int number = -1;  // kSubsidiary: N of /dev/pts/N
};

// "/dev/ptmx" and "/dev/pts/ptmx": kMaster; "/dev/pts/N" (decimal, no
// leading zero): kSubsidiary N; "/dev/tty": kControlling; anything else kNone.
TerminalPath ParseTerminalPath(const char* path);

// Why the tool may not open `t`, or null when it may. `made_in_run`: this
// run opened the master of pair N; `master_held`: the tool holds it now.
const char* TerminalRefusal(const TerminalPath& t, bool made_in_run, bool master_held);

}  // namespace cordon::policy
