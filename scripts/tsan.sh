#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Builds core, its tests (the fuzz corpus replay included) and the GUI's sweep-runner test with
# ThreadSanitizer (-fsanitize=thread, -O1) in build-tsan/ and runs `ctest -L core` and tst_sweep_runner
# (offscreen, with the plan-detail and case-study runners); .ci/run runs it. halt_on_error: any report fails the
# test that hit it. scripts/tsan.supp holds the suppressions, each a proven oneTBB false positive with its
# reason; add nothing else there. Every test runs with oneTBB's allocator forwarded to malloc
# (tests/tsan/tbbmalloc_shim.cpp, preloaded by ctest), and this script checks that it is in force.
#   usage: scripts/tsan.sh [BUILD_DIR]      (env: JOBS, default 2; TSAN_OPTIONS is extended, not replaced)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-tsan}
jobs=${JOBS:-2}
start=$(date +%s)
launcher=()
command -v ccache >/dev/null 2>&1 && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache) && export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$PWD}"
# -O1: quick to build and run; asserts stay on (no NDEBUG). The GUI libraries are configured (the sweep-runner
# test links vtrain_models) but only the targets below are built.
cmake -S . -B "$build" -G Ninja "${launcher[@]}" -DCMAKE_BUILD_TYPE=Debug "-DCMAKE_CXX_FLAGS_DEBUG=-O1 -g1" \
  -DVTRAIN_ENABLE_TSAN=ON -DVTRAIN_BUILD_BENCH=OFF >/dev/null
cmake --build "$build" -j"$jobs" --target tests/core/all tst_fuzz_replay tst_sweep_runner vtrain_tsan_tbbmalloc
built=$(date +%s)
supp="$PWD/scripts/tsan.supp"

# ignore_noninstrumented_modules=1: interceptors called from a library built without TSan (Debian's Qt and
# oneTBB) are not checked. Qt Test's watchdog thread is joined through QThread::wait(), whose QMutex is a
# futex inside libQt6Core that TSan cannot see, so without the option every Qt Test binary reports its own
# watchdog's QWaitCondition (pthread_cond_broadcast in the watchdog against pthread_cond_destroy in main)
# as a race. Our own code is instrumented and still checked; the core's oneTBB hand-offs are stated to TSan
# in core/src/util/parallel.h.
base_options="halt_on_error=1:second_deadlock_stack=1:ignore_noninstrumented_modules=1${TSAN_OPTIONS:+:$TSAN_OPTIONS}"

# The suppressions' proof (see scripts/tsan.supp): a race-free oneTBB program is reported without them and
# passes with them; a real race between two std::threads is still reported with them.
proof="$build/tsan-proof"
mkdir -p "$proof"
"${CXX:-c++}" -std=c++20 -fsanitize=thread -O1 -g tests/tsan/tbb_handoff.cpp -o "$proof/tbb_handoff" -ltbb
"${CXX:-c++}" -std=c++20 -fsanitize=thread -O1 -g tests/tsan/plain_race.cpp -o "$proof/plain_race"
expect() { # expect reported|clean PROGRAM OPTIONS
  local want=$1 program=$2 options=$3 got=clean
  TSAN_OPTIONS="$options" "$program" >"$program.log" 2>&1 || got=reported
  grep -q "WARNING: ThreadSanitizer" "$program.log" && got=reported
  if [ "$got" != "$want" ]; then
    echo "tsan.sh: $(basename "$program") should be $want under TSAN_OPTIONS=$options but is $got:" >&2
    tail -40 "$program.log" >&2
    exit 1
  fi
}
expect reported "$proof/tbb_handoff" "$base_options"
expect clean "$proof/tbb_handoff" "$base_options:suppressions=$supp"
expect reported "$proof/plain_race" "$base_options:suppressions=$supp"
echo "tsan.sh: suppressions proven (oneTBB hand-offs reported without them, clean with them; a plain race still reported)"

# The allocator shim: with it preloaded, libtbb must not load the real libtbbmalloc (TBB_VERSION=1 makes
# tbbmalloc print its banner, "TBBmalloc: ...", when it is loaded).
shim="$build/tsan-shim/libtbbmalloc.so.2"
TBB_VERSION=1 TSAN_OPTIONS="$base_options:suppressions=$supp" "$proof/tbb_handoff" >"$proof/tbb_version.log" 2>&1
grep -q "^oneTBB: VERSION" "$proof/tbb_version.log" || { echo "tsan.sh: TBB_VERSION=1 printed no oneTBB banner" >&2; exit 1; }
grep -q "^TBBmalloc:" "$proof/tbb_version.log" || { echo "tsan.sh: without the shim libtbb should load libtbbmalloc" >&2; exit 1; }
TBB_VERSION=1 LD_PRELOAD="$shim" TSAN_OPTIONS="$base_options:suppressions=$supp" "$proof/tbb_handoff" >"$proof/tbb_version.log" 2>&1
if grep -q "^TBBmalloc:" "$proof/tbb_version.log"; then
  echo "tsan.sh: libtbb loaded the real libtbbmalloc although $shim was preloaded" >&2
  exit 1
fi
echo "tsan.sh: oneTBB allocates through malloc under the shim"

export TSAN_OPTIONS="$base_options:suppressions=$supp"
ctest --test-dir "$build" -j"$jobs" --output-on-failure -L core
QT_QPA_PLATFORM=offscreen ctest --test-dir "$build" --output-on-failure -R '^tst_sweep_runner$'
echo "tsan.sh: built in $((built - start)) s, tests ran in $(( $(date +%s) - built )) s"
