#!/bin/sh
# The kit's floor launcher (bench/floor_launcher.cc) is a floor only if it
# enforces what it stands for: in each of its modes a write inside the
# workspace works, a write outside it is refused by Landlock, a notified
# call (mkdir) is answered, and the exit status is the tool's. A floor that
# skipped its layers would be fast for nothing.
#
# Usage: floor_launcher_test.sh FLOOR_LAUNCHER
set -eu
floor=$1
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
ws="$scratch/ws"
mkdir -p "$ws/a/b" "$ws/c"
fail=0
for mode in "" "--scan" "--scan --overlap" "--scan --walkers 1"; do
  rm -f "$scratch/outside" "$ws/inside"
  # shellcheck disable=SC2086
  if ! TMPDIR="$scratch" "$floor" $mode "$ws" -- sh -c \
      "mkdir '$ws/d' && rmdir '$ws/d' && echo x > '$ws/inside' && ! (echo x > '$scratch/outside') 2>/dev/null"; then
    echo "floor_launcher $mode: the honest tool failed or the outside write went through" >&2
    fail=1
  fi
  [ -f "$ws/inside" ] || { echo "floor_launcher $mode: nothing written inside" >&2; fail=1; }
  [ ! -e "$scratch/outside" ] || { echo "floor_launcher $mode: wrote outside the workspace" >&2; fail=1; }
  # shellcheck disable=SC2086
  status=0
  TMPDIR="$scratch" "$floor" $mode "$ws" -- sh -c 'exit 7' || status=$?
  [ "$status" = 7 ] || { echo "floor_launcher $mode: exit status $status, not the tool's 7" >&2; fail=1; }
done
# The scan's cache was written and, after a change in the tree, rewritten.
ls "$scratch"/cordon-floor-scan-* >/dev/null 2>&1 || { echo "no scan cache kept" >&2; fail=1; }
exit $fail
