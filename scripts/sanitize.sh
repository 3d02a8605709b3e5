#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Builds core, the vtrain CLI and their tests with AddressSanitizer + UndefinedBehaviorSanitizer
# (-fno-sanitize-recover: any finding fails the test) in build-asan/ and runs them with ctest.
# The GUI is left out to fit CI's budget on 2 cores (its tests are Qt widget tests; add
# -DVTRAIN_BUILD_GUI=ON by hand to include them).
#   usage: scripts/sanitize.sh [BUILD_DIR]      (env: JOBS, default 2)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-asan}
jobs=${JOBS:-2}
start=$(date +%s)
launcher=()
command -v ccache >/dev/null 2>&1 && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache) && export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$PWD}"
# -O1: sanitizer runs stay quick to build and run; asserts stay on (no NDEBUG).
cmake -S . -B "$build" -G Ninja "${launcher[@]}" -DCMAKE_BUILD_TYPE=Debug "-DCMAKE_CXX_FLAGS_DEBUG=-O1 -g1" \
  -DVTRAIN_ENABLE_SANITIZERS=ON -DVTRAIN_BUILD_GUI=OFF -DVTRAIN_BUILD_BENCH=OFF >/dev/null
cmake --build "$build" -j"$jobs"
built=$(date +%s)
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:strict_string_checks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
# tst_validation_held_out (two leave-one-source-out runs, 3 minutes optimised) is left out: under ASan it
# would take most of CI's budget, and the code it drives is the calibration and validation code that
# tst_grouped_validation, tst_calibration and tst_validation_public run here.
ctest --test-dir "$build" -j"$jobs" --output-on-failure -E '^tst_validation_held_out$'
echo "sanitize.sh: built in $((built - start)) s, tests ran in $(( $(date +%s) - built )) s"
