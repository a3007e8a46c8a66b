#include "tools/run_web_proxy.h"

#include <spdlog/spdlog.h>

#include "tools/test_hooks.h"

namespace cordon::tools {

bool CheckTestHooks() {
  NetTestHooks hooks;
  std::string error;
  if (ReadNetTestHooks(&hooks, &error)) return true;
  spdlog::error("{}", error);
  return false;
}

bool StartRunProxy(const policy::Policy& p, supervisor::LaunchRequest& req,
                   std::unique_ptr<supervisor::WebProxy>* out) {
  NetTestHooks hooks;
  std::string error;
  if (!ReadNetTestHooks(&hooks, &error)) {
    spdlog::error("{}", error);
    return false;
  }
  if (!policy::NetworkProxied(p.network)) return true;
  supervisor::WebProxyOptions o;
  o.network = p.network;
  o.grant = p.web;
  o.also_public = hooks.also_public;
  if (!hooks.resolver_table.empty()) {
    auto table = supervisor::TableResolver(hooks.resolver_table);
    if (!table) {
      spdlog::error("CORDON_TEST_RESOLVER: {}", Describe(table.error()));
      return false;
    }
    o.resolver = std::move(table.value());
  }
  if (auto observer = req.emulator.observer) {
    o.on_event = [observer](const supervisor::ProxyEvent& e) { observer->Proxied(e); };
  }
  auto proxy = supervisor::WebProxy::Start(std::move(o));
  if (!proxy) {
    spdlog::error("web proxy: {}", Describe(proxy.error()));
    return false;
  }
  *out = std::move(proxy.value());
  req.emulator.web_proxy = (*out)->peers();
  req.web_proxy_url = (*out)->Url();
  spdlog::info("network {}: the tool's web goes through cordon's proxy at {}",
               policy::NetworkName(p.network), req.web_proxy_url);
  return true;
}

}  // namespace cordon::tools
