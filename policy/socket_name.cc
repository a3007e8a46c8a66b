#include "policy/socket_name.h"

#include <vector>

#include "policy/path_segments.h"

namespace cordon::policy {

std::optional<SocketNameLayout> MirrorSocketName(std::string_view written, std::string_view name) {
  if (written.empty() || name.empty() || name == "." || name == "..") return std::nullopt;
  // A trailing "/" the kernel refuses (ENOENT): so do we.
  if (written.back() == '/') return std::nullopt;
  const bool absolute = written.front() == '/';
  std::vector<std::string_view> segs = SplitSegments(written);
  // The last segment is the name itself.
  if (segs.empty() || segs.back() != name) return std::nullopt;
  segs.pop_back();
  SocketNameLayout out;
  if (!absolute) out.mount_at = "cwd";
  for (std::string_view s : segs) {
    if (s.empty() || s == ".") continue;
    if (s == "..") return std::nullopt;
    if (!out.mount_at.empty()) out.mount_at += '/';
    out.mount_at += s;
  }
  if (out.mount_at.empty()) return std::nullopt;  // "/s.sock": the scratch root itself
  out.cwd = absolute ? "/" : "/cwd";
  return out;
}

}  // namespace cordon::policy
