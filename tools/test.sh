#!/usr/bin/env bash
# Runs every test: installs what is missing, builds, runs ctest.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
tools/bootstrap.sh
ctest --test-dir build --output-on-failure -j"$(nproc)" --timeout 600
