#include "policy/scan_cache.h"

#include <cstring>
#include <utility>

#include "policy/digest.h"

namespace cordon::policy {
namespace {

constexpr std::string_view kMagic = "cordon-scan-cache 2\n";
constexpr std::uint64_t kMaxKind = static_cast<std::uint64_t>(ScannedKind::kSocket);

template <class T>
void PutArray(std::string& out, const std::vector<T>& v) {
  out.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
}

void PutU64(std::string& out, std::uint64_t n) {
  out.append(reinterpret_cast<const char*>(&n), sizeof n);
}

// The bytes being read, front to back; every read is bounds-checked.
class Reader {
 public:
  explicit Reader(std::string_view bytes) : rest_(bytes) {}

  bool U64(std::uint64_t* out) {
    if (rest_.size() < sizeof *out) return false;
    std::memcpy(out, rest_.data(), sizeof *out);
    rest_.remove_prefix(sizeof *out);
    return true;
  }
  bool Bytes(std::uint64_t n, std::string* out) {
    if (n > rest_.size()) return false;
    out->assign(rest_.substr(0, n));
    rest_.remove_prefix(n);
    return true;
  }
  template <class T>
  bool Array(std::uint64_t n, std::vector<T>* out) {
    if (n > rest_.size() / sizeof(T)) return false;
    out->resize(n);
    std::memcpy(out->data(), rest_.data(), n * sizeof(T));
    rest_.remove_prefix(n * sizeof(T));
    return true;
  }
  bool AtEnd() const { return rest_.empty(); }

 private:
  std::string_view rest_;
};

bool ValidName(std::string_view n) {
  return !n.empty() && n != "." && n != ".." && n.find('/') == std::string_view::npos &&
         n.find('\0') == std::string_view::npos;
}

bool InNames(const ScanCache& c, CachedName n) {
  return std::uint64_t{n.off} + n.len <= c.names.size();
}

bool InRange(CachedRange r, std::size_t size) { return std::uint64_t{r.off} + r.len <= size; }

bool ValidTimes(const StatTimes& t) {
  return t.mtime_s >= 0 && t.ctime_s >= 0 && t.mtime_ns >= 0 && t.mtime_ns < 1000000000 &&
         t.ctime_ns >= 0 && t.ctime_ns < 1000000000;
}

bool Fail(std::string* why, std::string what) {
  if (why != nullptr) *why = std::move(what);
  return false;
}

// Every record in range, with a plain name, and the directories one tree in
// preorder: each record lies inside its parent's subtree, which is the
// innermost one still open at its index.
bool Check(const ScanCache& c, std::string* why) {
  if (c.workspace.empty() || c.workspace[0] != '/') return Fail(why, "no workspace");
  for (const std::string& g : c.globs) {
    if (g.empty()) return Fail(why, "an empty glob");
  }
  for (const CachedFlag& f : c.flags) {
    if (!InNames(c, f.name) || !ValidName(c.Name(f.name)) || f.kind > kMaxKind || f.pad != 0 ||
        f.nlink == 0) {
      return Fail(why, "a bad flagged entry");
    }
  }
  for (const CachedMatch& m : c.matches) {
    if (!InNames(c, m.name) || !ValidName(c.Name(m.name)) || m.link > 1 || m.pad != 0) {
      return Fail(why, "a bad match");
    }
  }
  const std::size_t n = c.dirs.size();
  if (n == 0) return Fail(why, "no root");
  std::vector<std::uint32_t> open;  // the ancestors of the record at hand, innermost last
  for (std::size_t i = 0; i < n; ++i) {
    const CachedDir& d = c.dirs[i];
    if (d.end <= i || d.end > n || !InRange(d.flags, c.flags.size()) ||
        !InRange(d.matches, c.matches.size()) || !InNames(c, d.name) || !ValidTimes(d.times) ||
        d.unsettled > 1 || d.pad != 0) {
      return Fail(why, "a bad directory record");
    }
    if (i == 0) {
      if (d.parent != 0 || d.name.len != 0 || d.end != n) return Fail(why, "a bad root");
    } else {
      while (c.dirs[open.back()].end <= i) open.pop_back();  // the root's end is n: never popped
      if (d.parent != open.back() || d.end > c.dirs[d.parent].end || !ValidName(c.Name(d.name))) {
        return Fail(why, "directories that are not one tree");
      }
    }
    open.push_back(static_cast<std::uint32_t>(i));
  }
  return true;
}

}  // namespace

std::string ScanCacheBytes(const ScanCache& c) {
  std::string out(kMagic);
  for (std::uint64_t n : {c.workspace.size(), c.globs.size(), c.dirs.size(), c.flags.size(),
                          c.matches.size(), c.names.size()}) {
    PutU64(out, n);
  }
  out += c.workspace;
  for (const std::string& g : c.globs) {
    PutU64(out, g.size());
    out += g;
  }
  PutArray(out, c.dirs);
  PutArray(out, c.flags);
  PutArray(out, c.matches);
  out += c.names;
  return out;
}

std::optional<ScanCache> ParseScanCache(std::string_view bytes, std::string* why) {
  if (!bytes.starts_with(kMagic)) {
    Fail(why, "not a scan cache of this version");
    return std::nullopt;
  }
  Reader r(bytes.substr(kMagic.size()));
  std::uint64_t ws = 0, globs = 0, dirs = 0, flags = 0, matches = 0, names = 0;
  ScanCache c;
  bool ok = r.U64(&ws) && r.U64(&globs) && r.U64(&dirs) && r.U64(&flags) && r.U64(&matches) &&
            r.U64(&names) && r.Bytes(ws, &c.workspace);
  // Each glob takes at least its length word: a forged count asks no more
  // than the bytes could hold.
  if (ok && globs > bytes.size() / sizeof(std::uint64_t)) ok = false;
  for (std::uint64_t i = 0; ok && i < globs; ++i) {
    std::uint64_t len = 0;
    ok = r.U64(&len) && r.Bytes(len, &c.globs.emplace_back());
  }
  ok = ok && r.Array(dirs, &c.dirs) && r.Array(flags, &c.flags) && r.Array(matches, &c.matches) &&
       r.Bytes(names, &c.names);
  if (!ok || !r.AtEnd()) {
    Fail(why, ok ? "bytes after the end" : "cut short");
    return std::nullopt;
  }
  if (!Check(c, why)) return std::nullopt;
  return c;
}

bool SettledBefore(const StatTimes& t, std::int64_t scan_start_s) {
  return t.mtime_s < scan_start_s - 1 && t.ctime_s < scan_start_s - 1;
}

std::string ScanCacheDir(const std::string& state_home) { return state_home + "/cordon/scans"; }

std::string ScanCacheName(const std::string& workspace) { return Sha256Hex(workspace); }

}  // namespace cordon::policy
