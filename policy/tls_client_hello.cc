#include "policy/tls_client_hello.h"

#include <cstdint>

namespace cordon::policy {
namespace {

constexpr uint8_t kHandshake = 22;
constexpr uint8_t kClientHello = 1;
constexpr size_t kRecordHeader = 5;
constexpr size_t kMaxRecord = 16384 + 2048;  // TLSPlaintext may not exceed 2^14; be lenient

// A cursor over bytes that fails (and stays failed) on any overrun.
class Reader {
 public:
  explicit Reader(std::string_view b) : b_(b) {}
  bool ok() const { return ok_; }
  size_t left() const { return b_.size() - pos_; }
  uint32_t Int(int n) {
    uint32_t v = 0;
    if (!Need(static_cast<size_t>(n))) return 0;
    for (int i = 0; i < n; ++i) v = v << 8 | static_cast<uint8_t>(b_[pos_++]);
    return v;
  }
  std::string_view Bytes(size_t n) {
    if (!Need(n)) return {};
    std::string_view out = b_.substr(pos_, n);
    pos_ += n;
    return out;
  }
  // A vector with an n-byte length prefix.
  std::string_view Vector(int n) { return Bytes(Int(n)); }

 private:
  bool Need(size_t n) {
    if (!ok_ || left() < n) ok_ = false;
    return ok_;
  }
  std::string_view b_;
  size_t pos_ = 0;
  bool ok_ = true;
};

// The server_name extension's body: a list of (type, name); the host_name
// (type 0) entry, at most one.
bool ReadServerName(std::string_view ext, std::string* sni) {
  Reader r(ext);
  std::string_view list = r.Vector(2);
  if (!r.ok() || r.left() != 0 || list.empty()) return false;
  Reader l(list);
  bool seen = false;
  while (l.ok() && l.left() > 0) {
    const uint32_t type = l.Int(1);
    std::string_view name = l.Vector(2);
    if (!l.ok()) return false;
    if (type != 0) continue;
    if (seen || name.empty() || name.size() > 255) return false;
    for (char c : name) {
      const auto u = static_cast<unsigned char>(c);
      if (u <= 0x20 || u >= 0x7f) return false;  // DNS names are printable ASCII
    }
    seen = true;
    *sni = std::string(name);
  }
  return l.ok();
}

HelloParse ParseHello(std::string_view hello, std::string* sni) {
  Reader r(hello);
  if (r.Int(1) != kClientHello) return HelloParse::kMalformed;
  const uint32_t len = r.Int(3);
  if (!r.ok() || len != r.left()) return HelloParse::kMalformed;
  r.Int(2);        // legacy_version
  r.Bytes(32);     // random
  if (r.Vector(1).size() > 32) return HelloParse::kMalformed;  // legacy_session_id
  std::string_view suites = r.Vector(2);
  if (suites.empty() || suites.size() % 2 != 0) return HelloParse::kMalformed;
  if (r.Vector(1).empty()) return HelloParse::kMalformed;  // compression methods
  if (!r.ok()) return HelloParse::kMalformed;
  sni->clear();
  if (r.left() == 0) return HelloParse::kOk;  // no extensions: no name
  std::string_view exts = r.Vector(2);
  if (!r.ok() || r.left() != 0) return HelloParse::kMalformed;
  Reader e(exts);
  bool seen = false;
  while (e.ok() && e.left() > 0) {
    const uint32_t type = e.Int(2);
    std::string_view body = e.Vector(2);
    if (!e.ok()) return HelloParse::kMalformed;
    if (type != 0) continue;
    if (seen || !ReadServerName(body, sni)) return HelloParse::kMalformed;
    seen = true;
  }
  return e.ok() ? HelloParse::kOk : HelloParse::kMalformed;
}

char Fold(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

}  // namespace

HelloParse ParseClientHelloSni(std::string_view bytes, std::string* sni, size_t* consumed) {
  // The handshake message, from the fragments of consecutive handshake records.
  std::string hello;
  size_t pos = 0;
  while (true) {
    if (bytes.size() - pos < kRecordHeader) {
      return pos == 0 && !bytes.empty() && static_cast<uint8_t>(bytes[0]) != kHandshake
                 ? HelloParse::kNotTls
                 : HelloParse::kNeedMore;
    }
    const auto type = static_cast<uint8_t>(bytes[pos]);
    const auto major = static_cast<uint8_t>(bytes[pos + 1]);
    const size_t len = static_cast<uint8_t>(bytes[pos + 3]) << 8 | static_cast<uint8_t>(bytes[pos + 4]);
    if (type != kHandshake || major != 3) return pos == 0 ? HelloParse::kNotTls : HelloParse::kMalformed;
    if (len == 0 || len > kMaxRecord) return HelloParse::kMalformed;
    if (pos + kRecordHeader + len > kMaxClientHelloBytes) return HelloParse::kMalformed;
    if (bytes.size() - pos - kRecordHeader < len) return HelloParse::kNeedMore;
    hello.append(bytes.substr(pos + kRecordHeader, len));
    pos += kRecordHeader + len;
    if (hello.size() < 4) continue;
    const size_t want = 4 + (static_cast<uint8_t>(hello[1]) << 16 |
                             static_cast<uint8_t>(hello[2]) << 8 | static_cast<uint8_t>(hello[3]));
    if (hello.size() > want) return HelloParse::kMalformed;  // another message in the same flight
    if (hello.size() == want) break;
  }
  HelloParse p = ParseHello(hello, sni);
  if (p == HelloParse::kOk && consumed) *consumed = pos;
  return p;
}

bool SniMatches(std::string_view sni, std::string_view host, bool host_is_ip) {
  if (host_is_ip) return sni.empty();
  if (sni.ends_with(".")) sni.remove_suffix(1);
  if (sni.size() != host.size() || sni.empty()) return false;
  for (size_t i = 0; i < sni.size(); ++i) {
    if (Fold(sni[i]) != host[i]) return false;
  }
  return true;
}

}  // namespace cordon::policy
