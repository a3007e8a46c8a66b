// The replies of a bypass (emulator_bypass.cc, emulator_bypass_more.cc):
// a refusal that stands (not offered, or not allowed) and says why, and an
// operation run outside the policy once. Thread-safe: no state.
#pragma once

#include <spdlog/spdlog.h>

#include <memory>
#include <string>

#include "policy/bypass.h"
#include "supervisor/emulator.h"

namespace cordon::supervisor {

// Not offered after all (the entry is not one a bypass may touch): the
// refusal stands, and says why no one was asked.
inline Reply NotOffered(Reply refused, const std::string& why) {
  refused.why += " (no bypass offered: " + why + ")";
  return refused;
}

// The approver did not allow it: the refusal stands, and says so.
inline Reply Refused(Reply refused, const SysError& e) {
  refused.why += ": " + GateRefusal(e);
  return refused;
}

// The refusal, held by the rest of the call (a Reply is move-only).
inline std::shared_ptr<Reply> Hold(Reply r) { return std::make_shared<Reply>(std::move(r)); }

inline Reply Bypassed(std::string why) {
  spdlog::warn("cordon: ran outside the policy, once (bypass allowed): {}", why);
  Reply r;
  r.bypassed = true;
  r.why = std::move(why);
  return r;
}

// One end of a bypass: its facts (policy/bypass.h) and where it lies
// beneath the workspace's root.
struct Emulator::BypassEnd {
  policy::BypassFacts facts;
  bool allowed = false;  // the policy lets the tool write there
  Located loc;           // beneath the workspace's root (empty outside it)
};

}  // namespace cordon::supervisor
