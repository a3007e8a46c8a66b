#include "policy/git_config_keys.h"

#include <algorithm>
#include <cctype>

namespace cordon::policy {
namespace {

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool IsKeyChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '-'; }

// Whether section.[subsection.]key (section and key lower-case) runs a
// program, or brings configuration from elsewhere. `value` decides for the
// keys that run something only when they start with '!'.
bool Runnable(const std::string& section, bool has_sub, const std::string& sub,
              const std::string& key, std::string_view value) {
  // Not core.worktree: git submodule writes it into .git/modules/NAME/config.
  static constexpr const char* kCore[] = {"fsmonitor", "hookspath", "sshcommand", "pager",
                                          "editor",    "askpass",   "gitproxy"};
  if (section == "core") {
    return std::any_of(std::begin(kCore), std::end(kCore), [&](const char* k) { return key == k; });
  }
  if (section == "include") return key == "path";
  if (section == "includeif") return key == "path";
  if (section == "filter") return key == "clean" || key == "smudge" || key == "process";
  if (section == "diff") return has_sub ? key == "textconv" || key == "command" : key == "external";
  if (section == "merge") return has_sub && key == "driver";
  if (section == "credential") return key == "helper";
  if (section == "gpg") return key == "program";
  if (section == "sequence") return key == "editor";
  if (section == "pager") return true;  // pager.<cmd> = a program
  if (section == "remote") return key == "uploadpack" || key == "receivepack";
  // ext:: URLs run commands once the ext protocol is allowed.
  if (section == "protocol") {
    return key == "allow" && (has_sub ? Lower(sub) == "ext" : value.find("always") != value.npos);
  }
  if (section == "difftool" || section == "mergetool") return key == "cmd";
  if (section == "browser" || section == "man") return key == "cmd" || key == "path";
  if (section == "alias" || (section == "submodule" && key == "update")) {
    std::string_view v = value;
    while (!v.empty() && (v.front() == '"' || v.front() == ' ' || v.front() == '\t')) {
      v.remove_prefix(1);
    }
    return !v.empty() && v.front() == '!';
  }
  return false;
}

// One `key = value` of a config, as git reads it (section and key
// lower-cased, the subsection as written), or an unparsable line.
struct Entry {
  std::string section, sub, key, value;
  bool has_sub = false;
  std::size_t unparsable_line = 0;  // nonzero: not an entry but that line

  std::string Name() const {
    if (unparsable_line != 0) return "(unparsable line " + std::to_string(unparsable_line) + ")";
    return section + "." + (has_sub ? sub + "." : "") + key;
  }
  bool operator==(const Entry&) const = default;
};

std::vector<Entry> ParseGitConfig(std::string_view content) {
  std::vector<Entry> found;
  std::string section, sub;
  bool has_sub = false;
  std::size_t line_no = 0;
  auto bad = [&] {
    Entry e;
    e.unparsable_line = line_no;
    found.push_back(std::move(e));
  };
  std::size_t pos = 0;
  while (pos < content.size()) {
    std::size_t end = content.find('\n', pos);
    if (end == std::string_view::npos) end = content.size();
    std::string_view line = content.substr(pos, end - pos);
    pos = end + 1;
    ++line_no;
    for (;;) {  // a section header may have a key after it on the same line
      while (!line.empty() && (line.front() == ' ' || line.front() == '\t' ||
                               line.front() == '\r')) {
        line.remove_prefix(1);
      }
      if (line.empty() || line.front() == '#' || line.front() == ';') break;
      if (line.front() == '[') {
        // [section], [section "sub"] (sub case-sensitive, escapes), [section.sub]
        std::size_t i = 1;
        while (i < line.size() && (IsKeyChar(line[i]) || line[i] == '.')) ++i;
        std::string name = Lower(line.substr(1, i - 1));
        has_sub = false;
        sub.clear();
        if (i < line.size() && line[i] == ' ') {
          while (i < line.size() && line[i] == ' ') ++i;
          if (i >= line.size() || line[i] != '"') { bad(); break; }
          ++i;
          while (i < line.size() && line[i] != '"') {
            if (line[i] == '\\' && i + 1 < line.size()) ++i;
            sub += line[i++];
          }
          if (i >= line.size()) { bad(); break; }
          ++i;
          has_sub = true;
        }
        if (i >= line.size() || line[i] != ']' || name.empty()) { bad(); break; }
        if (std::size_t dot = name.find('.'); dot != std::string::npos) {
          sub = name.substr(dot + 1);  // [section.sub]: the sub lower-cased, as git does
          name.resize(dot);
          has_sub = true;
        }
        section = std::move(name);
        line.remove_prefix(i + 1);
        continue;
      }
      // key [= value]
      if (!std::isalpha(static_cast<unsigned char>(line.front()))) { bad(); break; }
      std::size_t i = 0;
      while (i < line.size() && IsKeyChar(line[i])) ++i;
      std::string key = Lower(line.substr(0, i));
      if (section.empty()) { bad(); break; }
      // The value, with its continuations: a backslash at the end of a line
      // (outside a comment) joins the next line to it.
      std::string value;
      std::string_view rest = line.substr(i);
      for (;;) {
        bool quoted = false, continued = false, comment = false;
        for (std::size_t k = 0; k < rest.size(); ++k) {
          char c = rest[k];
          if (comment) break;
          if (c == '\\') {
            if (k + 1 == rest.size() || (k + 2 == rest.size() && rest[k + 1] == '\r')) {
              continued = true;
              break;
            }
            value += rest[++k];
            continue;
          }
          if (c == '"') quoted = !quoted;
          else if (!quoted && (c == '#' || c == ';')) comment = true;
          else value += c;
        }
        if (!continued || pos >= content.size()) break;
        std::size_t next = content.find('\n', pos);
        if (next == std::string_view::npos) next = content.size();
        rest = content.substr(pos, next - pos);
        pos = next + 1;
        ++line_no;
      }
      std::string_view v = value;
      while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) v.remove_prefix(1);
      if (!v.empty() && v.front() == '=') v.remove_prefix(1);
      found.push_back(Entry{section, has_sub ? sub : "", key, std::string(v), has_sub, 0});
      break;
    }
  }
  return found;
}

// Keys a repository's own git writes into a config the user already had, and
// that run nothing: `git submodule init`/`update --init` registering a
// submodule (its url, active, and an update mode that is not a command) and
// `git config user.name/email`. A url is where the user's later `git
// submodule update` fetches from: what it brings is workspace content, which
// the run may write anyway.
bool Registration(const Entry& e) {
  if (e.unparsable_line != 0) return false;
  if (e.section == "user") return !e.has_sub && (e.key == "name" || e.key == "email");
  if (e.section != "submodule" || !e.has_sub) return false;
  if (e.key == "url" || e.key == "active") return true;
  return e.key == "update" && !Runnable(e.section, e.has_sub, e.sub, e.key, e.value);
}

}  // namespace

std::vector<std::string> RunnableGitConfigKeys(std::string_view content) {
  std::vector<std::string> found;
  for (const Entry& e : ParseGitConfig(content)) {
    if (e.unparsable_line != 0 || Runnable(e.section, e.has_sub, e.sub, e.key, e.value)) {
      found.push_back(e.Name());
    }
  }
  return found;
}

std::vector<std::string> ChangedBeyondRegistration(std::string_view before,
                                                   std::string_view after) {
  auto kept = [](std::string_view content) {
    std::vector<Entry> out;
    for (Entry& e : ParseGitConfig(content)) {
      if (!Registration(e)) out.push_back(std::move(e));
    }
    return out;
  };
  const std::vector<Entry> was = kept(before), now = kept(after);
  std::vector<std::string> changed;
  // The rest must stand as it was, in its order (the last of a multi-valued
  // key wins): every entry that differs is named, unparsable lines too.
  const std::size_t n = std::max(was.size(), now.size());
  for (std::size_t i = 0; i < n; ++i) {
    if (i < was.size() && i < now.size() && was[i] == now[i]) continue;
    const std::string name = i < now.size() ? now[i].Name() : was[i].Name();
    if (std::find(changed.begin(), changed.end(), name) == changed.end()) changed.push_back(name);
  }
  return changed;
}

std::string GitConfigValue(std::string_view content, std::string_view name) {
  std::string value;
  for (const Entry& e : ParseGitConfig(content)) {
    if (e.unparsable_line == 0 && !e.has_sub && e.section + "." + e.key == name) value = e.value;
  }
  // The blanks around an unquoted value are not part of it (the parser
  // keeps what follows '=' as it stands).
  const std::size_t first = value.find_first_not_of(" \t");
  if (first == std::string::npos) return "";
  return value.substr(first, value.find_last_not_of(" \t\r") - first + 1);
}

}  // namespace cordon::policy
