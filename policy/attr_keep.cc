#include "policy/attr_keep.h"

#include <cstdio>

#include "policy/bypass.h"

namespace cordon::policy {
namespace {

constexpr const char* kKinds[] = {"mode", "owner", "times", "xattr"};
constexpr const char* kChanges[] = {"mode changed", "owner changed", "times changed",
                                    "xattr changed"};
constexpr const char* kAccessAcl = "system.posix_acl_access";

std::string Time(std::int64_t sec, std::int64_t nsec) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%lld.%09lld", static_cast<long long>(sec),
                static_cast<long long>(nsec));
  return buf;
}

}  // namespace

std::vector<AttrKind> AttrsAltered(AttrOp op, std::string_view xattr_name, bool setid) {
  switch (op) {
    case AttrOp::kMode:
      return {AttrKind::kMode};
    case AttrOp::kOwner:
      if (setid) return {AttrKind::kMode, AttrKind::kOwner};
      return {AttrKind::kOwner};
    case AttrOp::kTimes:
      return {AttrKind::kTimes};
    case AttrOp::kXattr:
      if (xattr_name == kAccessAcl) return {AttrKind::kMode, AttrKind::kXattr};
      return {AttrKind::kXattr};
    case AttrOp::kNone:
    case AttrOp::kOther:
      return {};
  }
  return {};
}

const char* AttrKindName(AttrKind k) { return kKinds[static_cast<int>(k)]; }

const char* AttrChangeKind(AttrOp op) {
  switch (op) {
    case AttrOp::kMode:
      return kChanges[static_cast<int>(AttrKind::kMode)];
    case AttrOp::kOwner:
      return kChanges[static_cast<int>(AttrKind::kOwner)];
    case AttrOp::kTimes:
      return kChanges[static_cast<int>(AttrKind::kTimes)];
    case AttrOp::kXattr:
      return kChanges[static_cast<int>(AttrKind::kXattr)];
    case AttrOp::kNone:
    case AttrOp::kOther:
      return nullptr;
  }
  return nullptr;
}

bool AttrChangeNamed(std::string_view kind) {
  for (const char* c : kChanges) {
    if (kind == c) return true;
  }
  return false;
}

std::optional<AttrKind> AttrKindNamed(std::string_view name) {
  for (int i = 0; i < 4; ++i) {
    if (name == kKinds[i]) return static_cast<AttrKind>(i);
  }
  return std::nullopt;
}

bool KeptXattrName(std::string_view name) {
  if (name == kAccessAcl || name == "system.posix_acl_default") return true;
  // "user." and at least one byte after it; at most XATTR_NAME_MAX bytes.
  return name.size() > 5 && name.size() <= 255 && name.substr(0, 5) == "user." &&
         name.find('\0') == std::string_view::npos;
}

bool ValidOldAttr(const OldAttr& a) {
  auto nsec_ok = [](std::int64_t n) { return n >= 0 && n <= 999999999; };
  switch (a.kind) {
    case AttrKind::kMode:
      return (a.mode & ~07777u) == 0;
    case AttrKind::kOwner:
      // -1 would mean "leave it" to chown(2): never an owner a file had.
      return a.uid != static_cast<std::uint32_t>(-1) && a.gid != static_cast<std::uint32_t>(-1);
    case AttrKind::kTimes:
      return nsec_ok(a.atime_nsec) && nsec_ok(a.mtime_nsec);
    case AttrKind::kXattr:
      return KeptXattrName(a.name) && a.value.size() <= kMaxKeptXattr &&
             (a.present || a.value.empty());
  }
  return false;
}

std::string OldAttrText(const OldAttr& a) {
  switch (a.kind) {
    case AttrKind::kMode: {
      char buf[16];
      std::snprintf(buf, sizeof buf, "mode %04o", static_cast<unsigned>(a.mode & 07777));
      return buf;
    }
    case AttrKind::kOwner:
      return "owner " + std::to_string(a.uid) + ":" + std::to_string(a.gid);
    case AttrKind::kTimes:
      return "times atime " + Time(a.atime_sec, a.atime_nsec) + " mtime " +
             Time(a.mtime_sec, a.mtime_nsec);
    case AttrKind::kXattr:
      if (!a.present) return "xattr " + a.name + " removed (absent before the run)";
      return "xattr " + a.name + " (" + std::to_string(a.value.size()) + " bytes)";
  }
  return "";
}

}  // namespace cordon::policy
