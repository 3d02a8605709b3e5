#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Carries the shipped fits of the calibrated parts to the parts no public run covers (issue 29 item 5).

B300 takes B200's fit, GB300 GB200's and H200 H100's: the same SMs (Blackwell, Blackwell Ultra at the
datasheet's rates; GH100 with HBM3e), the same hosts (x86 DGX/HGX, Grace) and the same software stacks.
The datasheet deltas (peaks, HBM, NIC, TDP) stay in each part's own figures. Each default band is the
nearest part's leave-one-source-out band, widened on both sides by how far the held-out bias moved over
the last generation step measured (H100 -> B200 or GB200): that is what a new generation has cost this
model before. H200 is the same generation as H100 and keeps H100's band. scripts/calibrate-modern.sh runs
it with its log folder at the end and rebuilds the three profiles; run by hand, follow it with
scripts/regenerate-profiles.sh.

usage: scripts/transfer-fits.py LOG_DIR   (the folder scripts/calibrate-modern.sh wrote its reports to)
"""
import json
import os
import re
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
SHEETS = os.path.join(ROOT, "profiles", "datasheets")
LINK_TERMS = ("nic_efficiency", "nvlink_bus_gbytes_per_s")
# (part, nearest calibrated part, the part one generation before the nearest, or None for the same generation)
TRANSFERS = (("b300", "b200-sxm-180gb", "h100-sxm5-80gb"), ("gb300-nvl72", "gb200-nvl72", "h100-sxm5-80gb"),
             ("h200-sxm-141gb", "h100-sxm5-80gb", None))


def held_out_bias_pct(log_dir, part):
    """The 'all' row's cross-validated bias in calibrate's report (the last column, signed percent)."""
    with open(os.path.join(log_dir, part + ".txt"), encoding="utf-8") as f:
        for line in f:
            m = re.match(r"^  all\s+\d+\s+\S+%\s+\S+%\s+\S+%\s+([+-]?[0-9.]+)%", line)
            if m:
                return float(m.group(1))
    sys.exit(f"{part}.txt in {log_dir}: no 'all' row with a cross-validated bias")


def load(part):
    with open(os.path.join(SHEETS, part + ".json"), encoding="utf-8") as f:
        return json.load(f)


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__.strip().splitlines()[-1])
    log_dir = sys.argv[1]
    for part, nearest, before in TRANSFERS:
        sheet, fit_sheet = load(part), load(nearest)
        calibration = fit_sheet["calibration"]
        fitted = calibration["parameters"]
        model = dict(sheet.get("model_parameters", {}))
        links = dict(sheet.get("links", {}))
        kept_bf16 = None
        for name, value in fitted.items():
            if name in LINK_TERMS:
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
            b_near, b_before = held_out_bias_pct(log_dir, nearest), held_out_bias_pct(log_dir, before)
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
        sheet.setdefault("sources", {})["model_parameters"] = (
            f"transferred from the {nearest} fit (profiles/datasheets/{nearest}.json, calibration: every efficiency and "
            "software term fitted with documented priors on its published runs; scripts/transfer-fits.py): the same SMs, "
            "the same host CPU and the same software stacks; the datasheet deltas are in the figures above. The GEMM and "
            "streaming curve shapes keep the modeled defaults; NIC efficiency and the NVLink bus rate are the fit's too." +
            (f" The BF16 GEMM efficiency keeps this part's {kept_bf16}: the fit's BF16 "
             f"{fitted['gemm_max_efficiency']:.3f} below its FP8 {fitted['gemm_max_efficiency_fp8']:.3f} would make an FP8 GEMM "
             "more than twice as fast as a BF16 one, which tensor cores with twice the FP8 rate cannot do." if kept_bf16 else ""))
        with open(os.path.join(SHEETS, part + ".json"), "w", encoding="utf-8") as f:
            json.dump(sheet, f, indent=2, ensure_ascii=False)
            f.write("\n")
        print(f"{part}: from {nearest}; band [{sheet['default_band']['low']}, {sheet['default_band']['high']}]")


if __name__ == "__main__":
    main()
