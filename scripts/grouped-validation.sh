#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Leave-one-source-out validation of both public files (issue 28): every row predicted by the calibration
# refitted without its source, the same tables as `vtrain validate`, and the wall time of each run (the
# refits run in parallel over folds with oneTBB). The figures are pinned by tst_validation_held_out.
#   usage: scripts/grouped-validation.sh [path/to/vtrain] [VALIDATION_DIR]
#   (defaults: build/app/cli/vtrain, ../shared/validation)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
vtrain=${1:-"$root/build/app/cli/vtrain"}
dir=${2:-"$root/../shared/validation"}
[ -x "$vtrain" ] || { echo "grouped-validation.sh: $vtrain is not an executable vtrain (run scripts/build.sh)" >&2; exit 2; }
for file in modern_runs.json public_runs.json; do
  if [ ! -f "$dir/$file" ]; then
    echo "grouped-validation.sh: $dir/$file not found (the sets live outside the repository); skipped" >&2
    continue
  fi
  start=$(date +%s.%N)
  "$vtrain" validate "$dir/$file" --cv source 2>/dev/null | sed -n '1,/^all scored rows/p'
  end=$(date +%s.%N)
  awk -v f="$file" -v s="$start" -v e="$end" -v n="$(nproc)" 'BEGIN { printf "%s: held out by source in %.1f s wall on %s cores\n\n", f, e - s, n }'
done
