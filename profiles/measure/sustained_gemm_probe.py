#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Sustained GEMM rate under power and thermal limits: one 8192^3 BF16 GEMM (and an FP8 E4M3 scaled GEMM)
repeated for 40 s each, with nvidia-smi's SM clock, power and temperature per sample. measure_gpu.py times
short bursts; training holds the GPU at its power limit, where the clock (and so the GEMM rate) is lower.
Writes $OUT/sustained.json: {name: [[unix time, TFLOP/s, "sm_mhz, watts, celsius"], ...]}. Needs PyTorch 2.1+
on CUDA. Its 2026-11-27 run on an H100 80GB HBM3 is summarised in profiles/h100-measured.json
(source_details.sustained_gemm)."""
import time, torch, subprocess, json, os
out = os.environ["OUT"]
res = {}
def run(name, fn, flops, seconds=40):
    torch.cuda.synchronize()
    samples = []
    t_end = time.time() + seconds
    while time.time() < t_end:
        s = torch.cuda.Event(enable_timing=True); e = torch.cuda.Event(enable_timing=True)
        s.record()
        for _ in range(50): fn()
        e.record(); torch.cuda.synchronize()
        ms = s.elapsed_time(e) / 50
        q = subprocess.run(["nvidia-smi","--query-gpu=clocks.sm,power.draw,temperature.gpu","--format=csv,noheader,nounits"],capture_output=True,text=True).stdout.strip()
        samples.append((time.time(), flops / (ms*1e-3) / 1e12, q))
    res[name] = samples
    print(name, "first", samples[0][1:], "last", samples[-1][1:], flush=True)
n = 8192
a = torch.randn(n, n, device="cuda", dtype=torch.bfloat16); b = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
run("bf16_8192", lambda: torch.matmul(a, b), 2*n**3)
a8 = a.to(torch.float8_e4m3fn); b8 = torch.randn(n, n, device="cuda", dtype=torch.bfloat16).to(torch.float8_e4m3fn).t()
one = torch.ones((), device="cuda", dtype=torch.float32)
run("fp8_8192", lambda: torch._scaled_mm(a8, b8, scale_a=one, scale_b=one, out_dtype=torch.bfloat16), 2*n**3)
json.dump(res, open(out + "/sustained.json", "w"))
