#include "supervisor/socket_stand_in.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <charconv>
#include <cstdlib>
#include <cstring>
#include <string>

#include "supervisor/caps.h"
#include "supervisor/tool_fd.h"

namespace cordon::supervisor {
namespace {

constexpr unsigned long kAcceptCon = 0x10000;  // __SO_ACCEPTCON: listening

// Reads all of a /proc file (they report a size of 0).
Result<std::string> ReadProc(const std::string& path) {
  Fd fd(RetryAsSupervisor([&] { return ::open(path.c_str(), O_RDONLY | O_CLOEXEC); }));
  if (!fd) return Errno("open", path);
  std::string out;
  char buf[16384];
  for (;;) {
    ssize_t n = ::read(fd.get(), buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Errno("read", path);
    if (n == 0) return out;
    out.append(buf, static_cast<size_t>(n));
  }
}

// The next space-separated field of `s` from `pos` on.
std::string_view Field(std::string_view s, size_t& pos) {
  while (pos < s.size() && s[pos] == ' ') ++pos;
  size_t start = pos;
  while (pos < s.size() && s[pos] != ' ') ++pos;
  return s.substr(start, pos - start);
}

template <typename T>
bool Number(std::string_view f, int base, T& out) {
  auto [end, ec] = std::from_chars(f.data(), f.data() + f.size(), out, base);
  return ec == std::errc() && end == f.data() + f.size() && !f.empty();
}

}  // namespace

std::optional<UnixSocketLine> FindUnixSocketLine(std::string_view table, ino_t ino) {
  // "Num: RefCount Protocol Flags Type St Inode [Path]", a header first.
  size_t start = table.find('\n');
  while (start != std::string_view::npos && start + 1 < table.size()) {
    size_t end = table.find('\n', start + 1);
    std::string_view line =
        table.substr(start + 1, (end == std::string_view::npos ? table.size() : end) - start - 1);
    start = end;
    size_t pos = 0;
    std::string_view num = Field(line, pos);
    if (num.empty() || num.back() != ':') continue;
    std::string_view refs = Field(line, pos), proto = Field(line, pos), flags = Field(line, pos),
                     type = Field(line, pos), state = Field(line, pos), inode = Field(line, pos);
    unsigned long long got = 0;
    if (!Number(inode, 10, got) || got != static_cast<unsigned long long>(ino)) continue;
    UnixSocketLine out;
    unsigned long f = 0, t = 0, r = 0, p = 0, st = 0;
    if (!Number(refs, 16, r) || !Number(proto, 16, p) || !Number(flags, 16, f) ||
        !Number(type, 16, t) || !Number(state, 16, st)) {
      return std::nullopt;
    }
    out.type = static_cast<int>(t);
    out.listening = (f & kAcceptCon) != 0;
    out.named = !Field(line, pos).empty();
    return out;
  }
  return std::nullopt;
}

Result<ino_t> ToolSocketInode(pid_t tgid, int fd) {
  const std::string link = "/proc/" + std::to_string(tgid) + "/fd/" + std::to_string(fd);
  char target[64] = {};
  ssize_t n = RetryAsSupervisor([&] { return ::readlink(link.c_str(), target, sizeof target - 1); });
  if (n < 0) return SysError{errno == ENOENT ? EBADF : errno, "readlink", link};
  std::string_view t(target, static_cast<size_t>(n));
  constexpr std::string_view kPrefix = "socket:[";
  unsigned long long ino = 0;
  if (!t.starts_with(kPrefix) || t.back() != ']' ||
      !Number(t.substr(kPrefix.size(), t.size() - kPrefix.size() - 1), 10, ino)) {
    return SysError{ENOTSOCK, "descriptor", std::to_string(fd)};
  }
  return static_cast<ino_t>(ino);
}

ToolInetSocket InetSocketOf(std::string_view name) {
  struct Row {
    std::string_view name;
    int domain, type, protocol;
  };
  static constexpr Row kRows[] = {
      {"TCP", AF_INET, SOCK_STREAM, 0},           {"TCPv6", AF_INET6, SOCK_STREAM, 0},
      {"UDP", AF_INET, SOCK_DGRAM, 0},            {"UDPv6", AF_INET6, SOCK_DGRAM, 0},
      {"PING", AF_INET, SOCK_DGRAM, IPPROTO_ICMP}, {"PINGv6", AF_INET6, SOCK_DGRAM, IPPROTO_ICMPV6},
  };
  ToolInetSocket out;
  for (const Row& r : kRows) {
    if (r.name != name) continue;
    out.domain = r.domain;
    out.type = r.type;
    out.protocol = r.protocol;
  }
  return out;
}

Result<ToolInetSocket> ReadToolInetSocket(pid_t tgid, int fd) {
  auto ino = ToolSocketInode(tgid, fd);
  if (!ino) return ino.error();
  const std::string proc = "/proc/" + std::to_string(tgid);
  const std::string link = proc + "/fd/" + std::to_string(fd);
  char name[64] = {};
  ssize_t n = RetryAsSupervisor(
      [&] { return ::getxattr(link.c_str(), "system.sockprotoname", name, sizeof name - 1); });
  if (n <= 0) return SysError{errno == ENOENT ? EBADF : errno, "sockprotoname", link};
  ToolInetSocket out = InetSocketOf(std::string_view(name, ::strnlen(name, static_cast<size_t>(n))));
  if (out.domain == 0) return SysError{EAFNOSUPPORT, "not a TCP or UDP socket", name};
  auto flags = ToolFdFlags(tgid, fd);
  if (!flags) return flags.error();
  out.ino = ino.value();
  out.nonblock = (flags.value() & O_NONBLOCK) != 0;
  out.cloexec = (flags.value() & O_CLOEXEC) != 0;
  return out;
}

Result<ToolUnixSocket> ReadToolUnixSocket(pid_t tgid, int fd) {
  auto ino = ToolSocketInode(tgid, fd);
  if (!ino) return ino.error();
  const std::string proc = "/proc/" + std::to_string(tgid);
  auto table = ReadProc(proc + "/net/unix");
  if (!table) return table.error();
  auto line = FindUnixSocketLine(table.value(), ino.value());
  if (!line) return SysError{EAFNOSUPPORT, "not an AF_UNIX socket"};
  auto flags = ToolFdFlags(tgid, fd);
  if (!flags) return flags.error();
  ToolUnixSocket out;
  out.ino = ino.value();
  out.line = line.value();
  out.nonblock = (flags.value() & O_NONBLOCK) != 0;
  out.cloexec = (flags.value() & O_CLOEXEC) != 0;
  return out;
}

Result<InetStandIn> MakeInetStandIn(StandIns& kept, pid_t tgid, int fd,
                                    const DatagramMaker& datagrams) {
  auto inet = ReadToolInetSocket(tgid, fd);
  if (!inet && inet.error().err != EAFNOSUPPORT && inet.error().err != ENOTSOCK) {
    return SysError{EBADF, "the tool's socket", inet.error().detail};
  }
  if (!inet) return inet.error();
  InetStandIn out;
  if (std::optional<Fd> bound = kept.Take(inet->ino)) {
    out.sock = std::move(*bound);
    return out;
  }
  const int type = inet->type | (inet->nonblock ? SOCK_NONBLOCK : 0);
  if (inet->type == SOCK_DGRAM && datagrams) {
    auto made = datagrams(inet->domain, type, inet->protocol);
    if (!made) return made.error();
    out.sock = std::move(made.value());
  } else {
    out.sock = Fd(::socket(inet->domain, type | SOCK_CLOEXEC, inet->protocol));
    if (!out.sock) return Errno("socket");
  }
  out.install_at = fd;
  out.install_flags = inet->cloexec ? O_CLOEXEC : 0;
  return out;
}

void StandIns::Keep(ino_t ino, Fd sock) {
  std::lock_guard<std::mutex> l(mu_);
  if (kept_.size() >= kMax) kept_.pop_front();
  kept_.emplace_back(ino, std::move(sock));
}

std::optional<Fd> StandIns::Take(ino_t ino) {
  std::lock_guard<std::mutex> l(mu_);
  for (auto it = kept_.begin(); it != kept_.end(); ++it) {
    if (it->first != ino) continue;
    Fd out = std::move(it->second);
    kept_.erase(it);
    return out;
  }
  return std::nullopt;
}

}  // namespace cordon::supervisor
