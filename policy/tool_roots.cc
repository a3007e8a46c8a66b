#include "policy/tool_roots.h"

#include "policy/rule_lookup.h"

namespace cordon::policy {
namespace {

enum class Anchor { kEnv, kHome, kAbsolute, kRunnerToolCache };

struct Layout {
  Anchor anchor;
  const char* name;
  std::vector<const char*> match;  // relative to the anchor (absolute for kAbsolute)
  int depth;                       // components below the match naming one install
  std::vector<const char*> also;   // further roots granted with it, relative to the anchor
  const char* var = nullptr;       // kEnv: the variable naming the anchor
  const char* also_var = nullptr;  // kEnv: a variable naming a further root
};

// Most specific first: the first layout whose match holds the path decides.
const std::vector<Layout>& Layouts() {
  // ~/.local holds keyrings and trash beside its tools: only these, each
  // both a match and granted with the others.
  static const std::vector<const char*> kLocalTools = {
      ".local/bin", ".local/lib", ".local/share/pipx", ".local/share/uv/tools",
      ".local/share/uv/python"};
  static const std::vector<Layout> kLayouts = {
      // Where a toolchain's own variable says it lives, first: that is the
      // install, wherever HOME is.
      {Anchor::kEnv, "pyenv", {""}, 0, {}, "PYENV_ROOT"},
      {Anchor::kEnv, "rbenv", {""}, 0, {}, "RBENV_ROOT"},
      {Anchor::kEnv, "nvm", {"versions/node"}, 1, {}, "NVM_DIR"},
      {Anchor::kEnv, "cargo", {""}, 0, {}, "CARGO_HOME", "RUSTUP_HOME"},
      {Anchor::kEnv, "cargo", {""}, 0, {}, "RUSTUP_HOME", "CARGO_HOME"},
      {Anchor::kEnv, "go", {""}, 0, {}, "GOPATH"},
      {Anchor::kEnv, "asdf", {""}, 0, {}, "ASDF_DATA_DIR", "ASDF_DIR"},
      {Anchor::kEnv, "asdf", {""}, 0, {}, "ASDF_DIR", "ASDF_DATA_DIR"},
      {Anchor::kEnv, "volta", {""}, 0, {}, "VOLTA_HOME"},
      {Anchor::kEnv, "bun", {""}, 0, {}, "BUN_INSTALL"},
      {Anchor::kEnv, "deno", {""}, 0, {}, "DENO_INSTALL"},
      {Anchor::kEnv, "sdkman", {"candidates"}, 1, {}, "SDKMAN_DIR"},
      {Anchor::kHome, "pyenv", {".pyenv"}, 0, {}},
      {Anchor::kHome, "rbenv", {".rbenv"}, 0, {}},
      {Anchor::kHome, "nvm", {".nvm/versions/node"}, 1, {}},
      {Anchor::kHome, "cargo", {".cargo", ".rustup"}, 0, {".cargo", ".rustup"}},
      {Anchor::kHome, "~/.local", kLocalTools, 0, kLocalTools},
      {Anchor::kHome, "go", {"go"}, 0, {}},
      {Anchor::kHome, "asdf", {".asdf"}, 0, {}},
      {Anchor::kHome, "sdkman", {".sdkman/candidates"}, 0, {}},
      {Anchor::kHome, "volta", {".volta"}, 0, {}},
      {Anchor::kHome, "bun", {".bun"}, 0, {}},
      {Anchor::kHome, "deno", {".deno"}, 0, {}},
      {Anchor::kHome, "linuxbrew", {".linuxbrew"}, 0, {}},
      {Anchor::kRunnerToolCache, "hostedtoolcache", {""}, 3, {}},
      {Anchor::kAbsolute, "hostedtoolcache", {"/opt/hostedtoolcache"}, 3, {}},
      {Anchor::kAbsolute, "linuxbrew", {"/home/linuxbrew/.linuxbrew"}, 0, {}},
      {Anchor::kAbsolute, "/usr/local", {"/usr/local"}, 0, {}},
      {Anchor::kAbsolute, "/opt", {"/opt"}, 1, {}},
  };
  return kLayouts;
}

std::string Join(std::string_view base, std::string_view rel) {
  if (rel.empty()) return std::string(base);
  if (base == "/") return "/" + std::string(rel);
  return std::string(base) + "/" + std::string(rel);
}

std::string EnvDir(const ToolRootContext& ctx, const char* var) {
  if (var == nullptr) return {};
  for (const auto& [name, dir] : ctx.env_dirs) {
    if (name == var) return dir;
  }
  return {};
}

}  // namespace

ToolchainRoot ToolchainRootOf(std::string_view path, const ToolRootContext& ctx) {
  for (const Layout& l : Layouts()) {
    std::string base = l.anchor == Anchor::kHome              ? ctx.home
                       : l.anchor == Anchor::kRunnerToolCache ? ctx.runner_tool_cache
                       : l.anchor == Anchor::kEnv             ? EnvDir(ctx, l.var)
                                                              : std::string();
    // A variable naming "/" or the home itself names no install of its own.
    if (l.anchor == Anchor::kEnv && (base == "/" || base == ctx.home)) continue;
    if (l.anchor != Anchor::kAbsolute && base.empty()) continue;
    for (const char* m : l.match) {
      std::string prefix = l.anchor == Anchor::kAbsolute ? std::string(m) : Join(base, m);
      if (!PathWithin(path, prefix)) continue;
      ToolchainRoot out;
      out.layout = l.name;
      // The install directory: `depth` more components of the path.
      std::size_t end = prefix == "/" ? 0 : prefix.size();
      for (int i = 0; i < l.depth; ++i) {
        if (end >= path.size()) return out;  // above the installs: no root
        std::size_t next = path.find('/', end + 1);
        end = next == std::string_view::npos ? path.size() : next;
      }
      std::string root(path.substr(0, end));
      out.roots.push_back(root);
      for (const char* a : l.also) {
        std::string r = l.anchor == Anchor::kAbsolute ? std::string(a) : Join(base, a);
        if (r != root) out.roots.push_back(std::move(r));
      }
      if (std::string also = EnvDir(ctx, l.also_var); !also.empty() && also != root) {
        out.roots.push_back(std::move(also));
      }
      return out;
    }
  }
  return {};
}

std::vector<std::string> ToolInputPaths(std::string_view name, std::string_view value) {
  const bool find_links = name == "PIP_FIND_LINKS";
  const std::string_view seps = find_links ? " \t\n" : name == "SSL_CERT_DIR" ? ":" : "";
  std::vector<std::string> out;
  while (!value.empty()) {
    const size_t end = seps.empty() ? std::string_view::npos : value.find_first_of(seps);
    std::string_view item = value.substr(0, end);
    value = end == std::string_view::npos ? std::string_view() : value.substr(end + 1);
    if (find_links && item.starts_with("file://")) item.remove_prefix(7);
    if (!item.empty() && item[0] == '/') out.emplace_back(item);
  }
  return out;
}

const char* WideningRefusal(std::string_view dir, const ToolRootContext& ctx) {
  if (dir == "/") return "the root directory";
  if (!ctx.home.empty() && dir == ctx.home) return "the home directory itself";
  if (!ctx.home.empty() && PathWithin(ctx.home, dir)) return "an ancestor of the home directory";
  for (const char* k : {"/proc", "/sys", "/dev"}) {
    if (PathWithin(dir, k)) return "a kernel interface";
  }
  return nullptr;
}

std::optional<Shebang> ParseShebang(std::string_view line) {
  if (line.size() < 2 || line[0] != '#' || line[1] != '!') return std::nullopt;
  std::vector<std::string_view> words;
  std::size_t i = 2;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    std::size_t start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t' && line[i] != '\n' &&
           line[i] != '\r')
      ++i;
    if (i > start) words.push_back(line.substr(start, i - start));
    if (i < line.size() && (line[i] == '\n' || line[i] == '\r')) break;
  }
  if (words.empty() || words[0][0] != '/') return std::nullopt;
  Shebang s;
  s.interpreter = std::string(words[0]);
  std::string_view base = words[0].substr(words[0].rfind('/') + 1);
  if (base == "env") {
    for (std::size_t w = 1; w < words.size(); ++w) {
      if (words[w][0] == '-' || words[w].find('=') != std::string_view::npos) continue;
      s.env_program = std::string(words[w]);
      break;
    }
  }
  return s;
}

}  // namespace cordon::policy
