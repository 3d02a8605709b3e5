#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench_explore_mpi: scaling of `vtrain explore` over MPI ranks (docs/mpi.md), one thread per rank.
# Sweep: GPT-3 175B (examples/gpt3-175b.json) on A100-80GB at every multiple of 128 GPUs from 512 to
# 4,096 with the default search -- 389,760 plans. For each rank count: the wall time of the whole run
# (median of REPEATS, launcher start-up included), plans/s over the sweep, the slowest and fastest
# rank's sweep, the merge (gather + decode + merge on rank 0), and the bytes each rank sends for the
# merge; with CSV=1, also the bytes each rank streams to rank 0. First, for reference, the sweep in one
# process without a launcher.
#   usage: bench/bench_explore_mpi.sh [VTRAIN] [RANKS...]   (default build-mpi/app/cli/vtrain, ranks 1 2)
#   env:   REPEATS (3), CSV=1 to write the CSV too, MPIRUN_FLAGS (--oversubscribe)
set -euo pipefail
cd "$(dirname "$0")/.."
vtrain="${1:-build-mpi/app/cli/vtrain}"
shift || true
ranks=("$@")
[ ${#ranks[@]} -gt 0 ] || ranks=(1 2)
repeats="${REPEATS:-3}"
export VTRAIN_PROFILE_PATH="${VTRAIN_PROFILE_PATH:-$PWD/profiles}"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

counts="$(seq -s, 512 128 4096)"
sed -e "s/\"plan\":/\"search\": {\"num_gpus\": [$counts]},\n  \"plan\":/" examples/gpt3-175b.json > "$work/sweep.json"

echo "host: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg); $(mpirun --version | head -1)"
# Reference: the same sweep in one process without a launcher, on 1 and 2 threads.
for threads in 1 2; do
  env -u OMPI_COMM_WORLD_SIZE "$vtrain" explore "$work/sweep.json" --threads "$threads" --top 10 | sed -n -e 1p | sed -e "s/^[^:]*: /no MPI, $threads thread(s): /"
done
baseline=""
for n in "${ranks[@]}"; do
  walls=()
  for _ in $(seq "$repeats"); do
    csv=()
    [ "${CSV:-0}" = 1 ] && csv=(--csv "$work/plans.csv")
    start=$(date +%s.%N)
    mpirun -n "$n" ${MPIRUN_FLAGS:---oversubscribe} "$vtrain" explore "$work/sweep.json" --threads 1 --top 10 "${csv[@]}" > "$work/out.txt"
    end=$(date +%s.%N)
    walls+=("$(echo "$end - $start" | bc -l)")
  done
  median=$(printf '%s\n' "${walls[@]}" | sort -g | sed -n "$(( (repeats + 1) / 2 ))p")
  [ -n "$baseline" ] || baseline="$median"
  summary=$(head -1 "$work/out.txt" | sed -e 's/^[^:]*: //')
  printf '\n%d rank%s: wall %.2f s median of %d (speed-up %.2fx over %d rank%s)\n  %s\n  %s\n' "$n" "$([ "$n" = 1 ] || echo s)" \
    "$median" "$repeats" "$(echo "$baseline / $median" | bc -l)" "${ranks[0]}" "$([ "${ranks[0]}" = 1 ] || echo s)" \
    "$summary" "$(grep '^Distributed' "$work/out.txt")"
  grep '^CSV:' "$work/out.txt" | sed -e 's/^/  /' || true
done
