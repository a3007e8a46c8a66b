#!/usr/bin/env bash
# Builds the libFuzzer targets (tests/fuzz/*_fuzz.cc) with clang, ASan and
# UBSan in a separate build directory, then runs each for SECONDS over its
# committed seed corpus (tests/fuzz/corpus/<name>/). New inputs go to the
# build directory, never into the tree. Exit status non-zero on a finding.
#
#   tools/fuzz.sh [SECONDS] [TARGET...]     (default: 60 s, every target)
#   BUILD_DIR=build-fuzz                    (override to keep builds apart)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
secs=${1:-60}
shift || true
build=${BUILD_DIR:-build-fuzz}
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  for f in tests/fuzz/*_fuzz.cc; do targets+=("$(basename "$f" .cc)"); done
fi
command -v clang++ >/dev/null || { echo "fuzz.sh: clang++ not found" >&2; exit 125; }
# Instrument everything the targets link (the parser, path admission), not
# only the fuzz entry points.
CC=clang CXX=clang++ cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCORDON_FUZZ=ON -DCORDON_BUILD_BENCH=OFF \
  -DCMAKE_C_FLAGS="-fsanitize=address,undefined -fsanitize=fuzzer-no-link" \
  -DCMAKE_CXX_FLAGS="-fsanitize=address,undefined -fsanitize=fuzzer-no-link" >/dev/null
status=0
for t in "${targets[@]}"; do
  cmake --build "$build" -j2 --target "$t"
  seeds="tests/fuzz/corpus/${t%_fuzz}"
  work="$build/fuzz-corpus/$t"
  mkdir -p "$work" "$build/fuzz-artifacts"
  echo "== $t: ${secs}s over $seeds"
  if ! "$build/tests/fuzz/$t" -max_total_time="$secs" -print_final_stats=1 \
      -artifact_prefix="$build/fuzz-artifacts/$t-" "$work" "$seeds"; then
    echo "fuzz.sh: $t found a problem (see $build/fuzz-artifacts/)" >&2
    status=1
  fi
done
exit $status
