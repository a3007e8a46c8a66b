#!/usr/bin/env bash
# Side by side: bare ripgrep vs `cordon run -- rg` vs `cordon grep` on the
# same generated tree (the bench kit's gen.py), warm cache, interleaved
# rounds, median wall clock and ratio to bare. `cordon grep` includes its
# bounded tree check, so the tree must stay under the 10,000-entry limit.
#
#   bench/grep_bench.sh CORDON_BIN [--files N] [--bytes N] [--rounds N] [--ws DIR]
#
# Why not ../shared/bench/run.sh: its rg-read workload appends
# `rg --no-config -c PATTERN TREE` to a config's template, and `cordon grep`
# takes no ripgrep flags (its template is fixed), so it cannot be a config.
set -euo pipefail
cordon=${1:?usage: grep_bench.sh CORDON_BIN [--files N] [--bytes N] [--rounds N] [--ws DIR]}
shift
files=3000 bytes=30000000 rounds=15 ws=${CORDON_BENCH_WS:-${XDG_CACHE_HOME:-$HOME/.cache}/cordon-bench/grep-ws}
while [[ $# -gt 0 ]]; do
  case $1 in
    --files) files=$2; shift 2 ;;
    --bytes) bytes=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --ws) ws=$2; shift 2 ;;
    *) echo "grep_bench: unknown option $1" >&2; exit 2 ;;
  esac
done
kit=$(cd "$(dirname "$0")/../../shared/bench" && pwd)
tree="$ws/tree-$files-$bytes"
if [[ ! -d $tree ]]; then
  mkdir -p "$ws"
  python3 "$kit/gen.py" tree --files "$files" --bytes "$bytes" "$tree" >&2
fi
exec python3 - "$cordon" "$tree" "$rounds" <<'PY'
import json, os, statistics, subprocess, sys, time
cordon, tree, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
meta = json.load(open(tree + ".json"))  # written by gen.py next to the tree
pattern = meta["pattern"]
configs = {
    "bare rg": ["rg", "--no-config", "-e", pattern, "--"],
    "cordon run -- rg": [cordon, "run", "--workspace", tree, "--", "rg", "--no-config", "-e", pattern, "--"],
    "cordon grep": [cordon, "grep", "--workspace", tree, "--", pattern],
}
def run(argv):
    t = time.perf_counter()
    p = subprocess.run(argv, cwd=tree, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE)
    return time.perf_counter() - t, p
ref = None
for name, argv in configs.items():  # warm-up and validation
    _, p = run(argv)
    lines = sorted(p.stdout.splitlines())
    if p.returncode != 0:
        sys.exit("%s failed rc=%d: %s" % (name, p.returncode, p.stderr.decode()[-300:]))
    if ref is None: ref = lines
    elif lines != ref:
        sys.exit("%s: %d lines, bare rg %d: not the same matches" % (name, len(lines), len(ref)))
samples = {n: [] for n in configs}
names = list(configs)
for r in range(rounds):
    for n in names[r % len(names):] + names[:r % len(names)]:
        samples[n].append(run(configs[n])[0])
entries = sum(len(d) + len(f) for _, d, f in os.walk(tree))
print("tree: %s (%d entries, %d matching lines), %d rounds" % (tree, entries, len(ref), rounds))
bare = statistics.median(samples["bare rg"])
print("%-18s %10s %10s %10s %8s" % ("config", "median ms", "min ms", "max ms", "ratio"))
for n in names:
    s = samples[n]
    print("%-18s %10.1f %10.1f %10.1f %7.3fx" % (n, statistics.median(s) * 1e3, min(s) * 1e3,
                                                max(s) * 1e3, statistics.median(s) / bare))
PY
