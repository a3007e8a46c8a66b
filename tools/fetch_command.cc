// cordon fetch [--max-bytes N] [--timeout S] [--json] URL: seed 002's fixed
// web tool (issue 25 item 4). The early URL refusal (policy::CheckWebUrl)
// first; then one fixed curl (/usr/bin/curl, pinned, fixed arguments, no
// shell) runs confined under network public-web, so every name is
// resolved, checked and pinned by the same web proxy as any run's; it
// writes the response into a private directory that is the run's only
// writable place. A redirect is followed by cordon, to the same origin
// only (at most 5); the body is capped (curl's --max-filesize and the
// proxy's maxResponseBytes) and printed, or with --json the status, final
// URL, headers and body.
#include <spdlog/spdlog.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <nlohmann/json.hpp>

#include "policy/policy_json.h"
#include "policy/web_request.h"
#include "policy/web_url.h"
#include "supervisor/exec/tool_pin.h"
#include "supervisor/launcher.h"
#include "supervisor/remove_tree.h"
#include "tools/grep_command.h"
#include "tools/fetch_command.h"
#include "tools/run_command.h"

extern char** environ;

namespace cordon::tools {
namespace {

constexpr const char* kCurl = "/usr/bin/curl";
constexpr int kMaxRedirects = 5;

struct FetchOptions {
  uint64_t max_bytes = 10u << 20;
  unsigned timeout_s = 30;
  bool json = false;
  std::string url;
};

std::string ReadAll(const std::string& path) {
  std::string out;
  if (FILE* f = std::fopen(path.c_str(), "rb")) {
    char buf[65536];
    for (size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;) out.append(buf, n);
    std::fclose(f);
  }
  return out;
}

// The last response head curl wrote with -D (a CONNECT's own 200 comes
// first through the proxy).
std::string LastHead(const std::string& heads) {
  size_t at = heads.rfind("HTTP/");
  while (at != std::string::npos && at > 0 && heads[at - 1] != '\n') at = heads.rfind("HTTP/", at - 1);
  return at == std::string::npos ? std::string() : heads.substr(at);
}

int Fetch(const FetchOptions& f) {
  policy::UrlCheck c = policy::CheckWebUrl(f.url);
  if (!c.url) {
    spdlog::error("cordon fetch: {} refused: {}", f.url.substr(0, 200), c.refusal);
    return supervisor::kExitCordonError;
  }
  char dir_template[] = "/tmp/cordon-fetch-XXXXXX";
  if (::mkdtemp(dir_template) == nullptr) {
    spdlog::error("cordon fetch: cannot make a private directory");
    return supervisor::kExitCordonError;
  }
  const std::string dir = dir_template;
  RunOptions o;
  o.workspace = dir;
  o.profile = "workspace-write";
  o.network = "public-web";
  o.audit_header["fetch"] = {{"url", f.url}};
  std::vector<std::string> caller;
  for (char** e = environ; e && *e; ++e) caller.emplace_back(*e);
  std::vector<std::string> env = ScrubbedEnv(caller);
  for (const std::string& e : caller) {  // the caller's CA bundle, read-only
    if (e.starts_with("CURL_CA_BUNDLE=/") || e.starts_with("SSL_CERT_FILE=/")) {
      env.push_back(e);
      o.ro.push_back(e.substr(e.find('=') + 1));
    }
  }
  policy::WebUrl url = *c.url;
  std::string text = f.url;
  int status = 0;
  for (int hop = 0;; ++hop) {
    policy::Policy p;
    if (!BuildPolicy(o, p)) return supervisor::kExitCordonError;
    p.web.timeout_seconds = f.timeout_s;
    p.web.max_response_bytes = f.max_bytes + (1u << 16);  // TLS and headers besides the body
    auto pin = supervisor::MakePin("curl", kCurl);
    if (!pin) {
      spdlog::error("cordon fetch: {}", Describe(pin.error()));
      return supervisor::kExitCordonError;
    }
    p.tools.push_back(std::move(pin.value()));
    // -q first: no ~/.curlrc; the arguments are these and no others.
    std::vector<std::string> argv = {kCurl, "-q", "-sS", "--proto", "=http,https", "--max-time",
                                     std::to_string(f.timeout_s), "--max-filesize",
                                     std::to_string(f.max_bytes), "-D", dir + "/head",
                                     "-o", dir + "/body", "--", text};
    status = RunTool(o, p, std::move(argv), &env);
    if (status != 0) break;
    policy::ResponseHead h;
    const std::string head = LastHead(ReadAll(dir + "/head"));
    if (policy::ParseResponseHead(head, &h) != policy::HeadParse::kOk) {
      spdlog::error("cordon fetch: no HTTP response from {}", text.substr(0, 200));
      status = 1;
      break;
    }
    if (h.status < 300 || h.status >= 400 || h.location.empty()) {
      const std::string body = ReadAll(dir + "/body");
      if (!f.json) {
        std::fwrite(body.data(), 1, body.size(), stdout);
      } else {
        nlohmann::json headers = nlohmann::json::array();
        size_t pos = head.find("\r\n");
        while (pos != std::string::npos && pos + 2 < head.size()) {
          size_t end = head.find("\r\n", pos + 2);
          std::string line = head.substr(pos + 2, end - pos - 2);
          if (line.empty()) break;
          const size_t colon = line.find(':');
          if (colon != std::string::npos) {
            size_t v = colon + 1;
            while (v < line.size() && line[v] == ' ') ++v;
            headers.push_back({policy::JsonText(line.substr(0, colon)), policy::JsonText(line.substr(v))});
          }
          pos = end;
        }
        nlohmann::json j = {{"status", h.status}, {"url", text}, {"headers", headers},
                            {"body", policy::JsonText(body)}};
        std::printf("%s\n", j.dump().c_str());
      }
      status = h.status >= 400 ? 1 : 0;
      break;
    }
    if (hop == kMaxRedirects || !policy::SameOrigin(url, h.location)) {
      spdlog::error("cordon fetch: a redirect to {} refused: {}", h.location.substr(0, 200),
                    hop == kMaxRedirects ? "more than 5 redirects" : "same-origin redirects only");
      status = 1;
      break;
    }
    text = policy::ResolveLocation(url, h.location);
    c = policy::CheckWebUrl(text);
    if (!c.url) {
      spdlog::error("cordon fetch: a redirect to {} refused: {}", text.substr(0, 200), c.refusal);
      status = 1;
      break;
    }
    url = *c.url;
  }
  (void)supervisor::RemoveTree(dir);
  return status;
}

}  // namespace

void RegisterFetch(CLI::App& app, int& exit_code) {
  static FetchOptions f;
  CLI::App* cmd = app.add_subcommand(
      "fetch", "fetch one public http(s) URL through cordon's pinned web proxy (seed 002's web tool)");
  cmd->add_option("--max-bytes", f.max_bytes, "the most of the body to take (default 10 MiB)")
      ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 40));
  cmd->add_option("--timeout", f.timeout_s, "seconds for each request (default 30)")
      ->check(CLI::Range(1u, 3600u));
  cmd->add_flag("--json", f.json, "status, final URL, headers and body as one JSON object");
  cmd->add_option("url", f.url, "http:// or https:// URL")->required();
  cmd->callback([&exit_code] { exit_code = Fetch(f); });
}

}  // namespace cordon::tools
