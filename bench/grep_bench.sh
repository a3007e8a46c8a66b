#!/usr/bin/env bash
# `cordon grep` in the bench kit's rg-read workload, side by side with bare
# rg and `cordon run -- rg` in one invocation of ../shared/bench/run.sh
# (interleaved rounds, median, ratio to bare, the kit's sum-of-counts check).
# The quick tree (3,000 files in 2,220 directories: 5,220 entries) is under
# the tree check's 10,000-entry limit; the full tree (50,000 files) is
# refused whole by design, so --quick is the default.
#
#   bench/grep_bench.sh CORDON_BIN [run.sh option]...   e.g. --rounds 10 --json FILE
#
# `cordon grep` takes `-- PATTERN [PATH]...`, not ripgrep's flags, so its
# config goes through bench/rg_as_cordon_grep.sh, which turns exactly the
# workload's `rg --no-config -c PATTERN TREE` into
# `cordon grep --workspace WS --count -- PATTERN TREE` (same output).
set -euo pipefail
cordon=$(realpath "${1:?usage: grep_bench.sh CORDON_BIN [run.sh option]...}")
shift
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
kit=${CORDON_BENCH_KIT:-$(cd "$here/../../shared/bench" && pwd)}
exec "$kit/run.sh" --quick --workloads rg-read "$@" \
  "cordon-run-rg=$cordon run --workspace {ws} --" \
  "cordon-grep=$here/rg_as_cordon_grep.sh $cordon --workspace {ws} --"
