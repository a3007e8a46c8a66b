#!/bin/sh
# The one-way street (DESIGN.md): policy/ includes nothing of cordon's
# outside policy/ and base/ (system and library headers come in <...>).
# Usage: includes_test.sh SOURCE_DIR
set -u
bad=$(grep -HnE '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$1"/policy/*.h "$1"/policy/*.cc |
  grep -vE '#[[:space:]]*include[[:space:]]*"(policy|base)/')
if [ -n "$bad" ]; then
  echo "policy/ includes from outside policy/ and base/:"
  echo "$bad"
  exit 1
fi
echo "policy/ includes only policy/ and base/"
