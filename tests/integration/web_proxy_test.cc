// The web grants end to end (issue 25): the test build of cordon
// (tools/test_hooks.h) with 127.0.0.1/32 declared public and names answered
// from a table, real curl and python3 clients confined in the run, real
// servers on loopback (web_servers.py, TLS with a CA this test makes with
// the openssl CLI). Ground truth is the servers' log of every connection
// they accepted: a refusal must leave no connection there.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <sstream>
#include <thread>

#include "base/fd.h"
#include "tests/support/test_env.h"

namespace cordon::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

const std::string kSrc = std::string(CORDON_SOURCE_DIR) + "/tests/integration/";

int Sh(const std::string& cmd) { return std::system(cmd.c_str()); }

// The servers, their CA, the resolver table; shared by the suite (one
// start), stopped at its end.
class WebServers {
 public:
  WebServers() {
    dir_ = t_.root() + "/web";
    Sh("mkdir -p " + dir_);
    const std::string d = dir_;
    const std::string ec = " -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes ";
    ok_ = Sh("cd " + d + " && openssl req -x509" + ec + "-keyout ca.key -out ca.pem -days 2 "
             "-subj /CN=cordon-test-ca >/dev/null 2>&1 && openssl req" + ec +
             "-keyout srv.key -out srv.csr -subj /CN=test.example >/dev/null 2>&1 && "
             "printf 'subjectAltName=DNS:test.example,DNS:other.example,DNS:rebind.example\\n' "
             "> ext && openssl x509 -req -in srv.csr -CA ca.pem -CAkey ca.key -set_serial 1 "
             "-days 2 -extfile ext -out srv.pem >/dev/null 2>&1") == 0;
    if (!ok_) return;
    pid_ = ::fork();
    if (pid_ == 0) {
      ::execl("/usr/bin/python3", "python3", (kSrc + "web_servers.py").c_str(), d.c_str(),
              (d + "/srv.pem").c_str(), (d + "/srv.key").c_str(), nullptr);
      _exit(127);
    }
    for (int i = 0; i < 200 && !Exists(d + "/ports"); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    std::istringstream(ReadFile(d + "/ports")) >> https_ >> http_;
    ok_ = https_ > 0 && http_ > 0;
    // The resolver's answers (resolver.h): rebind.example answers a public
    // address first, then one that is not.
    WriteFile(d + "/names",
              "test.example 127.0.0.1\nother.example 127.0.0.1\nprivate.example 10.1.2.3\n"
              "loop.example 127.0.0.2\nmapped.example ::ffff:127.0.0.2\n"
              "mixed.example 127.0.0.1,192.168.1.1\nmeta.example 169.254.169.254\n"
              "rebind.example 127.0.0.1\nrebind.example 127.0.0.2\n");
    Sh("cp " + d + "/ca.pem " + t_.ws() + "/ca.pem");
  }
  ~WebServers() {
    WriteFile(dir_ + "/stop", "");
    if (pid_ > 0) {
      ::kill(pid_, SIGTERM);
      ::waitpid(pid_, nullptr, 0);
    }
  }
  bool ok() const { return ok_; }
  // Every connection accepted so far (one line each, and one per request).
  std::string Hits() const { return ReadFile(dir_ + "/hits"); }
  void ClearHits() const { WriteFile(dir_ + "/hits", ""); }
  std::string Https(const std::string& host, const std::string& path = "/ok") const {
    return "https://" + host + ":" + std::to_string(https_) + path;
  }
  std::string Http(const std::string& host, const std::string& path = "/ok") const {
    return "http://" + host + ":" + std::to_string(http_) + path;
  }
  int https_port() const { return https_; }
  const ScratchTree& tree() const { return t_; }
  std::string names() const { return dir_ + "/names"; }

 private:
  ScratchTree t_;
  std::string dir_;
  pid_t pid_ = -1;
  int https_ = 0, http_ = 0;
  bool ok_ = false;
};

WebServers* g_servers = nullptr;

class WebProxyTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { g_servers = new WebServers; }
  static void TearDownTestSuite() {
    delete g_servers;
    g_servers = nullptr;
  }
  void SetUp() override {
    ASSERT_TRUE(g_servers->ok()) << "the test servers did not start (openssl, /usr/bin/python3)";
    g_servers->ClearHits();
  }
  const WebServers& s() const { return *g_servers; }
  std::string ws() const { return s().tree().ws(); }

  // A policy file naming the https test port as a CONNECT port, and `extra`
  // network settings.
  std::string Policy(const std::string& mode, const std::string& extra = "") const {
    std::string f = s().tree().root() + "/policy.json";
    WriteFile(f, R"({"sandbox":{"network":{"mode":")" + mode + R"(","ports":[443,)" +
                     std::to_string(s().https_port()) + "]" + extra + "}}}");
    return f;
  }
  // cordon_testhooks run under `policy` with `args` as the tool.
  RunResult Run(const std::string& policy, const std::vector<std::string>& tool,
                const std::vector<std::string>& flags = {}) const {
    std::vector<std::string> a = {"run", "--workspace", ws(), "--policy", policy,
                                  "--audit", s().tree().root() + "/audit.jsonl"};
    a.insert(a.end(), flags.begin(), flags.end());
    a.push_back("--");
    a.insert(a.end(), tool.begin(), tool.end());
    return RunCordonTestBuild(a, "",
                              {"CORDON_TEST_PUBLIC_RANGE=127.0.0.1/32",
                               "CORDON_TEST_RESOLVER=" + s().names()});
  }
  RunResult Curl(const std::string& policy, std::vector<std::string> args) const {
    std::vector<std::string> tool = {"/usr/bin/curl", "-sS", "--max-time", "20", "--cacert",
                                     ws() + "/ca.pem"};
    tool.insert(tool.end(), args.begin(), args.end());
    return Run(policy, tool);
  }
  RunResult Client(const std::string& policy, std::vector<std::string> args) const {
    std::vector<std::string> tool = {"/usr/bin/python3", kSrc + "web_client.py"};
    tool.insert(tool.end(), args.begin(), args.end());
    return Run(policy, tool, {"--ro", kSrc});
  }
  std::string Audit() const { return ReadFile(s().tree().root() + "/audit.jsonl"); }
};

TEST_F(WebProxyTest, CurlOverHttpsAndHttpThroughTheProxyWorks) {
  const std::string p = Policy("public-web");
  RunResult r = Curl(p, {s().Https("test.example")});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "ok\n") << r.err;
  EXPECT_THAT(s().Hits(), HasSubstr("https 127.0.0.1"));
  EXPECT_THAT(Audit(), HasSubstr(R"("host":"test.example")"));
  EXPECT_THAT(Audit(), HasSubstr(R"("address":"127.0.0.1")"));
  EXPECT_THAT(Audit(), HasSubstr(R"("result":"allowed")"));
  r = Curl(p, {s().Http("test.example")});
  EXPECT_EQ(r.out, "ok\n") << r.err;
  r = Curl(p, {"-L", s().Http("test.example", "/redirect-same")});
  EXPECT_EQ(r.out, "ok\n") << "a same-origin redirect is followed: " << r.err;
}

TEST_F(WebProxyTest, GoingAroundTheProxyIsRefusedNotAWayOut) {
  const std::string p = Policy("public-web");
  RunResult r = Curl(p, {"--noproxy", "*", "https://127.0.0.1:" + std::to_string(s().https_port()) + "/ok"});
  EXPECT_NE(r.status, 0);
  EXPECT_EQ(s().Hits(), "") << "the server must see no connection";
  r = Curl(p, {"--noproxy", "*", "https://93.184.216.34/"});
  EXPECT_NE(r.status, 0);
  EXPECT_THAT(r.err, HasSubstr("connect to 93.184.216.34:443 under network public-web"));
}

TEST_F(WebProxyTest, EachNonPublicDestinationIsRefusedBeforeAnyConnection) {
  const std::string p = Policy("public-web");
  for (const std::string& url :
       {std::string("https://10.0.0.1/"), std::string("https://[::ffff:127.0.0.2]/"),
        std::string("http://0x7f.0.0.2/"), s().Https("private.example"), s().Https("loop.example"),
        s().Https("mapped.example"), s().Https("mixed.example"), s().Https("meta.example"),
        s().Http("loop.example"), s().Http("mapped.example"), std::string("http://db.internal/")}) {
    RunResult r = Curl(p, {"-f", "-o", "/dev/null", "-w", "%{http_code}", url});
    EXPECT_NE(r.status, 0) << url;
    EXPECT_THAT(r.out + r.err, HasSubstr("403")) << url << r.err;
  }
  EXPECT_EQ(s().Hits(), "") << "no server may see a connection";
  EXPECT_THAT(Audit(), HasSubstr("not public"));
}

TEST_F(WebProxyTest, ARebindingResolverCannotMoveTheConnection) {
  // rebind.example: 127.0.0.1 (declared public) first, then 127.0.0.2. The
  // proxy connects to the address it checked; a second lookup would lead to
  // the 127.0.0.2 server.
  RunResult r = Curl(Policy("public-web"), {s().Https("rebind.example")});
  EXPECT_EQ(r.out, "ok\n") << r.err;
  EXPECT_THAT(s().Hits(), HasSubstr("https 127.0.0.1"));
  EXPECT_THAT(s().Hits(), Not(HasSubstr("127.0.0.2")));
}

TEST_F(WebProxyTest, CredentialsAndNonHttpRequestsGet4xxAndNoConnection) {
  const std::string p = Policy("public-web");
  RunResult r = Client(p, {"raw", "GET http://user:pw@test.example:1/ok HTTP/1.1\\r\\n\\r\\n"});
  EXPECT_THAT(r.out, HasSubstr("403")) << r.err;
  r = Client(p, {"raw", "SSH-2.0-OpenSSH_9.2\\r\\n"});
  EXPECT_THAT(r.out, HasSubstr("HTTP/1.1 400")) << r.err;
  r = Client(p, {"raw", "\\x16\\x03\\x01\\x00\\x05hello"});
  EXPECT_THAT(r.out, HasSubstr("HTTP/1.1 400")) << r.err;
  r = Client(p, {"raw", "POST " + s().Http("test.example") + " HTTP/1.1\\r\\nContent-Length: 0\\r\\n\\r\\n"});
  EXPECT_THAT(r.out, HasSubstr("HTTP/1.1 405")) << "public-web is read only: " << r.err;
  EXPECT_EQ(s().Hits(), "");
}

TEST_F(WebProxyTest, ARedirectToAnotherOriginIsReplacedByARefusal) {
  RunResult r = Curl(Policy("public-web"),
                     {"-L", "-o", "/dev/null", "-w", "%{http_code}", s().Http("test.example", "/redirect-other")});
  EXPECT_EQ(r.out, "403") << r.err;
  EXPECT_THAT(s().Hits(), Not(HasSubstr("/ok"))) << "the other origin is never asked";
}

TEST_F(WebProxyTest, AResponseOverTheCapIsRefusedOrCut) {
  const std::string p = Policy("public-web", R"(,"maxResponseBytes":100000)");
  RunResult r = Curl(p, {"-o", "/dev/null", "-w", "%{http_code}", s().Http("test.example", "/big?n=500000")});
  EXPECT_EQ(r.out, "502") << "a declared length over the cap: " << r.err;
  r = Curl(p, {"-o", "/dev/null", "-w", "%{size_download}", s().Http("test.example", "/big?n=500000&nolength")});
  EXPECT_NE(r.status, 0) << "an undeclared length is cut at the cap, with a reset: " << r.out;
  EXPECT_LE(std::atol(r.out.c_str()), 100000) << r.err;
  r = Curl(p, {"-o", "/dev/null", s().Https("test.example", "/big?n=500000")});
  EXPECT_NE(r.status, 0) << "a tunnel is cut at the cap";
  EXPECT_THAT(Audit(), HasSubstr("over the cap"));
  r = Curl(p, {"-o", "/dev/null", "-w", "%{http_code}", s().Http("test.example", "/big?n=50000")});
  EXPECT_EQ(r.out, "200") << "under the cap: " << r.err;
}

TEST_F(WebProxyTest, ASlowServerPastTheTimeCapGets504) {
  RunResult r = Curl(Policy("public-web", R"(,"timeoutSeconds":2)"),
                     {"-o", "/dev/null", "-w", "%{http_code}", s().Http("test.example", "/slow")});
  EXPECT_EQ(r.out, "504") << r.err;
  EXPECT_THAT(Audit(), HasSubstr("past the time cap"));
}

TEST_F(WebProxyTest, ConnectToAPortTheGrantDoesNotNameIsRefused) {
  std::string f = s().tree().root() + "/default-ports.json";
  WriteFile(f, R"({"sandbox":{"network":{"mode":"public-web"}}})");
  RunResult r = Curl(f, {s().Https("test.example")});
  EXPECT_NE(r.status, 0);
  EXPECT_THAT(r.err, HasSubstr("403"));
  EXPECT_EQ(s().Hits(), "");
}

TEST_F(WebProxyTest, ATlsServerNameOtherThanTheTunnelsIsRefused) {
  const std::string p = Policy("public-web");
  const std::string target = "test.example:" + std::to_string(s().https_port());
  RunResult r = Client(p, {"sni", target, "other.example", ws() + "/ca.pem"});
  EXPECT_THAT(r.out, HasSubstr("tls refused")) << r.err;
  EXPECT_EQ(s().Hits(), "") << "no connection for a mismatched name";
  r = Client(p, {"sni", target, "test.example", ws() + "/ca.pem"});
  EXPECT_THAT(r.out, HasSubstr("tls HTTP/1.1 200")) << r.err;
}

TEST_F(WebProxyTest, HostsAllowsOnlyTheListedNamesAndEveryMethod) {
  const std::string p = Policy("hosts:test.example");
  RunResult r = Curl(p, {s().Https("test.example")});
  EXPECT_EQ(r.out, "ok\n") << r.err;
  r = Curl(p, {"-d", "abc", s().Http("test.example")});
  EXPECT_EQ(r.out, "posted 3\n") << r.err;
  s().ClearHits();
  r = Curl(p, {s().Https("other.example")});
  EXPECT_NE(r.status, 0);
  EXPECT_THAT(r.err, HasSubstr("403"));
  EXPECT_EQ(s().Hits(), "");
}

// Issue 24 item 6 for the web grant: the proxy's refusal line names the
// grant that lets the request through, and those words appended to the
// command line do. A name that resolves inward takes the host's network.
TEST_F(WebProxyTest, FollowingTheProxysHintGetsTheRequestThrough) {
  const std::string p = Policy("hosts:test.example");
  RunResult r = Curl(p, {s().Https("other.example")});
  EXPECT_NE(r.status, 0);
  EXPECT_THAT(r.err, HasSubstr("to allow it: --network hosts:test.example,other.example"));
  EXPECT_EQ(s().Hits(), "");
  const std::vector<std::string> curl = {"/usr/bin/curl", "-sS",           "--max-time", "20",
                                         "--cacert",      ws() + "/ca.pem"};
  auto with = [&](std::vector<std::string> tool, const std::string& url) {
    tool.push_back(url);
    return tool;
  };
  r = Run(p, with(curl, s().Https("other.example")),
          {"--network", "hosts:test.example,other.example"});
  EXPECT_EQ(r.out, "ok\n") << r.err;
  const std::string web = Policy("public-web");
  r = Curl(web, {"-d", "abc", s().Http("test.example")});
  EXPECT_THAT(r.err, HasSubstr("to allow it: --network hosts:test.example"));
  r = Run(web, with(with(with(curl, "-d"), "abc"), s().Http("test.example")),
          {"--network", "hosts:test.example"});
  EXPECT_EQ(r.out, "posted 3\n") << r.err;
  r = Curl(web, {s().Https("loop.example")});
  EXPECT_THAT(r.err, HasSubstr("not public; to allow it: --network allow"));
}

// Issue 27 item 2: a policy reload narrows the proxy's hosts for the
// connections that follow; a wider list is refused and changes nothing.
TEST_F(WebProxyTest, AReloadNarrowsTheHostsTheProxyLetsThrough) {
  const std::string state = s().tree().root() + "/reload-state";
  const std::vector<std::string> env = {"CORDON_TEST_PUBLIC_RANGE=127.0.0.1/32",
                                        "CORDON_TEST_RESOLVER=" + s().names(),
                                        "XDG_STATE_HOME=" + state};
  auto policy = [&](const std::string& name, const std::string& hosts) {
    const std::string f = s().tree().root() + "/" + name;
    WriteFile(f, R"({"sandbox":{"network":{"mode":"hosts:)" + hosts + R"("}}})");
    return f;
  };
  const std::string ready = ws() + "/reload-ready", go = ws() + "/reload-go";
  auto curls = [&](const std::string& when) {
    std::string sh;
    for (const char* host : {"test.example", "other.example"}) {
      sh += "/usr/bin/curl -s -o /dev/null --max-time 20 -w '" + when + " " + host +
            " %{http_code}\\n' " + s().Http(host) + "; ";
    }
    return sh;
  };
  const std::string script = curls("before") + ": > " + ready + "; while [ ! -e " + go +
                             " ]; do sleep 0.05; done; " + curls("after");
  RunResult r;
  std::thread tool([&] {
    r = RunCordonTestBuild(
        {"run", "--workspace", ws(), "--policy", policy("both.json", "test.example,other.example"),
         "--", "/bin/sh", "-c", script},
        ws(), env);
  });
  for (int i = 0; i < 800 && !Exists(ready); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  RunResult list = RunCordon({"runs", "list"}, ws(), env);
  const std::string run = list.out.substr(0, list.out.find(' '));
  RunResult wider = RunCordon(
      {"policy", "reload", "--run", run, policy("wider.json", "test.example,third.example")}, ws(),
      env);
  RunResult narrower =
      RunCordon({"policy", "reload", "--run", run, policy("one.json", "test.example")}, ws(), env);
  WriteFile(go, "");
  tool.join();
  ::unlink(ready.c_str());
  ::unlink(go.c_str());
  EXPECT_EQ(wider.status, 125) << wider.out << wider.err;
  EXPECT_THAT(wider.err, HasSubstr("not widen them (third.example)"));
  EXPECT_EQ(narrower.status, 0) << narrower.out << narrower.err;
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out,
            "before test.example 200\nbefore other.example 200\n"
            "after test.example 200\nafter other.example 403\n")
      << r.err;
  // The refused request reached no server: two connections before, one after.
  const std::string hits = s().Hits();
  size_t connections = 0;
  for (size_t at = 0; (at = hits.find("http 127.0.0.1 \n", at)) != std::string::npos; ++at) {
    ++connections;
  }
  EXPECT_EQ(connections, 3u) << hits;
  const std::string audit = ReadFile(state + "/cordon/runs/" + run + "/audit.jsonl");
  EXPECT_THAT(audit, HasSubstr(R"("outcome":"refused")"));
  EXPECT_THAT(audit, HasSubstr(R"("outcome":"accepted")"));
}

TEST_F(WebProxyTest, TheToolGetsTheProxyVariables) {
  RunResult r = Run(Policy("public-web"), {"/usr/bin/python3", kSrc + "web_client.py", "env"},
                    {"--ro", kSrc});
  for (const char* v : {"HTTPS_PROXY=http://127.0.0.1:", "https_proxy=http://127.0.0.1:",
                        "ALL_PROXY=", "npm_config_https_proxy=", "NO_PROXY=localhost,127.0.0.1,::1",
                        "GIT_CONFIG_KEY_0=http.proxy", "GIT_CONFIG_VALUE_0=http://127.0.0.1:",
                        "GIT_CONFIG_COUNT=1"}) {
    EXPECT_THAT(r.out, HasSubstr(v)) << r.err;
  }
}

TEST_F(WebProxyTest, AHostProcessGetsNoServiceFromTheProxy) {
  const std::string p = Policy("public-web");
  RunResult r;
  const std::string request = "GET " + s().Http("test.example") + " HTTP/1.1\\r\\n\\r\\n";
  std::thread tool([&] { r = Client(p, {"hold", ws(), request}); });
  for (int i = 0; i < 400 && !Exists(ws() + "/proxy"); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  const std::string url = ReadFile(ws() + "/proxy");
  std::string got = "<no proxy>";
  if (url.rfind("http://127.0.0.1:", 0) == 0) {
    // This process is the host: it finds the port and asks.
    Fd c(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(static_cast<uint16_t>(std::stoi(url.substr(17))));
    timeval tv{10, 0};
    ::setsockopt(c.get(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    if (::connect(c.get(), reinterpret_cast<sockaddr*>(&a), sizeof a) == 0) {
      const std::string req = "GET " + s().Http("test.example") + " HTTP/1.1\r\n\r\n";
      (void)!::send(c.get(), req.data(), req.size(), MSG_NOSIGNAL);
      char buf[256];
      ssize_t n = ::recv(c.get(), buf, sizeof buf, 0);
      got = n > 0 ? std::string(buf, static_cast<size_t>(n)) : "closed";
    }
  }
  WriteFile(ws() + "/go", "");
  tool.join();
  EXPECT_EQ(got, "closed") << "the host's request must get no answer";
  EXPECT_EQ(r.out, "HTTP/1.1 200 OK\n") << "the tool's own still works: " << r.err;
  const std::string hits = s().Hits();
  size_t connections = 0;
  for (size_t at = 0; (at = hits.find("http 127.0.0.1 \n", at)) != std::string::npos; ++at) {
    ++connections;
  }
  EXPECT_EQ(connections, 1u) << "one connection only, the tool's: " << hits;
  EXPECT_THAT(Audit(), HasSubstr("not the run's tool's"));
  ::unlink((ws() + "/proxy").c_str());
  ::unlink((ws() + "/go").c_str());
}

TEST_F(WebProxyTest, GitClonesOverHttpsThroughTheProxy) {
  // A dumb-http repository on the https server; git finds the proxy in
  // GIT_CONFIG_* (http.proxy), the CA in GIT_SSL_CAINFO.
  const std::string files = s().tree().root() + "/web/files";
  ASSERT_EQ(Sh("rm -rf " + files + " /tmp/cordon-web-src-$$ && mkdir -p " + files +
               " && cd " + files + " && git init -q src && cd src && git config user.email t@t && "
               "git config user.name t && echo hi > f && git add f && git commit -qm one && cd .. && "
               "git clone -q --bare src repo.git && git -C repo.git update-server-info"),
            0);
  std::vector<std::string> a = {"run", "--workspace", ws(), "--profile", "workspace-write",
                                "--policy", Policy("hosts:test.example"), "--",
                                "/usr/bin/git", "clone", "-q",
                                s().Https("test.example", "/files/repo.git"), "cloned"};
  RunResult r = RunCordonTestBuild(a, "",
                                   {"CORDON_TEST_PUBLIC_RANGE=127.0.0.1/32",
                                    "CORDON_TEST_RESOLVER=" + s().names(),
                                    "GIT_SSL_CAINFO=" + ws() + "/ca.pem"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(ReadFile(ws() + "/cloned/f"), "hi\n");
  Sh("rm -rf " + ws() + "/cloned");
}

TEST_F(WebProxyTest, PipDownloadsFromASimpleIndexThroughTheProxy) {
  // A one-file wheel on a PEP 503 simple index on the https server.
  const std::string files = s().tree().root() + "/web/files";
  ASSERT_EQ(Sh("mkdir -p " + files + "/simple/cordonpkg && cd " + files + " && /usr/bin/python3 -c \""
               "import zipfile\n"
               "z = zipfile.ZipFile('cordonpkg-1.0-py3-none-any.whl', 'w')\n"
               "z.writestr('cordonpkg/__init__.py', '')\n"
               "z.writestr('cordonpkg-1.0.dist-info/METADATA', 'Metadata-Version: 2.1\\nName: cordonpkg\\nVersion: 1.0\\n')\n"
               "z.writestr('cordonpkg-1.0.dist-info/WHEEL', 'Wheel-Version: 1.0\\nGenerator: t\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n')\n"
               "z.writestr('cordonpkg-1.0.dist-info/RECORD', '')\n"
               "z.close()\" && printf '<a href=\"../../cordonpkg-1.0-py3-none-any.whl\">cordonpkg-1.0-py3-none-any.whl</a>\\n' "
               "> simple/cordonpkg/index.html"),
            0);
  std::vector<std::string> a = {
      "run", "--workspace", ws(), "--profile", "workspace-write", "--policy",
      Policy("hosts:test.example"), "--", "/usr/bin/python3", "-m", "pip", "--isolated", "download",
      "--no-deps", "--no-cache-dir", "--disable-pip-version-check", "--only-binary=:all:",
      "--cert", ws() + "/ca.pem", "--index-url", s().Https("test.example", "/files/simple/"),
      "-d", ws() + "/dl", "cordonpkg"};
  // requests prefers REQUESTS_CA_BUNDLE (set on this machine) over --cert.
  RunResult r = RunCordonTestBuild(a, "",
                                   {"CORDON_TEST_PUBLIC_RANGE=127.0.0.1/32",
                                    "CORDON_TEST_RESOLVER=" + s().names(),
                                    "REQUESTS_CA_BUNDLE=" + ws() + "/ca.pem"});
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_TRUE(Exists(ws() + "/dl/cordonpkg-1.0-py3-none-any.whl")) << r.out << r.err;
  Sh("rm -rf " + ws() + "/dl");
}

// npm install of a tarball URL (issue 25): a package in npm's own layout
// (package/package.json in a .tgz) on the https test server; npm takes the
// proxy from the npm_config_* variables cordon sets for the tool.
TEST_F(WebProxyTest, NpmInstallsATarballThroughTheProxy) {
  ASSERT_TRUE(Exists("/usr/bin/npm")) << "npm is missing: tools/bootstrap.sh installs it";
  const std::string files = s().tree().root() + "/web/files";
  ASSERT_EQ(Sh("mkdir -p " + files + "/npm/package && cd " + files + "/npm && printf "
               "'{\"name\":\"cordon-npm-test\",\"version\":\"1.0.0\",\"main\":\"index.js\"}' "
               "> package/package.json && echo 'module.exports = 42;' > package/index.js && "
               "tar czf ../cordon-npm-test-1.0.0.tgz package"),
            0);
  const std::string app = ws() + "/app";
  ASSERT_EQ(Sh("mkdir -p " + app), 0);
  WriteFile(app + "/package.json", R"({"name":"app","version":"1.0.0","private":true})");
  std::vector<std::string> a = {
      "run", "--workspace", ws(), "--profile", "workspace-write", "--policy",
      Policy("hosts:test.example"), "--", "/usr/bin/npm", "install", "--prefix", app,
      "--no-audit", "--no-fund", "--no-update-notifier", "--fetch-retries=0", "--cafile",
      ws() + "/ca.pem",
      s().Https("test.example", "/files/cordon-npm-test-1.0.0.tgz")};
  RunResult r = RunCordonTestBuild(a, "",
                                   {"CORDON_TEST_PUBLIC_RANGE=127.0.0.1/32",
                                    "CORDON_TEST_RESOLVER=" + s().names(),
                                    "NODE_EXTRA_CA_CERTS=" + ws() + "/ca.pem"});
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_EQ(ReadFile(app + "/node_modules/cordon-npm-test/index.js"), "module.exports = 42;\n")
      << r.out << r.err;
  EXPECT_THAT(s().Hits(), HasSubstr("/files/cordon-npm-test-1.0.0.tgz"));
  // npm told to go around the proxy, straight to the server's address,
  // gets nowhere: no connection reaches the server.
  Sh("rm -rf " + app + "/node_modules " + app + "/package-lock.json");
  s().ClearHits();
  std::vector<std::string> around = a;
  around.back() = "https://127.0.0.1:" + std::to_string(s().https_port()) +
                  "/files/cordon-npm-test-1.0.0.tgz";
  around.insert(around.end() - 1, "--noproxy=*");
  RunResult n = RunCordonTestBuild(around, "",
                                   {"CORDON_TEST_PUBLIC_RANGE=127.0.0.1/32",
                                    "CORDON_TEST_RESOLVER=" + s().names(),
                                    "NODE_EXTRA_CA_CERTS=" + ws() + "/ca.pem"});
  EXPECT_NE(n.status, 0) << n.out;
  EXPECT_FALSE(Exists(app + "/node_modules/cordon-npm-test/index.js"));
  EXPECT_EQ(s().Hits(), "");
  Sh("rm -rf " + app);
}

// cordon fetch (issue 25 item 4): the early refusal, then a fixed curl
// confined under public-web through the same proxy.
TEST_F(WebProxyTest, FetchPrintsTheBodyFollowsSameOriginRedirectsAndRefuses) {
  const std::vector<std::string> env = {"CORDON_TEST_PUBLIC_RANGE=127.0.0.1/32",
                                        "CORDON_TEST_RESOLVER=" + s().names()};
  RunResult r = RunCordonTestBuild({"fetch", s().Http("test.example")}, "", env);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "ok\n");
  r = RunCordonTestBuild({"fetch", s().Http("test.example", "/redirect-same")}, "", env);
  EXPECT_EQ(r.out, "ok\n") << r.err;
  r = RunCordonTestBuild({"fetch", "--json", s().Http("test.example")}, "", env);
  EXPECT_THAT(r.out, HasSubstr(R"("status":200)")) << r.err;
  EXPECT_THAT(r.out, HasSubstr(R"("body":"ok\n")"));
  s().ClearHits();
  for (const char* url : {"http://10.0.0.1/", "http://user:pw@test.example/", "ftp://a.example.com/",
                          "http://db.internal/"}) {
    r = RunCordonTestBuild({"fetch", url}, "", env);
    EXPECT_EQ(r.status, 125) << url << r.err;
    EXPECT_THAT(r.err, HasSubstr("refused")) << url;
  }
  r = RunCordonTestBuild({"fetch", s().Http("loop.example")}, "", env);
  EXPECT_EQ(r.status, 1) << "a name resolving to loopback: " << r.err;
  EXPECT_THAT(r.out, HasSubstr("not public"));
  r = RunCordonTestBuild({"fetch", s().Http("test.example", "/redirect-other")}, "", env);
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_EQ(s().Hits().find("/ok"), std::string::npos) << "the other origin is never asked";
  r = RunCordonTestBuild({"fetch", "--max-bytes", "1000", s().Http("test.example", "/big?n=500000")},
                         "", env);
  EXPECT_NE(r.status, 0);
  EXPECT_LE(r.out.size(), 1000u);
  // Over https the proxy cannot see a redirect: cordon fetch's own check
  // refuses one to another origin. The test port is a CONNECT port by the
  // user's settings file; the CA by CURL_CA_BUNDLE.
  const std::string xdg = s().tree().root() + "/xdg";
  Sh("mkdir -p " + xdg + "/cordon");
  WriteFile(xdg + "/cordon/settings.json", R"({"sandbox":{"network":{"ports":[443,)" +
                                               std::to_string(s().https_port()) + "]}}}");
  std::vector<std::string> tls = env;
  tls.push_back("XDG_CONFIG_HOME=" + xdg);
  tls.push_back("CURL_CA_BUNDLE=" + ws() + "/ca.pem");
  r = RunCordonTestBuild({"fetch", s().Https("test.example")}, "", tls);
  EXPECT_EQ(r.out, "ok\n") << r.err;
  s().ClearHits();
  r = RunCordonTestBuild({"fetch", s().Https("test.example", "/redirect-other")}, "", tls);
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_THAT(r.err, HasSubstr("same-origin redirects only"));
  EXPECT_EQ(s().Hits().find("/ok"), std::string::npos) << "the other origin is never asked";
}

TEST(WebProxyRelease, TheReleaseBuildRefusesTheTestSettings) {
  ScratchTree t;
  RunResult r = RunCordon({"run", "--workspace", t.ws(), "--network", "public-web", "--", "/bin/true"},
                          "", {"CORDON_TEST_PUBLIC_RANGE=127.0.0.1/32"});
  EXPECT_EQ(r.status, 125);
  EXPECT_THAT(r.err, HasSubstr("test-only setting"));
  r = RunCordon({"run", "--workspace", t.ws(), "--network", "public-web", "--", "/bin/true"});
  EXPECT_EQ(r.status, 0) << r.err;
}

TEST(WebProxyCli, BadNetworkModesAreOneLineErrors) {
  ScratchTree t;
  for (const char* mode : {"hosts:", "hosts:10.0.0.1", "hosts:a.com,,b.com", "web"}) {
    RunResult r = RunCordon({"run", "--workspace", t.ws(), "--network", mode, "--", "/bin/true"});
    EXPECT_EQ(r.status, 125) << mode;
    EXPECT_THAT(r.err, HasSubstr("--network")) << mode;
  }
  RunResult r = RunCordon({"policy", "explain", "--workspace", t.ws(), "--network",
                           "hosts:github.com,*.npmjs.org"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("hosts: github.com, *.npmjs.org"));
}

}  // namespace
}  // namespace cordon::testing
