#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Checks that every tracked C++ file (git ls-files '*.cpp' '*.h') is formatted as .clang-format says, with
# clang-format 14 (other versions format differently, so they are not used). Fix with
#   clang-format -i $(git ls-files '*.cpp' '*.h')
#   usage: scripts/check-format.sh          (env: CLANG_FORMAT, the binary to use)
# Exit status: 0 when every file is formatted (or clang-format 14 is missing: said, and skipped), 1 otherwise.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
major() { "$1" --version 2>/dev/null | grep -o 'version [0-9]*' | grep -o '[0-9]*$' || true; }
cf=""
for candidate in ${CLANG_FORMAT:-} clang-format-14 clang-format; do
  if command -v "$candidate" >/dev/null 2>&1 && [ "$(major "$candidate")" = 14 ]; then
    cf=$candidate
    break
  fi
done
if [ -z "$cf" ]; then
  echo "check-format.sh: clang-format 14 not found: format check SKIPPED (install clang-format-14 to check)"
  exit 0
fi
files=$(git ls-files '*.cpp' '*.h' | wc -l)
if ! git ls-files -z '*.cpp' '*.h' | xargs -0 "$cf" --dry-run --Werror; then
  echo "check-format.sh: files above are not formatted; run: clang-format -i \$(git ls-files '*.cpp' '*.h')" >&2
  exit 1
fi
echo "check-format.sh: $files files formatted as .clang-format says ($cf, $(($(date +%s) - start)) s)"
