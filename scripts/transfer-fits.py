#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Carries the shipped fits of the calibrated parts to the parts no public run covers (issue 29 item 5).

B300 takes B200's fit, GB300 GB200's, H200 H100's: the same SMs (Blackwell, Blackwell Ultra at the
datasheet's rates; GH100 with HBM3e), the same hosts (x86 DGX/HGX, Grace) and
the same software stacks. The datasheet deltas (peaks, HBM, NIC, TDP) stay in each part's own figures; the
NVLink bus rate moves as the same fraction of the part's own per-direction NVLink rate. Each default band is
the nearest part's leave-one-source-out band, widened on both sides by how far the held-out bias moved over
the last generation step measured (H100 -> B200 or GB200): that is what a new generation has cost this model
before. H200 is the same generation as H100 and keeps H100's band.

H800 and the MI300-class parts take only the software terms of H100's fit, V100 those of A100's (the framework's
CPU time per operator and per routed-expert operator, the per-micro-batch cost, the collectives' efficiency inside
training): x86 hosts running the same frameworks; their GEMM, attention and memory efficiencies stay the modeled estimates their
datasheets cite (another vendor's kernels, another generation; H800's one public run used DeepSeek's own), so they keep the wide
uncalibrated band.

scripts/calibrate-modern.sh runs it at the end and rebuilds the profiles; run by hand, follow it with
scripts/regenerate-profiles.sh. The held-out biases come from each calibrated datasheet's calibration block.

usage: scripts/transfer-fits.py
"""
import json
import os
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
SHEETS = os.path.join(ROOT, "profiles", "datasheets")
LINK_TERMS = ("nic_efficiency", "nvlink_bus_gbytes_per_s")
# (part, nearest calibrated part, the part one generation before the nearest, or None for the same generation)
TRANSFERS = (("b300", "b200-sxm-180gb", "h100-sxm5-80gb"), ("gb300-nvl72", "gb200-nvl72", "h100-sxm5-80gb"),
             ("h200-sxm-141gb", "h100-sxm5-80gb", None))
# Parts that share only the software stack (host CPU, frameworks, collectives library) with the nearest calibrated part.
SOFTWARE_TERMS = ("host_overhead_us", "moe_host_op_us", "microbatch_overhead_us", "nic_efficiency")
AMD_WHY = ("The same frameworks (Megatron-LM with Transformer Engine, torchtitan) on x86 hosts issue the same operators per "
           "layer; RCCL's efficiency inside training is taken as NCCL's, unmeasured.")
H800_WHY = ("The same GH100 die, DGX host and NCCL as H100; its one public run (DeepSeek-V3) ran HAI-LLM with DeepGEMM's "
            "blockwise FP8, not the Megatron + Transformer Engine kernels whose efficiencies H100's fit holds, so those are "
            "not carried over.")
V100_WHY = ("The same software era as vTrain's A100 runs (Megatron-LM and DeepSpeed, PyTorch eager operators, NCCL) on "
            "DGX x86 hosts.")
SOFTWARE_TRANSFERS = (("h800-sxm5-80gb", "h100-sxm5-80gb", H800_WHY), ("mi300x", "h100-sxm5-80gb", AMD_WHY),
                      ("mi325x", "h100-sxm5-80gb", AMD_WHY), ("mi355x", "h100-sxm5-80gb", AMD_WHY),
                      ("v100-sxm3-32gb", "a100-sxm4-80gb", V100_WHY))


def held_out_bias_pct(sheet, part):
    """The calibrated part's leave-one-source-out bias over all its rows (signed percent), as calibrate recorded it."""
    try:
        return float(sheet["calibration"]["cross_validated_error"]["by_subset"]["all"]["bias_pct"])
    except (KeyError, TypeError, ValueError):
        sys.exit(f"profiles/datasheets/{part}.json: no calibration.cross_validated_error.by_subset.all.bias_pct")


def per_direction_nvlink(sheet):
    return float(sheet["scale_up"]["gbytes_per_s_bidirectional"]) / 2


def load(part):
    """A part's datasheet, or its spec where it has no datasheet (the A100 profiles)."""
    path = os.path.join(SHEETS, part + ".json")
    if not os.path.exists(path):
        path = os.path.join(ROOT, "profiles", "specs", part + ".json")
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def save(part, sheet):
    with open(os.path.join(SHEETS, part + ".json"), "w", encoding="utf-8") as f:
        json.dump(sheet, f, indent=2, ensure_ascii=False)
        f.write("\n")


def transfer_whole_fit(part, nearest, before):
    sheet, fit_sheet = load(part), load(nearest)
    calibration = fit_sheet["calibration"]
    fitted = calibration["parameters"]
    model = dict(sheet.get("model_parameters", {}))
    links = dict(sheet.get("links", {}))
    # The fitted bus rate is a fraction of the nearest part's NVLink rate; the part keeps that fraction of its own.
    nvlink_ratio = per_direction_nvlink(sheet) / per_direction_nvlink(fit_sheet)
    kept_bf16 = None
    for name, value in fitted.items():
        if name == "nvlink_bus_gbytes_per_s":
            links[name] = round(value * nvlink_ratio, 4)
        elif name in LINK_TERMS:
            links[name] = round(value, 4)
        elif name == "gemm_max_efficiency" and fitted.get("gemm_max_efficiency_fp8", 0) > value:
            # At twice the BF16 peak, an FP8 efficiency above the BF16 one makes an FP8 GEMM more than twice
            # as fast as a BF16 one, which tensor cores with twice the FP8 rate cannot do: the part keeps its
            # own BF16 figure (the fit's BF16 value rests on a handful of BF16 rows).
            kept_bf16 = model.get(name)
        else:
            model[name] = round(value, 4)
    sheet["model_parameters"], sheet["links"] = model, links
    low, high = calibration["band"]["low"], calibration["band"]["high"]
    if before is None:
        widen = 0.0
        step = "the same generation, so not widened"
    else:
        b_near, b_before = held_out_bias_pct(fit_sheet, nearest), held_out_bias_pct(load(before), before)
        widen = abs(b_near - b_before) / 100.0
        step = (f"widened on both sides by {100 * widen:.1f}%, how far the held-out bias moved from "
                f"{before} ({b_before:+.1f}%) to {nearest} ({b_near:+.1f}%), the last generation step measured")
    sheet["default_band"] = {
        "coverage": 0.8,
        "low": round(low / (1 + widen), 4),
        "high": round(high * (1 + widen), 4),
        "source": f"transferred from {nearest}: its leave-one-source-out band [{low:.3f}, {high:.3f}] x predicted, "
                  f"{step} (scripts/transfer-fits.py after scripts/calibrate-modern.sh); no public {part} run to fit",
    }
    nvlink_note = ("" if abs(nvlink_ratio - 1) < 1e-9 else
                   f" The NVLink bus rate is the fit's fraction of this part's own per-direction rate "
                   f"(x {nvlink_ratio:.3f} of {nearest}'s).")
    sheet.setdefault("sources", {})["model_parameters"] = (
        f"transferred from the {nearest} fit (profiles/datasheets/{nearest}.json, calibration: every efficiency and "
        "software term fitted with documented priors on its published runs; scripts/transfer-fits.py): the same SMs, "
        "the same host CPU and the same software stacks; the datasheet deltas are in the figures above. The GEMM and "
        "streaming curve shapes keep the modeled defaults; NIC efficiency and the NVLink bus rate are the fit's too." +
        nvlink_note +
        (f" The BF16 GEMM efficiency keeps this part's {kept_bf16}: the fit's BF16 "
         f"{fitted['gemm_max_efficiency']:.3f} below its FP8 {fitted['gemm_max_efficiency_fp8']:.3f} would make an FP8 GEMM "
         "more than twice as fast as a BF16 one, which tensor cores with twice the FP8 rate cannot do." if kept_bf16 else ""))
    save(part, sheet)
    print(f"{part}: from {nearest}; band [{sheet['default_band']['low']}, {sheet['default_band']['high']}]")


def transfer_software_terms(part, nearest, why):
    sheet, fit_sheet = load(part), load(nearest)
    fitted = fit_sheet["calibration"]["parameters"]
    model = dict(sheet.get("model_parameters", {}))
    links = dict(sheet.get("links", {}))
    for name in SOFTWARE_TERMS:
        if name not in fitted:
            continue
        if name in LINK_TERMS:
            links[name] = round(fitted[name], 4)
        else:
            model[name] = round(fitted[name], 4)
    sheet["model_parameters"] = model
    if links:
        sheet["links"] = links
    sheet.pop("default_band", None)  # hardware terms unfitted: the wide uncalibrated band stays
    sheet.setdefault("sources", {})["software_terms"] = (
        f"transferred from the {nearest} fit (its calibration block, scripts/transfer-fits.py): "
        + ", ".join(SOFTWARE_TERMS) + ". " + why + " No public run of this part's stack is fitted, so the GEMM, attention and memory efficiencies stay "
        "the estimates above and the band stays the uncalibrated default.")
    save(part, sheet)
    print(f"{part}: software terms from {nearest}; uncalibrated band")


def main():
    if len(sys.argv) != 1:
        sys.exit(__doc__.strip().splitlines()[-1])
    for part, nearest, before in TRANSFERS:
        transfer_whole_fit(part, nearest, before)
    for part, nearest, why in SOFTWARE_TRANSFERS:
        transfer_software_terms(part, nearest, why)


if __name__ == "__main__":
    main()
