// The web proxy of a public-web or hosts: run (supervisor/net/web_proxy.h):
// started before the tool, its URL in the tool's environment, its peers
// given to the emulator (which connects the tool to it), its requests in
// the audit log.
#pragma once

#include <memory>

#include "policy/policy.h"
#include "supervisor/launcher.h"
#include "supervisor/net/web_proxy.h"

namespace cordon::tools {

// Starts the proxy when p.network needs one and wires it into `req`
// (after req.emulator.observer is set). False, logged, when it cannot start
// or a test hook is refused (tools/test_hooks.h); *out stays null otherwise
// when no proxy is needed.
bool StartRunProxy(const policy::Policy& p, supervisor::LaunchRequest& req,
                   std::unique_ptr<supervisor::WebProxy>* out);

// Refuses a test hook this build does not honour: false, logged.
bool CheckTestHooks();

}  // namespace cordon::tools
