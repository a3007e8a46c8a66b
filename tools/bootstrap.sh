#!/usr/bin/env bash
# Installs cordon's build and test dependencies from Debian packages when
# missing, then configures and builds into ./build. Idempotent.
#   tools/bootstrap.sh            install + build
#   tools/bootstrap.sh --no-build install only
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

pkgs=(build-essential cmake pkg-config libseccomp-dev libcap-dev libssl-dev libspdlog-dev
      nlohmann-json3-dev libcli11-dev libgtest-dev libgmock-dev libbenchmark-dev ripgrep
      clang python3 libpython3.11-testsuite git btrfs-progs ccache curl openssl python3-pip)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# The web proxy's npm test needs npm: Debian's, unless a Node.js install
# (nodesource's nodejs, which conflicts with Debian's npm) brings its own.
command -v npm >/dev/null || missing+=(npm)
if ((${#missing[@]})); then
  echo "bootstrap: installing ${missing[*]}" >&2
  if [[ $(id -u) -ne 0 ]]; then SUDO=sudo; else SUDO=; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
[[ "${1:-}" == "--no-build" ]] && exit 0

cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$(nproc)"
