#!/bin/sh
# Puts `cordon grep` into ../shared/bench/run.sh, whose configs are a
# template the workload command is appended to. The rg-read workload's
# command is exactly `rg --no-config -c PATTERN TREE`; this translates that
# line, and nothing looser, into
#
#   CORDON grep [OPTION]... --count -- PATTERN TREE
#
# which prints the same `TREE/FILE:COUNT` lines (the kit checks their sum).
# Any other command (the kit's probes: /bin/true, a write outside the
# workspace) runs as `CORDON run [OPTION]... -- CMD...`, the same sandbox
# cordon grep launches ripgrep in.
#
#   cordon-grep=/path/to/bench/rg_as_cordon_grep.sh /path/to/cordon --workspace {ws} --
#
# A POSIX sh that execs: it costs one small exec on top of cordon's own
# (bench/README.md has the figure).
set -eu
[ $# -ge 2 ] || { echo "usage: rg_as_cordon_grep.sh CORDON [OPTION]... -- CMD..." >&2; exit 125; }
cordon=$1
shift
# Rotate the options (up to --) behind the command: "$@" = CMD... OPTION...
nopt=0
while [ "$nopt" -lt $# ] && [ "$1" != "--" ]; do
  set -- "$@" "$1"
  shift
  nopt=$((nopt + 1))
done
[ "$nopt" -lt $# ] || { echo "rg_as_cordon_grep.sh: no -- before the command" >&2; exit 125; }
shift
ncmd=$(($# - nopt))
if [ "$ncmd" -eq 5 ] && [ "$1" = rg ] && [ "$2" = --no-config ] && [ "$3" = -c ]; then
  pattern=$4
  tree=$5
  shift 5
  exec "$cordon" grep "$@" --count -- "$pattern" "$tree"
fi
# "$@" = CMD... OPTION... -> OPTION... -- CMD...
set -- "$@" --
i=0
while [ "$i" -lt "$ncmd" ]; do
  set -- "$@" "$1"
  shift
  i=$((i + 1))
done
exec "$cordon" run "$@"
