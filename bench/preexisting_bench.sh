#!/bin/bash
# Issue 26: what keeping the user's files costs. 1000 files made bare
# before each run; inside it, 500 are overwritten (O_TRUNC) and all are
# removed, then their directory: 1501 operations on pre-existing entries.
# Configs, interleaved per round, wall clock of the whole command:
#   bare         no sandbox
#   recoverable  the default: each file moved into the run's journal first
#   ask          today's strict mode with an approver that allows each delete
#                (a pre-existing directory it cannot remove: rmdir fails there)
#   allow        sensitive.delete allow: deletes go to the kernel unkept
# Prints the median per config and its ratio to bare.
#   bench/preexisting_bench.sh [CORDON] [ROUNDS] [WS]   (WS on one mount, default /dev/shm/cordon-prebench)
set -u
C=${1:-$(dirname "$0")/../build/tools/cordon}
ROUNDS=${2:-5}
WS=${3:-/dev/shm/cordon-prebench}
rules=$(mktemp)
echo '[{"glob": "d/*"}, {"glob": "d"}]' > "$rules"
prep() { rm -rf "$WS"; mkdir -p "$WS/d"; for i in $(seq 1 1000); do echo "file $i" > "$WS/d/f$i"; done; }
work='cd d && for i in $(seq 1 500); do echo new > f$i; done && rm -f f* && cd .. ; rmdir d 2>/dev/null; true'
out=$(for round in $(seq 1 "$ROUNDS"); do
  for cfg in bare recoverable ask allow; do
    prep
    s=$(date +%s%N)
    case $cfg in
      bare) (cd "$WS" && sh -c "$work") ;;
      recoverable) "$C" run --profile workspace-write --workspace "$WS" -- sh -c "$work" ;;
      ask) "$C" run --profile workspace-write --sensitive-delete ask --approvals "rules:$rules" \
             --workspace "$WS" -- sh -c "$work" ;;
      allow) "$C" run --profile workspace-write --sensitive-delete allow --workspace "$WS" -- sh -c "$work" ;;
    esac >/dev/null 2>&1
    e=$(date +%s%N)
    if [ -e "$WS/d/f1" ] || [ -e "$WS/d/f1000" ]; then echo "$cfg FAILED"; else echo "$cfg $(( (e - s) / 1000 ))"; fi
  done
done)
python3 - "$out" <<'PY'
import statistics, sys
rows = {}
for line in sys.argv[1].splitlines():
    cfg, v = line.split()
    rows.setdefault(cfg, []).append(v)
bare = statistics.median(int(v) for v in rows["bare"])
for cfg, vs in rows.items():
    if "FAILED" in vs:
        print(f"{cfg:12s} FAILED (files still there)")
        continue
    m = statistics.median(int(v) for v in vs)
    print(f"{cfg:12s} {m/1000:8.1f} ms  x{m/bare:.2f}")
PY
rm -rf "$WS" "$rules" "$(dirname "$WS")/.cordon-journal-$(id -u)"
