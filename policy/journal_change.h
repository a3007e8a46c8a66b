// The record of a recoverable run (issue 26): every change the supervisor
// made to a name in the workspace, in order, one JSON object a line, so that
// `cordon undo` can take the changes back in reverse and `cordon runs show`
// can say what the run did. Pure: the text in, the records out.
//
//   save    the entry at `path` (inode `ino`, existing before the run) was
//           moved into the journal as slot `slot` (a delete, a rename over
//           it, an O_TRUNC open): nothing of it was lost
//   copy    a copy of the file at `path` (before the run) was kept as slot
//           `slot` before it was written in place; the inode stays
//   create  the run made `path` (inode `ino`): a file, directory, link
//   move    the entry `ino` went from `path` to `to` (a rename)
//   drop    the run's own entry `ino` at `path` was removed (nothing to keep)
//   swap    `path` and `to` were exchanged (renameat2 RENAME_EXCHANGE): `ino`
//           is now at `to`, `other_ino` at `path`
//   attr    before a metadata change of the entry `ino` on `dev` at `path`
//           (existing before the run), the old value of one attribute it
//           altered (`attr`: policy/attr_keep.h); once per file and
//           attribute a run. Added with issue 27: a journal without such
//           lines reads as before; a cordon older than them refuses a
//           journal that has them as damaged (an unknown op), touching
//           nothing.
//
// Paths are relative to the workspace, normal, with no "." or ".." segment:
// a record that names anything else is refused as a whole (the journal was
// edited by hand), so nothing outside the workspace is ever touched by undo.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "policy/attr_keep.h"

namespace cordon::policy {

enum class ChangeOp : std::uint8_t { kSave, kCopy, kCreate, kMove, kDrop, kSwap, kAttr };

enum class KeptType : std::uint8_t { kFile, kDir, kLink, kOther };

struct Change {
  ChangeOp op = ChangeOp::kCreate;
  std::string path;
  std::string to;          // kMove and kSwap
  std::uint64_t ino = 0;
  std::uint64_t slot = 0;  // kSave and kCopy
  KeptType type = KeptType::kFile;
  std::uint64_t size = 0;  // kSave and kCopy: the bytes kept
  // kSave: why the entry left its name ("delete", "replace", "truncate").
  std::string why;
  std::uint64_t other_ino = 0;  // kSwap: the entry now at `path`
  std::uint64_t dev = 0;        // kAttr: the file's device (with `ino`, its identity)
  OldAttr attr;                 // kAttr: what the change altered, as it was
};

const char* ChangeOpName(ChangeOp op);
const char* KeptTypeName(KeptType t);

// One line of the record (no newline).
std::string ChangeLine(const Change& c);

// The change a line holds, or why it is not one (`*error`).
std::optional<Change> ParseChangeLine(std::string_view line, std::string* error);

// Bytes as the records hold them (JSON wants UTF-8; a name may be any
// bytes): '%', control bytes and bytes >= 0x80 as %XX. Unescape gives
// nullopt for a malformed escape.
std::string EscapeBytes(std::string_view raw);
std::optional<std::string> UnescapeBytes(std::string_view text);

// A workspace-relative path as the record allows it: not empty, not
// absolute, no empty, "." or ".." segment, no NUL, at most PATH_MAX bytes.
bool ValidRecordPath(std::string_view rel);

}  // namespace cordon::policy
