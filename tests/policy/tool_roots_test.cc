// The pure half of the tool-path grants (policy/tool_roots.h): which
// toolchain root a path belongs to, what is never granted, a `#!` line.
#include "policy/tool_roots.h"

#include <gtest/gtest.h>

namespace cordon::policy {
namespace {

std::string Roots(const char* path) {
  ToolRootContext ctx{"/home/u", "/runner/_tool"};
  ToolchainRoot r = ToolchainRootOf(path, ctx);
  std::string out = r.layout ? r.layout : "-";
  for (const auto& s : r.roots) out += " " + s;
  return out;
}

TEST(ToolRoots, EachLayoutGrantsItsInstallRoot) {
  struct Case { const char* path; const char* want; } cases[] = {
      {"/home/u/.pyenv/shims", "pyenv /home/u/.pyenv"},
      {"/home/u/.pyenv/versions/3.12/bin/python3", "pyenv /home/u/.pyenv"},
      {"/home/u/.nvm/versions/node/v20.1.0/bin", "nvm /home/u/.nvm/versions/node/v20.1.0"},
      {"/home/u/.nvm/versions/node", "nvm"},  // above the installs: no root
      {"/home/u/.cargo/bin", "cargo /home/u/.cargo /home/u/.rustup"},
      {"/home/u/.rustup/toolchains/x/bin", "cargo /home/u/.rustup /home/u/.cargo"},
      {"/home/u/.local/bin",
       "~/.local /home/u/.local/bin /home/u/.local/lib /home/u/.local/share/pipx "
       "/home/u/.local/share/uv/tools /home/u/.local/share/uv/python"},
      {"/home/u/.local/share/keyrings", "-"},  // not a tool subtree
      {"/home/u/go/bin", "go /home/u/go"},
      {"/home/u/.asdf/shims", "asdf /home/u/.asdf"},
      {"/home/u/.sdkman/candidates/java/current/bin", "sdkman /home/u/.sdkman/candidates"},
      {"/home/u/.volta/bin", "volta /home/u/.volta"},
      {"/home/u/.bun/bin", "bun /home/u/.bun"},
      {"/home/u/.deno/bin", "deno /home/u/.deno"},
      {"/home/u/bin", "-"},
      {"/home/u", "-"},
      {"/opt/hostedtoolcache/go/1.22.0/x64/bin", "hostedtoolcache /opt/hostedtoolcache/go/1.22.0/x64"},
      {"/opt/hostedtoolcache/go", "hostedtoolcache"},
      {"/runner/_tool/node/20.0.0/x64/bin", "hostedtoolcache /runner/_tool/node/20.0.0/x64"},
      {"/opt/zig/bin", "/opt /opt/zig"},
      {"/opt", "/opt"},
      {"/usr/local/bin", "/usr/local /usr/local"},
      {"/home/linuxbrew/.linuxbrew/bin", "linuxbrew /home/linuxbrew/.linuxbrew"},
      {"/snap/bin", "-"},
      {"/home/u/.pyenvx/bin", "-"},
  };
  for (const Case& c : cases) EXPECT_EQ(Roots(c.path), c.want) << c.path;
}

TEST(ToolRoots, AToolchainsOwnVariableNamesItsRootWhereverHomeIs) {
  ToolRootContext ctx{"/home/u", "", {{"PYENV_ROOT", "/srv/py"}, {"NVM_DIR", "/srv/nvm"},
                                      {"CARGO_HOME", "/srv/cargo"}, {"RUSTUP_HOME", "/srv/rustup"},
                                      {"GOPATH", "/home/u"}}};
  auto roots = [&](const char* path) {
    ToolchainRoot r = ToolchainRootOf(path, ctx);
    std::string out = r.layout ? r.layout : "-";
    for (const auto& s : r.roots) out += " " + s;
    return out;
  };
  EXPECT_EQ(roots("/srv/py/shims"), "pyenv /srv/py");
  EXPECT_EQ(roots("/srv/nvm/versions/node/v20.1.0/bin"), "nvm /srv/nvm/versions/node/v20.1.0");
  EXPECT_EQ(roots("/srv/cargo/bin"), "cargo /srv/cargo /srv/rustup");
  // GOPATH naming the home itself names no install: the home layouts decide.
  EXPECT_EQ(roots("/home/u/bin"), "-");
  EXPECT_EQ(roots("/home/u/.pyenv/shims"), "pyenv /home/u/.pyenv");
}

TEST(ToolRoots, WithoutAHomeOnlyAbsoluteLayoutsAreKnown) {
  ToolRootContext ctx;
  EXPECT_EQ(ToolchainRootOf("/home/u/.pyenv/shims", ctx).layout, nullptr);
  EXPECT_STREQ(ToolchainRootOf("/opt/x/bin", ctx).layout, "/opt");
}

TEST(ToolRoots, NeverTheRootTheHomeOrItsAncestorsOrTheKernel) {
  ToolRootContext ctx{"/home/u", ""};
  for (const char* p : {"/", "/home", "/home/u", "/proc/1", "/sys/x", "/dev", "/dev/shm"}) {
    EXPECT_NE(WideningRefusal(p, ctx), nullptr) << p;
  }
  for (const char* p : {"/home/u/bin", "/home/v", "/opt/x", "/usr/local/bin"}) {
    EXPECT_EQ(WideningRefusal(p, ctx), nullptr) << p;
  }
}

TEST(ToolRoots, ShebangLines) {
  auto s = ParseShebang("#!/usr/bin/env python3");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->interpreter, "/usr/bin/env");
  EXPECT_EQ(s->env_program, "python3");
  s = ParseShebang("#! /usr/bin/env -S A=1 node --flag");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->env_program, "node");
  s = ParseShebang("#!/home/u/.venv/bin/python -u\r");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->interpreter, "/home/u/.venv/bin/python");
  EXPECT_EQ(s->env_program, "");
  EXPECT_FALSE(ParseShebang("\x7f" "ELF"));
  EXPECT_FALSE(ParseShebang("#!python3"));
  EXPECT_FALSE(ParseShebang("#!"));
  EXPECT_FALSE(ParseShebang(""));
}

// What a tool's input variable names: one path, OpenSSL's ':' list, pip's
// whitespace list of paths and URLs; relative paths and URLs name nothing.
TEST(ToolRoots, EachInputVariableNamesItsPaths) {
  using V = std::vector<std::string>;
  EXPECT_EQ(ToolInputPaths("NODE_EXTRA_CA_CERTS", "/home/u/corp ca.pem"), V{"/home/u/corp ca.pem"});
  EXPECT_EQ(ToolInputPaths("SSL_CERT_FILE", "certs/ca.pem"), V{});
  EXPECT_EQ(ToolInputPaths("SSL_CERT_DIR", "/etc/ssl/certs:/home/u/certs::rel"),
            (V{"/etc/ssl/certs", "/home/u/certs"}));
  EXPECT_EQ(ToolInputPaths("PIP_FIND_LINKS",
                           "/opt/wheels  file:///srv/w https://example.org/simple ./local "
                           "file://host/share"),
            (V{"/opt/wheels", "/srv/w"}));
  EXPECT_EQ(ToolInputPaths("PIP_CERT", ""), V{});
}

}  // namespace
}  // namespace cordon::policy
