#include "policy/scan_cache.h"

#include <algorithm>
#include <charconv>
#include <utility>

#include "policy/digest.h"

namespace cordon::policy {
namespace {

constexpr std::string_view kMagic = "cordon-scan-cache 1";

constexpr struct {
  ScannedKind kind;
  std::string_view name;
} kKinds[] = {{ScannedKind::kLinkedFile, "linked"},
              {ScannedKind::kCharDevice, "chr"},
              {ScannedKind::kBlockDevice, "blk"},
              {ScannedKind::kFifo, "fifo"},
              {ScannedKind::kSocket, "sock"}};

std::string_view KindWord(ScannedKind k) {
  for (const auto& e : kKinds) {
    if (e.kind == k) return e.name;
  }
  return "linked";
}

void Put(std::string& out, std::string_view s) {
  out += std::to_string(s.size());
  out += ':';
  out += s;
}

// One line being read: words separated by one space, then a string.
class Line {
 public:
  explicit Line(std::string_view rest) : rest_(rest) {}

  bool Word(std::string_view want) {
    if (!rest_.starts_with(want)) return false;
    rest_.remove_prefix(want.size());
    return Space();
  }
  template <class T>
  bool Number(T* out) {
    // Digits only: no sign, no leading zero but "0" itself.
    if (rest_.empty() || rest_[0] < '0' || rest_[0] > '9') return false;
    if (rest_[0] == '0' && rest_.size() > 1 && rest_[1] >= '0' && rest_[1] <= '9') return false;
    auto [end, ec] = std::from_chars(rest_.data(), rest_.data() + rest_.size(), *out);
    if (ec != std::errc()) return false;
    rest_.remove_prefix(static_cast<std::size_t>(end - rest_.data()));
    return true;
  }
  template <class T>
  bool NumberThenSpace(T* out) {
    return Number(out) && Space();
  }
  // LEN:BYTES, the last thing on its line (the newline is the caller's).
  bool String(std::string* out) {
    std::size_t len = 0;
    if (!Number(&len) || rest_.empty() || rest_[0] != ':') return false;
    rest_.remove_prefix(1);
    if (len > rest_.size()) return false;
    out->assign(rest_.substr(0, len));
    rest_.remove_prefix(len);
    return true;
  }
  // The line ends here: the newline is next.
  bool End() {
    if (rest_.empty() || rest_[0] != '\n') return false;
    rest_.remove_prefix(1);
    return true;
  }
  std::string_view rest() const { return rest_; }
  bool Starts(std::string_view word) const {
    return rest_.starts_with(word) && rest_.size() > word.size() && rest_[word.size()] == ' ';
  }

 private:
  bool Space() {
    if (rest_.empty() || rest_[0] != ' ') return false;
    rest_.remove_prefix(1);
    return true;
  }
  std::string_view rest_;
};

bool ValidName(std::string_view n) {
  return !n.empty() && n != "." && n != ".." && n.find('/') == std::string_view::npos &&
         n.find('\0') == std::string_view::npos;
}

bool ValidRel(std::string_view rel) {
  if (rel.empty()) return true;
  std::size_t start = 0;
  while (true) {
    const std::size_t slash = rel.find('/', start);
    if (!ValidName(rel.substr(start, slash == std::string_view::npos ? slash : slash - start))) {
      return false;
    }
    if (slash == std::string_view::npos) return true;
    start = slash + 1;
  }
}

bool Fail(std::string* why, std::string what) {
  if (why != nullptr) *why = std::move(what);
  return false;
}

bool ParseDirLine(Line& l, CachedDir& d) {
  return l.Word("dir") && l.NumberThenSpace(&d.dev) && l.NumberThenSpace(&d.ino) &&
         l.NumberThenSpace(&d.times.mtime_s) && l.NumberThenSpace(&d.times.mtime_ns) &&
         l.NumberThenSpace(&d.times.ctime_s) && l.NumberThenSpace(&d.times.ctime_ns) &&
         l.NumberThenSpace(&d.entries) && l.String(&d.rel) && l.End() && ValidRel(d.rel) &&
         d.times.mtime_ns < 1000000000 && d.times.ctime_ns < 1000000000;
}

bool ParseKind(Line& l, ScannedKind* kind) {
  for (const auto& e : kKinds) {
    if (l.Starts(e.name)) {
      *kind = e.kind;
      return l.Word(e.name);
    }
  }
  return false;
}

}  // namespace

std::string ScanCacheText(const ScanCache& c) {
  std::string out(kMagic);
  out += "\nworkspace ";
  Put(out, c.workspace);
  out += '\n';
  for (const std::string& g : c.globs) {
    out += "glob ";
    Put(out, g);
    out += '\n';
  }
  // In the order ParseScanCache wants.
  std::vector<const CachedDir*> dirs;
  for (const CachedDir& d : c.dirs) dirs.push_back(&d);
  std::sort(dirs.begin(), dirs.end(), [](auto* a, auto* b) { return a->rel < b->rel; });
  for (const CachedDir* d : dirs) {
    out += "dir " + std::to_string(d->dev) + ' ' + std::to_string(d->ino) + ' ' +
           std::to_string(d->times.mtime_s) + ' ' + std::to_string(d->times.mtime_ns) + ' ' +
           std::to_string(d->times.ctime_s) + ' ' + std::to_string(d->times.ctime_ns) + ' ' +
           std::to_string(d->entries) + ' ';
    Put(out, d->rel);
    out += '\n';
    std::vector<std::string_view> subs(d->subdirs.begin(), d->subdirs.end());
    std::sort(subs.begin(), subs.end());
    for (std::string_view sub : subs) {
      out += "sub ";
      Put(out, sub);
      out += '\n';
    }
    std::vector<const CachedFlag*> flagged;
    for (const CachedFlag& f : d->flagged) flagged.push_back(&f);
    std::sort(flagged.begin(), flagged.end(), [](auto* a, auto* b) { return a->name < b->name; });
    for (const CachedFlag* f : flagged) {
      out += "flag ";
      out += KindWord(f->kind);
      out += ' ' + std::to_string(f->ino) + ' ' + std::to_string(f->nlink) + ' ';
      Put(out, f->name);
      out += '\n';
    }
    std::vector<const CachedMatch*> matches;
    for (const CachedMatch& m : d->matches) matches.push_back(&m);
    std::sort(matches.begin(), matches.end(), [](auto* a, auto* b) { return a->name < b->name; });
    for (const CachedMatch* m : matches) {
      out += m->link ? "match 1 " : "match 0 ";
      Put(out, m->name);
      out += '\n';
    }
  }
  out += "end " + std::to_string(c.dirs.size()) + "\n";
  return out;
}

std::optional<ScanCache> ParseScanCache(std::string_view text, std::string* why) {
  ScanCache c;
  if (!text.starts_with(kMagic) || text.size() == kMagic.size() || text[kMagic.size()] != '\n') {
    Fail(why, "not a scan cache of this version");
    return std::nullopt;
  }
  // The end line's count, read ahead to size the directories once (a
  // hint only: the count is checked below, when the end line is parsed).
  // A dir line is longer than kMinDirLine, so a forged count asks no more
  // than the text could hold.
  if (const std::size_t at = text.rfind("\nend "); at != std::string_view::npos) {
    constexpr std::size_t kMinDirLine = 20;
    std::size_t n = 0;
    const char* first = text.data() + at + 5;
    std::from_chars(first, text.data() + text.size(), n);
    c.dirs.reserve(std::min(n, text.size() / kMinDirLine));
  }
  Line l(text.substr(kMagic.size() + 1));
  if (!l.Word("workspace") || !l.String(&c.workspace) || !l.End() || c.workspace.empty() ||
      c.workspace[0] != '/') {
    Fail(why, "no workspace line");
    return std::nullopt;
  }
  while (true) {
    if (l.Starts("glob")) {
      std::string g;
      if (!c.dirs.empty() || !l.Word("glob") || !l.String(&g) || !l.End() || g.empty()) {
        Fail(why, "bad glob line");
        return std::nullopt;
      }
      c.globs.push_back(std::move(g));
    } else if (l.Starts("dir")) {
      CachedDir d;
      if (!ParseDirLine(l, d)) {
        Fail(why, "bad dir line");
        return std::nullopt;
      }
      // In order, each once (the root's "" first).
      if (!c.dirs.empty() && !(c.dirs.back().rel < d.rel)) {
        Fail(why, "directories out of order");
        return std::nullopt;
      }
      c.dirs.push_back(std::move(d));
    } else if (l.Starts("sub") || l.Starts("flag") || l.Starts("match")) {
      if (c.dirs.empty()) {
        Fail(why, "an entry before any dir line");
        return std::nullopt;
      }
      CachedDir& d = c.dirs.back();
      // Each kind of entry in order of its names, each once.
      bool ok;
      if (l.Starts("sub")) {
        std::string name;
        ok = l.Word("sub") && l.String(&name) && l.End() && ValidName(name) &&
             (d.subdirs.empty() || d.subdirs.back() < name);
        if (ok) d.subdirs.push_back(std::move(name));
      } else if (l.Starts("flag")) {
        CachedFlag f;
        ok = l.Word("flag") && ParseKind(l, &f.kind) && l.NumberThenSpace(&f.ino) &&
             l.NumberThenSpace(&f.nlink) && l.String(&f.name) && l.End() && f.nlink > 0 &&
             ValidName(f.name) && (d.flagged.empty() || d.flagged.back().name < f.name);
        if (ok) d.flagged.push_back(std::move(f));
      } else {
        CachedMatch m;
        int link = 0;
        ok = l.Word("match") && l.NumberThenSpace(&link) && link <= 1 && l.String(&m.name) &&
             l.End() && ValidName(m.name) && (d.matches.empty() || d.matches.back().name < m.name);
        m.link = link == 1;
        if (ok) d.matches.push_back(std::move(m));
      }
      if (!ok) {
        Fail(why, "bad entry line in '" + d.rel + "'");
        return std::nullopt;
      }
    } else if (l.Starts("end")) {
      std::size_t n = 0;
      if (!l.Word("end") || !l.Number(&n) || !l.End() || n != c.dirs.size() || !l.rest().empty()) {
        Fail(why, "bad end line");
        return std::nullopt;
      }
      return c;
    } else {
      Fail(why, l.rest().empty() ? "cut short (no end line)" : "an unknown line");
      return std::nullopt;
    }
  }
}

bool SettledBefore(const StatTimes& t, std::int64_t scan_start_s) {
  return t.mtime_s < scan_start_s - 1 && t.ctime_s < scan_start_s - 1;
}

std::string ScanCacheDir(const std::string& state_home) { return state_home + "/cordon/scans"; }

std::string ScanCacheName(const std::string& workspace) { return Sha256Hex(workspace); }

}  // namespace cordon::policy
