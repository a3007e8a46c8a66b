#include "supervisor/loopback_facts.h"

#include <dirent.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <unordered_set>

namespace cordon::supervisor {
namespace {

// The whole of a /proc file (its size says 0): false when it cannot be read.
bool ReadAll(const std::string& path, std::string* out) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char buf[16384];
  ssize_t n;
  while ((n = ::read(fd, buf, sizeof buf)) > 0) out->append(buf, static_cast<size_t>(n));
  int err = errno;
  ::close(fd);
  errno = err;
  return n == 0;
}

// Numeric names in directory `path` (pids in a children list are
// space-separated in a file instead: see Children).
std::vector<pid_t> NumericEntries(const std::string& path) {
  std::vector<pid_t> out;
  DIR* d = ::opendir(path.c_str());
  if (d == nullptr) return out;
  while (dirent* e = ::readdir(d)) {
    char* end;
    long v = std::strtol(e->d_name, &end, 10);
    if (*end == '\0' && v > 0) out.push_back(static_cast<pid_t>(v));
  }
  ::closedir(d);
  return out;
}

// The children of every thread of process `pid`.
std::vector<pid_t> Children(pid_t pid) {
  std::vector<pid_t> out;
  std::string base = "/proc/" + std::to_string(pid) + "/task";
  for (pid_t tid : NumericEntries(base)) {
    std::string text;
    if (!ReadAll(base + "/" + std::to_string(tid) + "/children", &text)) continue;
    const char* p = text.c_str();
    char* end;
    for (long v; (v = std::strtol(p, &end, 10)) > 0; p = end) out.push_back(static_cast<pid_t>(v));
  }
  return out;
}

// Which of `wanted` the processes of this run hold (removed from `wanted`
// as they are found; the walk stops when none is left).
size_t CountHeld(std::unordered_set<uint64_t>& wanted) {
  size_t found = 0;
  std::vector<pid_t> todo = Children(::getpid());
  std::unordered_set<pid_t> seen;
  // Bounded: a fork bomb below us ends the walk rather than the supervisor.
  for (size_t i = 0; i < todo.size() && i < 100000 && !wanted.empty(); ++i) {
    pid_t pid = todo[i];
    if (!seen.insert(pid).second) continue;
    std::string fds = "/proc/" + std::to_string(pid) + "/fd";
    DIR* d = ::opendir(fds.c_str());
    if (d != nullptr) {
      while (dirent* e = ::readdir(d)) {
        if (e->d_name[0] == '.') continue;
        char link[64];
        ssize_t n = ::readlinkat(::dirfd(d), e->d_name, link, sizeof link - 1);
        if (n <= 0) continue;
        link[n] = '\0';
        unsigned long long ino;
        if (std::sscanf(link, "socket:[%llu]", &ino) == 1 && wanted.erase(ino) > 0) ++found;
      }
      ::closedir(d);
    }
    for (pid_t c : Children(pid)) todo.push_back(c);
  }
  return found;
}

}  // namespace

ListenerFacts GatherListenerFacts(pid_t tgid, const policy::InetEndpoint& target) {
  ListenerFacts f;
  std::unordered_set<uint64_t> inodes;
  std::string base = "/proc/" + std::to_string(tgid) + "/net/";
  for (bool v6 : {false, true}) {
    std::string table;
    if (!ReadAll(base + (v6 ? "tcp6" : "tcp"), &table)) {
      // No IPv6 in this kernel: no tcp6 table, and no v6 listener.
      if (v6 && errno == ENOENT) continue;
      ++f.listeners;
      continue;
    }
    for (const policy::Listener& l : policy::ParseTcpListeners(table, v6)) {
      if (policy::Reaches(l, target) && inodes.insert(l.inode).second) ++f.listeners;
    }
  }
  if (!inodes.empty()) f.listeners_of_run = CountHeld(inodes);
  return f;
}

bool DualStack(int sock, int domain) {
  int only = 1;
  socklen_t len = sizeof only;
  return domain == AF_INET6 && ::getsockopt(sock, IPPROTO_IPV6, IPV6_V6ONLY, &only, &len) == 0 &&
         only == 0;
}

}  // namespace cordon::supervisor
