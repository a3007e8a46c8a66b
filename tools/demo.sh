#!/usr/bin/env bash
# The quick-start demo: a demo workspace, ripgrep confined to it, and a read
# of a file outside it refused by the kernel. Installs and builds first.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
tools/bootstrap.sh
cordon=./build/tools/cordon
demo=$(mktemp -d /tmp/cordon-demo-XXXXXX)
trap 'rm -rf "$demo"' EXIT
mkdir -p "$demo/ws/src" "$demo/outside"
printf 'fn main() {\n    // TODO: confine me\n}\n' > "$demo/ws/src/main.rs"
printf 'TODO: write the docs\n' > "$demo/ws/README"
printf 'TODO: the secret outside the workspace\n' > "$demo/outside/secret.txt"

echo "\$ cordon run --workspace $demo/ws -- rg -n TODO"
"$cordon" run --workspace "$demo/ws" -- rg --no-config -n TODO
echo
echo "\$ cordon run --workspace $demo/ws -- rg -n TODO $demo/outside/secret.txt"
set +e
"$cordon" --log-level info run --workspace "$demo/ws" -- rg --no-config -n TODO "$demo/outside/secret.txt"
rc=$?
set -e
echo "(exit status $rc: the read outside the workspace was refused)"
[[ $rc -ne 0 ]] || { echo "demo: the outside read was NOT refused" >&2; exit 1; }
