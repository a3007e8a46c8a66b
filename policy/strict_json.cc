#include "policy/strict_json.h"

#include <set>

namespace cordon::policy {

using nlohmann::json;

std::string JsonPointerEscape(const std::string& key) {
  std::string out;
  for (char c : key) {
    if (c == '~')
      out += "~0";
    else if (c == '/')
      out += "~1";
    else
      out += c;
  }
  return out;
}

namespace {

// Position of byte offset `byte` (1-based, as nlohmann counts) in `text`.
void LineColumn(std::string_view text, std::size_t byte, int& line, int& column) {
  line = 1;
  column = 1;
  for (std::size_t i = 0; i + 1 < byte && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
}

// nlohmann keeps the last of duplicate keys silently; a policy must not hide
// a setting that way. Tracks the container stack during the parse.
class DuplicateKeys {
 public:
  explicit DuplicateKeys(std::vector<PolicyError>& errors) : errors_(errors) {}
  bool operator()(int, json::parse_event_t ev, json& parsed) {
    using E = json::parse_event_t;
    switch (ev) {
      case E::object_start:
      case E::array_start:
        BeginElement();
        stack_.push_back({ev == E::object_start, {}, {}, 0});
        break;
      case E::object_end:
      case E::array_end:
        if (!stack_.empty()) stack_.pop_back();
        break;
      case E::key: {
        if (stack_.empty()) break;
        Frame& f = stack_.back();
        std::string key = parsed.get<std::string>();
        if (!f.keys.insert(key).second) {
          errors_.push_back({Pointer() + "/" + JsonPointerEscape(key), "duplicate key"});
        }
        f.current = JsonPointerEscape(key);
        break;
      }
      case E::value:
        BeginElement();
        break;
    }
    return true;
  }

 private:
  struct Frame {
    bool object;
    std::set<std::string> keys;
    std::string current;
    std::size_t count;
  };
  void BeginElement() {
    if (!stack_.empty() && !stack_.back().object) {
      stack_.back().current = std::to_string(stack_.back().count++);
    }
  }
  std::string Pointer() const {
    std::string out;
    for (std::size_t i = 0; i + 1 < stack_.size(); ++i) out += "/" + stack_[i].current;
    return out;
  }
  std::vector<Frame> stack_;
  std::vector<PolicyError>& errors_;
};

}  // namespace

bool ParseStrictJson(std::string_view text, json& doc, std::vector<PolicyError>& errors) {
  try {
    DuplicateKeys dups(errors);
    doc = json::parse(text.begin(), text.end(),
                      [&dups](int d, json::parse_event_t ev, json& v) { return dups(d, ev, v); });
  } catch (const json::parse_error& e) {
    std::string what = e.what();  // "[json.exception.parse_error.101] parse error at ..."
    if (auto end = what.find("] "); end != std::string::npos) what.erase(0, end + 2);
    PolicyError err{"", "JSON syntax: " + what};
    LineColumn(text, e.byte, err.line, err.column);
    errors.push_back(std::move(err));
    return false;
  } catch (const json::exception& e) {
    // Not a syntax error but still unreadable: a number beyond a double
    // (out_of_range 406), found by the fuzzer. No position is given.
    std::string what = e.what();
    if (auto end = what.find("] "); end != std::string::npos) what.erase(0, end + 2);
    errors.push_back({"", "JSON: " + what});
    return false;
  }
  return true;
}

}  // namespace cordon::policy
