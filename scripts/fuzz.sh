#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Fuzzes the input readers (scenario, profile, runs file, job list, launch plan; the importers of a Hugging Face
# config.json, Megatron-LM arguments, a torchtitan TOML and Megatron-Bridge overrides) and the writers of
# generated files (TOML, JSON, shell: fuzz/writers.h) with libFuzzer under ASan+UBSan: builds fuzz/ in a
# separate clang build folder, runs each target for SECONDS (default 60) with its dictionary
# (fuzz/dict/KIND.dict: field names and the string grammars inside them) on a 1 MiB stack (readers.h),
# and prints executions and crashes per target. New crashers land in BUILD/crashes/KIND/: copy each
# into fuzz/crashers/KIND/ once fixed, so tst_fuzz_replay replays it forever.
#   usage: scripts/fuzz.sh [SECONDS_PER_TARGET] [BUILD_DIR]     (env: FUZZ_CXX, JOBS, FUZZ_MAX_LEN)
# Exit status: 0 when no target crashed (or clang/libFuzzer is missing: said, and skipped), 1 otherwise.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
build=${2:-build-fuzz}
cxx=${FUZZ_CXX:-clang++}
jobs=${JOBS:-2}
max_len=${FUZZ_MAX_LEN:-16384}

if ! command -v "$cxx" >/dev/null 2>&1; then
  echo "fuzz.sh: $cxx not found: fuzzing SKIPPED (install clang to fuzz the readers)"
  exit 0
fi
probe=$(mktemp -d)
trap 'rm -rf "$probe"' EXIT
printf 'extern "C" int LLVMFuzzerTestOneInput(const unsigned char*, unsigned long) { return 0; }\n' > "$probe/p.cpp"
if ! "$cxx" -fsanitize=fuzzer,address,undefined "$probe/p.cpp" -o "$probe/p" >/dev/null 2>&1; then
  echo "fuzz.sh: $cxx cannot link libFuzzer (-fsanitize=fuzzer): fuzzing SKIPPED"
  exit 0
fi

launcher=()
command -v ccache >/dev/null 2>&1 && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache) && export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$PWD}"
cmake -S . -B "$build" -G Ninja -DCMAKE_CXX_COMPILER="$cxx" "${launcher[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DVTRAIN_BUILD_GUI=OFF -DVTRAIN_BUILD_TESTS=OFF -DVTRAIN_BUILD_BENCH=OFF -DVTRAIN_BUILD_FUZZERS=ON \
  "-DCMAKE_CXX_FLAGS=-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer" \
  "-DCMAKE_EXE_LINKER_FLAGS=-fsanitize=address,undefined" >/dev/null
kinds=(scenario profile runs jobs plan hf megatron torchtitan bridge writers)
targets=(fuzz_scenario fuzz_profile fuzz_runs fuzz_jobs fuzz_launchplan fuzz_hfconfig fuzz_megatronargs fuzz_torchtitantoml fuzz_bridgeoverrides fuzz_writers)
cmake --build "$build" -j"$jobs" --target "${targets[@]}"

seeds_of() { # the read-only seed folders of a kind (those that exist)
  local kind=$1 dir
  local dirs=("fuzz/corpus/$kind" "fuzz/crashers/$kind" fuzz/crashers/any)
  case $kind in
    scenario|plan) dirs+=(examples tests/data) ;;
    profile) dirs+=(profiles tests/data) ;;
    jobs) dirs+=(examples) ;;
    hf|megatron|torchtitan|bridge) dirs+=(examples/import) ;;
    writers) dirs=("fuzz/corpus/writers" "fuzz/crashers/writers") ;;
  esac
  for dir in "${dirs[@]}"; do
    if [ -d "$dir" ]; then echo "$dir"; fi
  done
}

status=0
total=0
printf '\n%-16s %12s %8s %s\n' target executions crashes corpus
for i in "${!kinds[@]}"; do
  kind=${kinds[$i]}
  target=${targets[$i]}
  corpus="$build/corpus/$kind"
  crashes="$build/crashes/$kind"
  mkdir -p "$corpus" "$crashes"
  # The dictionary of the kind (the launch plan's is the scenario's: a plan block is a scenario's).
  dict=fuzz/dict/$kind.dict
  [ "$kind" = plan ] && dict=fuzz/dict/scenario.dict
  dict_option=()
  [ -f "$dict" ] && dict_option=(-dict="$dict")
  # shellcheck disable=SC2046
  ASAN_OPTIONS=detect_leaks=0 "$build/fuzz/$target" -max_total_time="$seconds" -max_len="$max_len" -timeout=20 -rss_limit_mb=3072 \
    "${dict_option[@]}" -print_final_stats=1 -artifact_prefix="$crashes/" "$corpus" $(seeds_of "$kind") > "$build/$kind.log" 2>&1 || true
  execs=$( (grep -o 'stat::number_of_executed_units: *[0-9]*' "$build/$kind.log" || true) | grep -o '[0-9]*$' | tail -1 || true)
  execs=${execs:-0}
  found=$(find "$crashes" -type f | wc -l)
  total=$((total + execs))
  printf '%-16s %12s %8s %s\n' "$target" "$execs" "$found" "$(find "$corpus" -type f | wc -l) inputs"
  if [ "$found" -gt 0 ]; then
    status=1
    echo "  crashers in $crashes (log: $build/$kind.log):"
    find "$crashes" -type f | head -5 | sed 's/^/    /'
  fi
done
echo "total executions: $total ($seconds s per target)"
exit $status
