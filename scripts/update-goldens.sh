#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Regenerates the pinned outputs in tests/data/golden/ (what tst_goldens compares `vtrain simulate --json`
# and, for a scenario without a plan, `vtrain explore --json` with): builds the CLI and the test, then runs the
# test with VTRAIN_UPDATE_GOLDENS=1, which writes every file from the CLI's output instead of comparing.
#
# Run it on purpose only, when a change is meant to move predictions, and say in the commit WHY they moved
# (which change, which examples and fields, by about how much): `git diff tests/data/golden` shows what did.
#   usage: scripts/update-goldens.sh [BUILD_DIR]     (default build/, configured by scripts/build.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
if [ ! -f "$build/CMakeCache.txt" ]; then
  echo "update-goldens.sh: $build is not configured: run scripts/build.sh first" >&2
  exit 2
fi
if command -v ccache >/dev/null 2>&1; then
  export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$PWD}"
fi
cmake --build "$build" --target vtrain tst_goldens
VTRAIN_UPDATE_GOLDENS=1 VTRAIN_PROFILE_PATH="$PWD/profiles" "$build/tests/cli/tst_goldens"
git status --short tests/data/golden
echo "update-goldens.sh: review 'git diff tests/data/golden' and say why the predictions moved in the commit"
