#!/bin/sh
# SPDX-License-Identifier: MIT
# Calibrates the shipped H100 (DGX and Meta's 96 GB part), B200 and GB200 profiles on the public modern rows (issues 13 and 16):
# for each GPU, `vtrain calibrate` fits the bounded free parameters (the BF16, FP8 and FP4 GEMM efficiencies
# per precision, attention and memory efficiencies, per-micro-batch and host overheads, NIC and NVLink
# efficiency) over all its rows with 5-fold cross-validation, starting from the datasheet prior, and
# writes the fit into profiles/datasheets/<id>.json (model_parameters, links, calibration) and the
# regenerated profiles/<id>.json. Builds nothing. Reruns are reproducible: a calibrated profile is
# refitted from the prior it recorded, and (--from-previous) from its shipped fit, the lower of the two kept,
# so a rerun never ends worse than what is shipped; cross-validation folds start from the prior alone. Budget: about 5 minutes on 2 idle cores (session 7: 85 + 30 + 160 + 26 s; docs/validation.md).
#
# usage: scripts/calibrate-modern.sh path/to/vtrain [MODERN_RUNS.json] [LOG_DIR]
#   MODERN_RUNS.json  default: ../shared/validation/modern_runs.json next to the source tree
#   LOG_DIR           where each GPU's report goes (default: a temporary folder, printed)
set -eu
if [ $# -lt 1 ]; then
    echo "usage: $0 path/to/vtrain [MODERN_RUNS.json] [LOG_DIR]" >&2
    exit 2
fi
root=$(cd "$(dirname "$0")/.." && pwd)
here="$root/profiles"
vtrain=$1
runs=${2:-"$root/../shared/validation/modern_runs.json"}
logs=${3:-$(mktemp -d)}
mkdir -p "$logs"
[ -x "$vtrain" ] || { echo "$0: $vtrain is not an executable vtrain" >&2; exit 2; }
[ -f "$runs" ] || { echo "$0: $runs not found" >&2; exit 2; }

# Every fitted term is pulled towards its documented prior (--prior-weight: the objective gains
# weight x z^2 / 2 per parameter, z its distance from the prior in units of the width cited in
# core/src/validation/calibration_parameters.cpp), so a term the rows do not identify stays where the
# datasheet and microbenchmarks put it instead of wandering to a bound (issue 28: B200's BF16 GEMM efficiency
# had ended on its 0.5 floor). The software terms (host, per-micro-batch, launch and MoE host overheads, NIC
# and NVLink efficiency inside training) are fitted; so are the GEMM, attention and HBM efficiencies,
# because these parts' datasheet values are modeled, not measured -- within their cited widths.
params=gemm_max_efficiency,gemm_max_efficiency_fp8,gemm_max_efficiency_fp4,flash_forward_efficiency,flash_backward_efficiency
params=$params,memory_efficiency,kernel_launch_overhead_us,host_overhead_us,microbatch_overhead_us,moe_host_op_us,nic_efficiency
params=$params,nvlink_bus_gbytes_per_s
prior_weight=${VTRAIN_PRIOR_WEIGHT:-0.01}
# Objective: mean absolute log error (the log counterpart of the MAPE the validation pins), every subset
# weighing the same; squared errors let a few MoE rows 100-200% off decide the fit.
objective=male
# Objective evaluations per fit (one full fit and one per held-out source): the time bound.
evals=${VTRAIN_CALIBRATE_EVALS:-900}

start_all=$(date +%s)
# h100-hbm2e-96gb: Meta's 500 W Grand Teton H100, the GPU of the torchtitan rows (33 of them), which map to it
# and to no other profile; without this fit it keeps its modeled prior.
for id in h100-sxm5-80gb b200-sxm-180gb gb200-nvl72 h100-hbm2e-96gb; do
    start=$(date +%s)
    # The 96 GB part's objective is flat along the flash efficiencies wherever the FlashAttention-2 floor of
    # its (torchtitan) rows binds; 100 evaluations stop in a worse local optimum there (objective 0.120
    # against 0.081 after 250), and its 33 dense rows are cheap to predict.
    n=$evals
    if [ "$id" = h100-hbm2e-96gb ]; then n=$((evals * 5 / 2)); fi
    "$vtrain" calibrate "$runs" --gpu "$id" --params "$params" --folds source --prior-weight "$prior_weight" --max-evals "$n" --objective "$objective" \
        --profile-dir "$here" --spec "$here/datasheets/$id.json" -o "$here/$id.json" >"$logs/$id.txt" 2>"$logs/$id.progress"
    end=$(date +%s)
    echo "$id: $((end - start)) s; report in $logs/$id.txt"
    grep -E "^  (all|bf16|fp8|nvfp4|megatron|mcore|torchtitan|warning)" "$logs/$id.txt" | sed 's/^/    /'
done
# The parts no public run covers (B300, GB300, H200) take the fits just made, with their nearest part's band
# widened by one generation step; H800, the MI300 class and V100 take the software terms (scripts/transfer-fits.py).
python3 "$root/scripts/transfer-fits.py"
for id in b300 gb300-nvl72 h200-sxm-141gb h800-sxm5-80gb mi300x mi325x mi355x v100-sxm3-32gb; do
    "$vtrain" make-profile --from-datasheet "$here/datasheets/$id.json" -o "$here/$id.json"
done
echo "total: $(($(date +%s) - start_all)) s"
