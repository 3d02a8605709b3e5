#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Measure a vTrain Explorer GPU profile on this machine.

The simulator predicts a training step by looking up every operator it schedules in a GPU profile
(docs/profile-format.md) and interpolating between grid points. This tool times exactly those
operators with PyTorch on the local GPU and writes a profile the C++ loader accepts:

* GEMMs ``torch.matmul([M,K] x [K,N])`` in bf16/fp16 (and fp32/tf32 if asked) over an (M, N, K) grid;
* causal ``scaled_dot_product_attention`` forward and backward over (batch*heads, seq, head_dim);
* the memory-bound operators (layernorm, gelu, swiglu, softmax, dropout, residual_add, cross_entropy,
  embedding) forward and backward by input bytes;
* a fused Adam step with fp32 master weights by parameter count;
* intra-node all-reduce / all-gather / reduce-scatter / send-recv over NCCL when several GPUs are visible;
* the host gap between kernel launches and the device-to-device copy bandwidth.

Timing: warm-up calls, then repetitions of back-to-back calls between CUDA events; the median per call
is kept. Shapes whose operands would not fit in a fraction of free memory are not run: their latency is
scaled from the nearest measured point, linearly in flops (or bytes), and listed in
``source_details.extrapolated`` so the grid stays rectangular.

Partial results are checkpointed to ``<out>.partial.json`` after every table row; a rerun skips the
points already measured. ``--dry-run`` runs the same code paths on the CPU with tiny grids so the tool
can be tested without a GPU; its output says ``"source": "modeled"`` and is not a measurement.
"""
from __future__ import annotations

import argparse
import datetime
import gc
import itertools
import json
import math
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

TOOL_NAME = "measure_gpu.py"
TOOL_VERSION = "1.0.0"
SCHEMA_VERSION = 1
CHECKPOINT_FORMAT = 1
EXIT_ERROR = 1
EXIT_STOPPED = 3
GIB = 1024 ** 3
REPO_ROOT = Path(__file__).resolve().parents[2]

DRY_RUN_METHOD = "dry-run of measure_gpu.py on CPU (not a GPU measurement; for tests only)"
MEASURED_METHOD = ("measured with profiles/measure/measure_gpu.py: PyTorch operators timed with CUDA events, "
                   "median over repetitions after warm-up")

MEMORY_BOUND_KINDS = ("layernorm", "gelu", "swiglu", "softmax", "dropout", "residual_add",
                      "cross_entropy", "embedding")
SIXTEEN_BIT = ("bf16", "fp16")
GEMM_DTYPES = ("bf16", "fp16", "fp32", "tf32", "fp8")
ELEMENT_BYTES = {"bf16": 2, "fp16": 2, "fp32": 4, "tf32": 4, "fp8": 1}
COLLECTIVE_OPS = ("all_reduce", "all_gather", "reduce_scatter")
# torch.distributed calls tried for each operation, preferred first (gloo lacks the *_tensor forms).
COLLECTIVE_VARIANTS = {
    "all_reduce": ("all_reduce",),
    "all_gather": ("all_gather_into_tensor", "all_gather"),
    "reduce_scatter": ("reduce_scatter_tensor", "reduce_scatter"),
    "send_recv": ("send_recv",),
}

# Dense datasheet peaks in TFLOP/s. The first pattern that matches the lower-cased device name wins, so
# specific variants come before the general name; None means "not in the table: measure the rate".
KNOWN_GPUS: Tuple[Tuple[str, Optional[Dict[str, float]]], ...] = (
    (r"\ba100\b", {"bf16": 312.0, "fp16": 312.0, "tf32": 156.0, "fp32": 19.5}),
    (r"\bh100\b.*\bnvl\b", None),
    (r"\bh100\b.*\bpcie\b", {"bf16": 756.0, "fp16": 756.0, "tf32": 378.0, "fp32": 51.2, "fp8": 1513.0}),
    (r"\bh100\b", {"bf16": 989.4, "fp16": 989.4, "tf32": 494.7, "fp32": 66.9, "fp8": 1978.9}),
    (r"\bh200\b.*\bnvl\b", None),
    (r"\bh200\b", {"bf16": 989.4, "fp16": 989.4, "tf32": 494.7, "fp32": 66.9, "fp8": 1978.9}),
)

# Used when no modeled profile of this GPU exists: a PCIe-class node with modest NICs, so a simulation
# built on it errs towards slow communication rather than fast.
CONSERVATIVE_LINKS = {
    "gpus_per_node": 8,
    "nvlink_bus_gbytes_per_s": 100.0,
    "nvlink_base_latency_us": 40.0,
    "nvlink_step_latency_us": 5.0,
    "nics_per_node": 4,
    "nic_gbit_per_s": 100.0,
    "nic_efficiency": 0.8,
    "inter_node_base_latency_us": 20.0,
    "inter_node_latency_us": 8.0,
}
LINK_KEYS = tuple(CONSERVATIVE_LINKS)
LINK_DEFAULTS = {"nic_efficiency": 0.9, "inter_node_base_latency_us": 0.0}  # optional in the loader


class MeasureError(Exception):
    """A failure the user can act on; reported as one line, without a traceback."""


class StopRequested(Exception):
    """Raised after --stop-after-rows rows were measured (used to test resuming)."""


# ----------------------------------------------------------------------------------------------------
# Grids and timing settings


def powers_of_two(lo: int, hi: int, step: int = 2) -> Tuple[int, ...]:
    """lo, lo*step, ... up to hi (lo and hi powers of two)."""
    values, v = [], lo
    while v <= hi:
        values.append(v)
        v *= step
    return tuple(values)


def powers_and_halves(lo: int, hi: int) -> Tuple[int, ...]:
    """Powers of two and the 1.5x points between them, from lo to hi."""
    values = set(powers_of_two(lo, hi))
    values.update(3 * v // 2 for v in powers_of_two(lo, hi // 2))
    return tuple(sorted(values))


@dataclass(frozen=True)
class Grids:
    gemm_m: Tuple[int, ...]
    gemm_n: Tuple[int, ...]
    gemm_k: Tuple[int, ...]
    attn_batch_heads: Tuple[int, ...]
    attn_seq: Tuple[int, ...]
    attn_head_dim: Tuple[int, ...]
    mb_bytes: Tuple[int, ...]
    adam_params: Tuple[int, ...]
    coll_bytes: Tuple[int, ...]
    hidden: int            # last dimension of layernorm / embedding rows
    swiglu_width: int      # a and b side by side
    softmax_seq: int       # longest sequence of the [batch, seq, seq] scores
    vocab: int             # cross-entropy classes and embedding rows
    adam_chunk: int        # largest parameter tensor handed to the optimizer


GEMM_NK_DEFAULT = (128, 256, 512, 768, 1024, 1536, 2048, 3072, 4096, 6144, 8192, 12288, 16384)

GRIDS = {
    "default": Grids(
        gemm_m=powers_and_halves(64, 262144), gemm_n=GEMM_NK_DEFAULT, gemm_k=GEMM_NK_DEFAULT,
        attn_batch_heads=powers_of_two(1, 512), attn_seq=powers_of_two(128, 32768), attn_head_dim=(64, 96, 128, 256),
        mb_bytes=powers_of_two(2 ** 12, 2 ** 31), adam_params=powers_of_two(2 ** 16, 2 ** 30),
        coll_bytes=powers_of_two(2 ** 10, 2 ** 30),
        hidden=4096, swiglu_width=16384, softmax_seq=2048, vocab=32768, adam_chunk=2 ** 24),
    "quick": Grids(
        gemm_m=powers_of_two(64, 262144), gemm_n=powers_of_two(256, 16384), gemm_k=powers_of_two(256, 16384),
        attn_batch_heads=powers_of_two(1, 256, 4), attn_seq=powers_of_two(256, 16384), attn_head_dim=(64, 128),
        mb_bytes=powers_of_two(2 ** 12, 2 ** 30, 4), adam_params=powers_of_two(2 ** 16, 2 ** 30, 4),
        coll_bytes=powers_of_two(2 ** 10, 2 ** 30, 4),
        hidden=4096, swiglu_width=16384, softmax_seq=2048, vocab=32768, adam_chunk=2 ** 24),
    "dry-run": Grids(
        gemm_m=(8, 16, 24, 32, 64, 512), gemm_n=(8, 16, 32), gemm_k=(8, 16, 32),
        attn_batch_heads=(1, 2, 4), attn_seq=(16, 32, 64), attn_head_dim=(8, 16),
        mb_bytes=powers_of_two(2 ** 10, 2 ** 14), adam_params=powers_of_two(2 ** 8, 2 ** 12),
        coll_bytes=powers_of_two(2 ** 10, 2 ** 18, 16),
        hidden=64, swiglu_width=128, softmax_seq=16, vocab=64, adam_chunk=1024),
}

# Dry-run memory budget: small enough that the largest point of every table is extrapolated.
DRY_RUN_MEMORY_BUDGET = 48 * 1024


@dataclass(frozen=True)
class TimingConfig:
    warmup: int          # untimed calls after the first one
    repeats: int         # timed repetitions (median kept)
    long_repeats: int    # repetitions for calls longer than long_s
    long_s: float
    target_rep_s: float  # back-to-back calls per repetition are chosen to last about this long
    max_inner: int


GPU_TIMING = TimingConfig(warmup=2, repeats=5, long_repeats=3, long_s=0.02, target_rep_s=1e-3, max_inner=100)
CPU_TIMING = TimingConfig(warmup=1, repeats=3, long_repeats=2, long_s=0.01, target_rep_s=2e-4, max_inner=10)
COLLECTIVE_TIMING = {"warmup": 5, "inner": 5, "repeats": 5}


# ----------------------------------------------------------------------------------------------------
# Command line


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog=TOOL_NAME, description="Measure a vTrain Explorer GPU profile (docs/profile-format.md) with PyTorch.")
    parser.add_argument("--out", required=True, type=Path, metavar="PATH", help="profile JSON to write")
    parser.add_argument("--quick", action="store_true", help="smaller, coarser grids (a minute or two)")
    parser.add_argument("--dtype", default="bf16,fp16", metavar="LIST",
                        help="GEMM data types, comma-separated, from bf16,fp16,fp32,tf32,fp8 (E4M3 scaled GEMM, PyTorch 2.1+); the first 16-bit one "
                             "is also used for attention and memory-bound operators (default: bf16,fp16)")
    parser.add_argument("--resume", action=argparse.BooleanOptionalAction, default=True,
                        help="reuse points from <out>.partial.json (default: on)")
    parser.add_argument("--dry-run", action="store_true",
                        help="run on the CPU with tiny grids to exercise the tool; writes source 'modeled'")
    parser.add_argument("--id", help="profile id (default: the stem of --out)")
    parser.add_argument("--name", help="profile name (default: the device name)")
    parser.add_argument("--price-usd-per-gpu-hour", type=float, metavar="USD",
                        help="price per GPU hour (default: the base profile's, else 0)")
    parser.add_argument("--base-profile", type=Path, metavar="PATH",
                        help="profile whose links (and price) to keep when they cannot be measured "
                             "(default: profiles/<id>.json of this GPU if present, else built-in figures)")
    parser.add_argument("--skip-collectives", action="store_true", help="do not measure collectives")
    parser.add_argument("--mem-fraction", type=float, default=0.4, metavar="F",
                        help="largest share of free memory one shape's operands may take (default 0.4)")
    parser.add_argument("--mem-limit-bytes", type=float, metavar="BYTES",
                        help="absolute operand budget in bytes (overrides --mem-fraction)")
    parser.add_argument("--stop-after-rows", type=int, help=argparse.SUPPRESS)  # testing: interrupt on purpose
    args = parser.parse_args(argv)
    args.dtypes = parse_dtypes(parser, args.dtype)
    if not 0 < args.mem_fraction <= 1:
        parser.error("--mem-fraction must be in (0, 1]")
    if args.price_usd_per_gpu_hour is not None and not (math.isfinite(args.price_usd_per_gpu_hour)
                                                        and args.price_usd_per_gpu_hour >= 0):
        parser.error("--price-usd-per-gpu-hour must be a finite number >= 0")
    return args


def parse_dtypes(parser: argparse.ArgumentParser, text: str) -> List[str]:
    dtypes = [d.strip().lower() for d in text.split(",") if d.strip()]
    unknown = [d for d in dtypes if d not in GEMM_DTYPES]
    if unknown or not dtypes:
        parser.error(f"--dtype: unknown data type(s) {', '.join(unknown) or '(none)'}; "
                     f"choose from {','.join(GEMM_DTYPES)}")
    if len(set(dtypes)) != len(dtypes):
        parser.error("--dtype: a data type is listed twice")
    if not any(d in SIXTEEN_BIT for d in dtypes):
        parser.error("--dtype: include bf16 or fp16 (attention and memory-bound operators run in it)")
    return dtypes


# ----------------------------------------------------------------------------------------------------
# Device and timing


class Runtime:
    """The torch module, the device operators run on, and how to time them there."""

    def __init__(self, torch: Any, device: Any):
        self.torch = torch
        self.device = device
        self.is_cuda = device.type == "cuda"

    def sync(self) -> None:
        if self.is_cuda:
            self.torch.cuda.synchronize(self.device)

    def time_blocks(self, fn: Callable[[], Any], inner: int, reps: int) -> List[float]:
        """Seconds per call for each of `reps` blocks of `inner` back-to-back calls."""
        if not self.is_cuda:
            times = []
            for _ in range(reps):
                start = time.perf_counter()
                for _ in range(inner):
                    fn()
                times.append((time.perf_counter() - start) / inner)
            return times
        event = self.torch.cuda.Event
        pairs = []
        for _ in range(reps):
            start, end = event(enable_timing=True), event(enable_timing=True)
            start.record()
            for _ in range(inner):
                fn()
            end.record()
            pairs.append((start, end))
        self.sync()
        return [start.elapsed_time(end) / 1e3 / inner for start, end in pairs]

    def free_bytes(self) -> int:
        if self.is_cuda:
            return self.torch.cuda.mem_get_info(self.device)[0]
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")

    def release(self) -> None:
        gc.collect()
        if self.is_cuda:
            self.torch.cuda.empty_cache()


def time_op(rt: Runtime, fn: Callable[[], Any], cfg: TimingConfig) -> float:
    """Median seconds per call of fn after warm-up."""
    fn()  # first call: allocations, library heuristics, lazy initialisation
    rt.sync()
    probe = rt.time_blocks(fn, 1, 1)[0]
    is_long = probe >= cfg.long_s
    inner = max(1, min(cfg.max_inner, math.ceil(cfg.target_rep_s / max(probe, 1e-9))))
    for _ in range(0 if is_long else cfg.warmup):
        fn()
    seconds = statistics.median(rt.time_blocks(fn, inner, cfg.long_repeats if is_long else cfg.repeats))
    if not (math.isfinite(seconds) and seconds > 0):
        raise MeasureError(f"timing returned {seconds!r} seconds; the timer is not usable on this device")
    return seconds


def is_out_of_memory(torch: Any, error: BaseException) -> bool:
    oom_type = getattr(torch.cuda, "OutOfMemoryError", None)
    message = str(error).lower()
    return (oom_type is not None and isinstance(error, oom_type)) or "out of memory" in message \
        or "alloc_failed" in message


# ----------------------------------------------------------------------------------------------------
# Checkpoint


class Checkpoint:
    """Measured points by table, saved to <out>.partial.json; reloaded when the fingerprint matches."""

    def __init__(self, path: Path, fingerprint: Dict[str, Any]):
        self.path = path
        self.fingerprint = fingerprint
        self.tables: Dict[str, Dict[str, Any]] = {}
        self.resumed = 0

    @staticmethod
    def key(point: Sequence[int]) -> str:
        return "x".join(str(int(v)) for v in point)

    def load(self) -> None:
        if not self.path.exists():
            return
        try:
            data = json.loads(self.path.read_text())
        except (OSError, ValueError) as error:
            warn(f"ignoring unreadable checkpoint {self.path}: {error}")
            return
        if data.get("checkpoint_format") != CHECKPOINT_FORMAT or data.get("fingerprint") != self.fingerprint:
            warn(f"ignoring checkpoint {self.path}: it was made on another device or setup; it will be overwritten")
            return
        self.tables = data.get("tables", {})
        count = sum(len(v) for k, v in self.tables.items() if not k.startswith("blob:"))
        progress(f"resuming: {count} measured points found in {self.path}")

    def get(self, table: str, point: Sequence[int]) -> Optional[List[float]]:
        values = self.tables.get(table, {}).get(self.key(point))
        if values is not None:
            self.resumed += 1
        return values

    def put(self, table: str, point: Sequence[int], values: List[float]) -> None:
        self.tables.setdefault(table, {})[self.key(point)] = values

    def get_blob(self, name: str, key: Any) -> Optional[Any]:
        blob = self.tables.get("blob:" + name)
        return blob["value"] if blob and blob.get("key") == key else None

    def put_blob(self, name: str, key: Any, value: Any) -> None:
        self.tables["blob:" + name] = {"key": key, "value": value}

    def save(self) -> None:
        data = {"checkpoint_format": CHECKPOINT_FORMAT, "tool": TOOL_NAME, "tool_version": TOOL_VERSION,
                "fingerprint": self.fingerprint, "tables": self.tables}
        write_atomically(self.path, json.dumps(data))

    def remove(self) -> None:
        if self.path.exists():
            self.path.unlink()


def write_atomically(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


# ----------------------------------------------------------------------------------------------------
# Progress


def progress(message: str) -> None:
    print(f"[measure] {message}", file=sys.stderr, flush=True)


def warn(message: str) -> None:
    print(f"[measure] warning: {message}", file=sys.stderr, flush=True)


def format_duration(seconds: float) -> str:
    seconds = int(round(seconds))
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"


class TableProgress:
    """A line per table row: counts, elapsed time and an ETA weighted by each point's work."""

    def __init__(self, name: str, points: List[tuple], work: Callable[[tuple], float]):
        self.name = name
        self.total = len(points)
        typical = statistics.median(work(p) for p in points)  # small points cost about this much in overhead
        self.cost = {p: work(p) + typical for p in points}
        self.remaining = sum(self.cost.values())
        self.measured_cost = 0.0
        self.done = self.resumed = self.skipped = 0
        self.start = time.monotonic()

    def point(self, p: tuple, how: str) -> None:
        """Account for one point: how is "measured", "resumed" or "skipped"."""
        self.done += 1
        self.remaining -= self.cost[p]
        self.resumed += how == "resumed"
        self.skipped += how == "skipped"
        if how == "measured":
            self.measured_cost += self.cost[p]

    def row(self, index: int, rows: int, label: str) -> None:
        elapsed = time.monotonic() - self.start
        eta = elapsed / self.measured_cost * self.remaining if self.measured_cost > 0 else 0.0
        progress(f"[{self.name}] row {index}/{rows} {label}: {self.done}/{self.total} points "
                 f"({self.resumed} resumed, {self.skipped} skipped for memory), "
                 f"{format_duration(elapsed)} elapsed, ETA {format_duration(eta)}")


# ----------------------------------------------------------------------------------------------------
# Measuring a table over a grid


@dataclass
class TableSpec:
    name: str                                   # checkpoint key and progress label, e.g. "gemm.bf16"
    axes: List[Tuple[str, Tuple[int, ...]]]     # axis name and grid, in the profile's index order
    work: Callable[[tuple], float]              # flops or bytes: extrapolation scales with it
    footprint: Callable[[tuple], float]         # bytes of operands the point allocates
    measure: Callable[[tuple], List[float]]     # seconds, one per output
    outputs: Tuple[str, ...] = ("seconds",)


@dataclass
class Context:
    torch: Any
    rt: Runtime
    args: argparse.Namespace
    grids: Grids
    timing: TimingConfig
    ckpt: Checkpoint
    memory_budget: float
    train_dtype: str
    compute_dtypes: Dict[str, Any] = field(default_factory=dict)
    notes: Dict[str, Any] = field(default_factory=dict)
    extrapolated: Dict[str, Any] = field(default_factory=dict)
    table_counts: Dict[str, Any] = field(default_factory=dict)
    rows_measured: int = 0

    def row_finished(self, measured_now: int) -> None:
        if measured_now == 0:
            return
        self.ckpt.save()
        self.rows_measured += 1
        if self.args.stop_after_rows is not None and self.rows_measured >= self.args.stop_after_rows:
            raise StopRequested()


def table_rows(spec: TableSpec) -> List[List[tuple]]:
    """Points grouped by the first axis (one row for a one-axis table)."""
    points = list(itertools.product(*(grid for _, grid in spec.axes)))
    if len(spec.axes) == 1:
        return [points]
    return [[p for p in points if p[0] == first] for first in spec.axes[0][1]]


def measure_point(ctx: Context, spec: TableSpec, point: tuple) -> Optional[List[float]]:
    """Seconds for one point, or None when it does not fit in memory (after one retry)."""
    for _ in range(2):
        try:
            return spec.measure(point)
        except RuntimeError as error:
            if not is_out_of_memory(ctx.torch, error):
                raise
        ctx.rt.release()
    return None


def measure_table(ctx: Context, spec: TableSpec) -> Dict[str, List[float]]:
    """Measure every grid point not already checkpointed; return the full grid per output."""
    rows = table_rows(spec)
    all_points = [p for row in rows for p in row]
    tracker = TableProgress(spec.name, all_points, spec.work)
    values: Dict[tuple, List[float]] = {}
    skipped: Dict[tuple, str] = {}
    for index, row in enumerate(rows, 1):
        measured_now = 0
        for point in row:
            cached = ctx.ckpt.get(spec.name, point)
            if cached is not None:
                values[point] = cached
                tracker.point(point, "resumed")
                continue
            if spec.footprint(point) > ctx.memory_budget:
                result, reason = None, "operands over the memory budget"
            else:
                result, reason = measure_point(ctx, spec, point), "out of memory"
            if result is None:
                skipped[point] = reason
                tracker.point(point, "skipped")
                continue
            values[point] = result
            ctx.ckpt.put(spec.name, point, result)
            measured_now += 1
            tracker.point(point, "measured")
        ctx.rt.release()
        label = f"{spec.axes[0][0]}={row[0][0]}" if len(spec.axes) > 1 else f"{len(row)} sizes"
        tracker.row(index, len(rows), label)
        ctx.row_finished(measured_now)
    ctx.table_counts[spec.name] = {"points": len(all_points), "measured": len(values),
                                   "resumed": tracker.resumed, "extrapolated": len(skipped)}
    return fill_grid(ctx, spec, all_points, values, skipped)


def nearest_measured(point: tuple, measured: List[tuple]) -> tuple:
    """The measured point closest in log-size space (ties: the larger one, closer in regime)."""
    def distance(q: tuple) -> Tuple[float, float]:
        return (sum((math.log(a) - math.log(b)) ** 2 for a, b in zip(point, q)), -sum(math.log(b) for b in q))
    return min(measured, key=distance)


def fill_grid(ctx: Context, spec: TableSpec, points: List[tuple], values: Dict[tuple, List[float]],
              skipped: Dict[tuple, str]) -> Dict[str, List[float]]:
    """Flat per-output lists in grid order; skipped points scaled from the nearest measured one."""
    if not values:
        raise MeasureError(f"{spec.name}: no grid point could be measured (memory budget "
                           f"{ctx.memory_budget / GIB:.2f} GiB); lower the grid or raise --mem-fraction")
    measured = list(values)
    records = []
    for point in points:
        if point in values:
            continue
        source = nearest_measured(point, measured)
        scale = spec.work(point) / spec.work(source)
        values[point] = [v * scale for v in values[source]]
        records.append({"point": list(point), "from": list(source), "reason": skipped[point]})
    if records:
        ctx.extrapolated[spec.name] = {"axes": [name for name, _ in spec.axes], "points": records}
    return {out: [values[p][i] for p in points] for i, out in enumerate(spec.outputs)}


# ----------------------------------------------------------------------------------------------------
# Data types


TORCH_DTYPES = {"bf16": "bfloat16", "fp16": "float16", "fp32": "float32", "tf32": "float32", "fp8": "float8_e4m3fn"}


def resolve_dtypes(ctx: Context, names: Sequence[str]) -> None:
    """torch dtypes per name; in a dry-run, a type the CPU cannot compute in is replaced by float32."""
    torch = ctx.torch
    substitutions = {}
    for name in names:
        dtype = getattr(torch, TORCH_DTYPES[name], None)
        if dtype is None:  # float8 types arrived in PyTorch 2.1
            if ctx.rt.is_cuda:
                raise MeasureError(f"--dtype {name}: this PyTorch ({torch.__version__}) has no torch.{TORCH_DTYPES[name]}")
            substitutions[name] = f"computed in float32 on the CPU (this PyTorch has no torch.{TORCH_DTYPES[name]})"
            ctx.compute_dtypes[name] = torch.float32
            continue
        if not ctx.rt.is_cuda:
            problem = cpu_dtype_problem(torch, dtype)
            if problem:
                substitutions[name] = f"computed in float32 on the CPU ({problem})"
                dtype = torch.float32
        ctx.compute_dtypes[name] = dtype
    if substitutions:
        ctx.notes["dry_run_substitutions"] = {**ctx.notes.get("dry_run_substitutions", {}), **substitutions}


def cpu_dtype_problem(torch: Any, dtype: Any) -> Optional[str]:
    """Why the CPU cannot run the operators this tool uses in dtype, or None."""
    functional = torch.nn.functional
    x = torch.ones(4, 4, dtype=dtype)
    try:
        torch.matmul(x, x)
        functional.layer_norm(x, (4,))
        functional.gelu(x, approximate="tanh")
        functional.silu(x)
        x.softmax(-1)
        functional.dropout(x, 0.1, training=True)
    except RuntimeError as error:
        return str(error).splitlines()[0]
    return None


def randn(ctx: Context, shape: Sequence[int], dtype: Any, grad: bool = False) -> Any:
    return ctx.torch.randn(*shape, device=ctx.rt.device, dtype=dtype).requires_grad_(grad)


def backward_of(ctx: Context, output: Any, inputs: Sequence[Any]) -> Callable[[], Any]:
    """A call that runs only the backward of `output` with respect to `inputs` (graph kept)."""
    torch = ctx.torch
    grad = torch.randn_like(output)
    return lambda: torch.autograd.grad(output, inputs, grad, retain_graph=True)


# ----------------------------------------------------------------------------------------------------
# GEMM


def gemm_spec(ctx: Context, name: str) -> TableSpec:
    torch, dtype, size = ctx.torch, ctx.compute_dtypes[name], ELEMENT_BYTES[name]

    def measure(point: tuple) -> List[float]:
        m, n, k = point
        if name == "fp8" and ctx.rt.is_cuda:
            # Transformer Engine's FP8 GEMM is cuBLASLt's scaled matmul: E4M3 operands (the second one
            # column-major), per-tensor scales, a BF16 output; torch._scaled_mm calls the same kernel.
            a = randn(ctx, (m, k), torch.bfloat16).to(dtype)
            b = randn(ctx, (n, k), torch.bfloat16).to(dtype).t()
            one = torch.ones((), device=ctx.rt.device, dtype=torch.float32)
            return [time_op(ctx.rt, lambda: torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16), ctx.timing)]
        a, b = randn(ctx, (m, k), dtype), randn(ctx, (k, n), dtype)
        if ctx.rt.is_cuda:
            torch.backends.cuda.matmul.allow_tf32 = name == "tf32"
        return [time_op(ctx.rt, lambda: torch.matmul(a, b), ctx.timing)]

    grids = ctx.grids
    return TableSpec(
        name=f"gemm.{name}", axes=[("m", grids.gemm_m), ("n", grids.gemm_n), ("k", grids.gemm_k)],
        work=lambda p: 2.0 * p[0] * p[1] * p[2],
        footprint=lambda p: (p[0] * p[2] + p[2] * p[1] + p[0] * p[1]) * size,
        measure=measure)


def measure_gemm(ctx: Context, name: str) -> Dict[str, Any]:
    spec = gemm_spec(ctx, name)
    table = measure_table(ctx, spec)
    grids = dict(spec.axes)
    return {"m": list(grids["m"]), "n": list(grids["n"]), "k": list(grids["k"]), "seconds": table["seconds"]}


def best_gemm_tflops(table: Dict[str, Any]) -> float:
    rates = [2.0 * m * n * k / s / 1e12
             for (m, n, k), s in zip(itertools.product(table["m"], table["n"], table["k"]), table["seconds"])]
    return max(rates)


# ----------------------------------------------------------------------------------------------------
# Flash attention


def reference_causal_attention(torch: Any) -> Callable[..., Any]:
    """Causal attention written out (dry-run stand-in where scaled_dot_product_attention is missing)."""
    def attend(q: Any, k: Any, v: Any) -> Any:
        seq = q.shape[-2]
        scores = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(q.shape[-1])
        mask = torch.ones(seq, seq, dtype=torch.bool, device=q.device).triu(1)
        return torch.matmul(scores.masked_fill(mask, float("-inf")).softmax(-1), v)
    return attend


def attention_function(ctx: Context) -> Callable[..., Any]:
    functional = ctx.torch.nn.functional
    sdpa = getattr(functional, "scaled_dot_product_attention", None)
    if sdpa is not None:
        return lambda q, k, v: sdpa(q, k, v, is_causal=True)
    if ctx.rt.is_cuda:
        raise MeasureError(f"torch {ctx.torch.__version__} has no scaled_dot_product_attention; "
                           "PyTorch 2.0 or newer is needed to measure flash attention")
    ctx.notes.setdefault("dry_run_substitutions", {})["flash_attention"] = (
        f"torch {ctx.torch.__version__} has no scaled_dot_product_attention: explicit causal attention used")
    return reference_causal_attention(ctx.torch)


def attention_spec(ctx: Context) -> TableSpec:
    dtype, size = ctx.compute_dtypes[ctx.train_dtype], ELEMENT_BYTES[ctx.train_dtype]
    attend = attention_function(ctx)

    def measure(point: tuple) -> List[float]:
        batch_heads, seq, head_dim = point
        q, k, v = (randn(ctx, (1, batch_heads, seq, head_dim), dtype, grad=True) for _ in range(3))
        forward = time_op(ctx.rt, lambda: attend(q, k, v), ctx.timing)
        backward = time_op(ctx.rt, backward_of(ctx, attend(q, k, v), (q, k, v)), ctx.timing)
        return [forward, backward]

    grids = ctx.grids
    return TableSpec(
        name=f"flash_attention.{ctx.train_dtype}",
        axes=[("batch_heads", grids.attn_batch_heads), ("seq", grids.attn_seq), ("head_dim", grids.attn_head_dim)],
        work=lambda p: 2.0 * p[0] * p[1] * p[1] * p[2],  # causal: half of the 4*s*s*d of two full GEMMs
        footprint=lambda p: 8.0 * p[0] * p[1] * p[2] * size,  # q, k, v, out and their gradients
        measure=measure, outputs=("forward_seconds", "backward_seconds"))


def measure_attention(ctx: Context) -> Dict[str, Any]:
    spec = attention_spec(ctx)
    table = measure_table(ctx, spec)
    grids = dict(spec.axes)
    return {"batch_heads": list(grids["batch_heads"]), "seq": list(grids["seq"]),
            "head_dim": list(grids["head_dim"]), **table}


# ----------------------------------------------------------------------------------------------------
# Memory-bound operators: each case builds its tensors for `numel` input elements and returns
# (forward call, backward call).


OpCase = Tuple[Callable[[], Any], Callable[[], Any]]


def split_rows(numel: int, width: int) -> Tuple[int, int]:
    width = max(1, min(width, numel))
    return max(1, numel // width), width


def layernorm_case(ctx: Context, numel: int, dtype: Any) -> OpCase:
    rows, width = split_rows(numel, ctx.grids.hidden)
    x = randn(ctx, (rows, width), dtype, grad=True)
    weight, bias = randn(ctx, (width,), dtype, grad=True), randn(ctx, (width,), dtype, grad=True)
    functional = ctx.torch.nn.functional

    def forward() -> Any:
        return functional.layer_norm(x, (width,), weight, bias)
    return forward, backward_of(ctx, forward(), (x, weight, bias))


def gelu_case(ctx: Context, numel: int, dtype: Any) -> OpCase:
    x = randn(ctx, (numel,), dtype, grad=True)
    functional = ctx.torch.nn.functional

    def forward() -> Any:
        return functional.gelu(x, approximate="tanh")
    return forward, backward_of(ctx, forward(), (x,))


def swiglu_case(ctx: Context, numel: int, dtype: Any) -> OpCase:
    rows, width = split_rows(numel, ctx.grids.swiglu_width)
    x = randn(ctx, (rows, width), dtype, grad=True)
    functional = ctx.torch.nn.functional

    def forward() -> Any:
        a, b = x.chunk(2, dim=-1)
        return functional.silu(a) * b
    return forward, backward_of(ctx, forward(), (x,))


def softmax_case(ctx: Context, numel: int, dtype: Any) -> OpCase:
    seq = min(ctx.grids.softmax_seq, 2 ** (int(math.log2(numel)) // 2))
    x = randn(ctx, (max(1, numel // (seq * seq)), seq, seq), dtype, grad=True)
    mask = ctx.torch.ones(seq, seq, dtype=ctx.torch.bool, device=ctx.rt.device).triu(1)

    def forward() -> Any:
        return x.masked_fill(mask, float("-inf")).softmax(-1)
    return forward, backward_of(ctx, forward(), (x,))


def dropout_case(ctx: Context, numel: int, dtype: Any) -> OpCase:
    x = randn(ctx, (numel,), dtype, grad=True)
    functional = ctx.torch.nn.functional

    def forward() -> Any:
        return functional.dropout(x, 0.1, training=True)
    return forward, backward_of(ctx, forward(), (x,))


def residual_add_case(ctx: Context, numel: int, dtype: Any) -> OpCase:
    x, y, grad = (randn(ctx, (numel,), dtype) for _ in range(3))
    return (lambda: x + y), grad.clone


def cross_entropy_case(ctx: Context, numel: int, dtype: Any) -> OpCase:
    torch = ctx.torch
    rows, vocab = split_rows(numel, ctx.grids.vocab)
    logits = randn(ctx, (rows, vocab), torch.float32, grad=True)
    targets = torch.randint(vocab, (rows,), device=ctx.rt.device)

    def forward() -> Any:
        return torch.nn.functional.cross_entropy(logits, targets)
    return forward, backward_of(ctx, forward(), (logits,))


def embedding_case(ctx: Context, numel: int, dtype: Any) -> OpCase:
    torch = ctx.torch
    tokens, hidden = split_rows(numel, ctx.grids.hidden)
    table = randn(ctx, (ctx.grids.vocab, hidden), dtype, grad=True)
    indices = torch.randint(ctx.grids.vocab, (tokens,), device=ctx.rt.device)

    def forward() -> Any:
        return torch.nn.functional.embedding(indices, table)
    return forward, backward_of(ctx, forward(), (table,))


MEMORY_BOUND_CASES: Dict[str, Callable[[Context, int, Any], OpCase]] = {
    "layernorm": layernorm_case, "gelu": gelu_case, "swiglu": swiglu_case, "softmax": softmax_case,
    "dropout": dropout_case, "residual_add": residual_add_case, "cross_entropy": cross_entropy_case,
    "embedding": embedding_case,
}

# How the input bytes are laid out and roughly how much memory a case allocates, per byte of input.
MEMORY_BOUND_NOTES = {
    "layernorm": "x [rows, min(hidden, n)]; backward: grads of x, weight, bias",
    "gelu": "x [n], tanh approximation",
    "swiglu": "x [rows, min(swiglu_width, n)] holding a and b side by side; silu(a) * b",
    "softmax": "scores [batch, s, s], s = min(softmax_seq, 2^floor(log2(n)/2)); causal masked_fill + softmax",
    "dropout": "x [n], p = 0.1",
    "residual_add": "x + y, x of the given bytes; backward: a copy of the gradient",
    "cross_entropy": "fp32 logits [rows, min(vocab, n)] (bytes counted in fp32)",
    "embedding": "output [tokens, min(hidden, n)] from a [vocab, hidden] table; backward includes "
                 "zero-filling the table gradient",
}


def memory_bound_spec(ctx: Context, kind: str) -> TableSpec:
    dtype = ctx.compute_dtypes[ctx.train_dtype]
    element = 4 if kind == "cross_entropy" else ELEMENT_BYTES[ctx.train_dtype]
    build = MEMORY_BOUND_CASES[kind]

    def measure(point: tuple) -> List[float]:
        forward, backward = build(ctx, point[0] // element, dtype)
        return [time_op(ctx.rt, forward, ctx.timing), time_op(ctx.rt, backward, ctx.timing)]

    def footprint(point: tuple) -> float:
        extra = 0.0
        if kind == "embedding":  # the table and its gradient
            extra = 2.0 * ctx.grids.vocab * min(ctx.grids.hidden, point[0] // element) * element
        return 5.0 * point[0] + extra

    return TableSpec(name=f"memory_bound.{kind}.{ctx.train_dtype}", axes=[("bytes", ctx.grids.mb_bytes)],
                     work=lambda p: float(p[0]), footprint=footprint, measure=measure,
                     outputs=("forward_seconds", "backward_seconds"))


def measure_memory_bound(ctx: Context) -> Dict[str, Any]:
    tables = {}
    for kind in MEMORY_BOUND_KINDS:
        table = measure_table(ctx, memory_bound_spec(ctx, kind))
        tables[kind] = {"bytes": list(ctx.grids.mb_bytes), **table}
    return tables


# ----------------------------------------------------------------------------------------------------
# Adam


def fp32_parameters(ctx: Context, total: int) -> List[Any]:
    """`total` fp32 parameters with gradients, in tensors of at most adam_chunk elements."""
    torch, chunk = ctx.torch, ctx.grids.adam_chunk
    params = [torch.zeros(min(chunk, total - start), device=ctx.rt.device, dtype=torch.float32,
                          requires_grad=True) for start in range(0, total, chunk)]
    for param in params:
        param.grad = torch.randn_like(param)
    return params


def adam_options(ctx: Context) -> Tuple[str, Dict[str, bool]]:
    """The fastest Adam this torch offers on the device: fused, else foreach, else the plain loop."""
    adam = ctx.torch.optim.Adam
    for kind, options in (("fused", {"fused": True}), ("foreach", {"foreach": True}), ("for-loop", {})):
        try:
            adam(fp32_parameters(ctx, 16), lr=1e-4, **options).step()  # support is checked at the first step
            return kind, options
        except (TypeError, RuntimeError, ValueError):
            continue
    raise MeasureError("torch.optim.Adam cannot step on this device")


def adam_spec(ctx: Context) -> TableSpec:
    kind, options = adam_options(ctx)
    ctx.notes["adam"] = (f"torch.optim.Adam ({kind}), fp32 weights, gradients and moments in tensors of at most "
                         f"{ctx.grids.adam_chunk} elements")

    def measure(point: tuple) -> List[float]:
        optimizer = ctx.torch.optim.Adam(fp32_parameters(ctx, point[0]), lr=1e-4, **options)
        return [time_op(ctx.rt, optimizer.step, ctx.timing)]

    return TableSpec(name="adam", axes=[("params", ctx.grids.adam_params)], work=lambda p: float(p[0]),
                     footprint=lambda p: 16.0 * p[0], measure=measure)  # weights, grads, two moments


def measure_adam(ctx: Context) -> Dict[str, Any]:
    table = measure_table(ctx, adam_spec(ctx))
    return {"params": list(ctx.grids.adam_params), "seconds": table["seconds"]}


# ----------------------------------------------------------------------------------------------------
# Device figures


def warm_up_device(ctx: Context) -> None:
    """A second of large GEMMs so clocks and the allocator settle before anything is timed."""
    if not ctx.rt.is_cuda:
        return
    torch = ctx.torch
    a = torch.randn(4096, 4096, device=ctx.rt.device, dtype=ctx.compute_dtypes[ctx.train_dtype])
    deadline = time.monotonic() + 1.0
    while time.monotonic() < deadline:
        for _ in range(20):
            torch.matmul(a, a)
        ctx.rt.sync()


def measure_launch_overhead_us(ctx: Context) -> float:
    """Per-kernel time of back-to-back tiny kernels: the host gap between consecutive launches."""
    x = ctx.torch.zeros(1, device=ctx.rt.device)
    cfg = TimingConfig(warmup=50, repeats=5, long_repeats=5, long_s=1.0, target_rep_s=5e-3, max_inner=2000)
    return time_op(ctx.rt, lambda: x.add_(1.0), cfg) * 1e6


def measure_copy_bandwidth_gbytes(ctx: Context) -> Tuple[float, int]:
    """Device-to-device copy bandwidth in GB/s (bytes read plus bytes written) and the copy size."""
    torch = ctx.torch
    size = 4 * 2 ** 20 if not ctx.rt.is_cuda else int(min(GIB, ctx.memory_budget / 2))
    source = torch.ones(size, dtype=torch.uint8, device=ctx.rt.device)
    target = torch.empty_like(source)
    seconds = time_op(ctx.rt, lambda: target.copy_(source), ctx.timing)
    return 2.0 * size / seconds / 1e9, size


# ----------------------------------------------------------------------------------------------------
# Collectives (one process per GPU, NCCL; in a dry-run two CPU processes over gloo)


def collective_group_sizes(world: int) -> List[int]:
    sizes = list(powers_of_two(2, world))
    return sizes if world in sizes else sizes + [world]


def collective_call(dist: Any, torch: Any, variant: str, group: Any, group_size: int, nbytes: int, dtype: Any,
                    device: Any, rank: int) -> Tuple[Callable[[], Any], int]:
    """The call for one collective and the bytes it moves (all-gather: output; reduce-scatter: input)."""
    element = torch.tensor([], dtype=dtype).element_size()
    count = max(group_size, nbytes // element // group_size * group_size)
    full, piece = torch.zeros(count, dtype=dtype, device=device), torch.zeros(count // group_size, dtype=dtype,
                                                                              device=device)
    calls = {
        "all_reduce": lambda: dist.all_reduce(full, group=group),
        "all_gather_into_tensor": lambda: dist.all_gather_into_tensor(full, piece, group=group),
        "all_gather": lambda: dist.all_gather(list(full.chunk(group_size)), piece, group=group),
        "reduce_scatter_tensor": lambda: dist.reduce_scatter_tensor(piece, full, group=group),
        "reduce_scatter": lambda: dist.reduce_scatter(piece, list(full.chunk(group_size)), group=group),
        "send_recv": (lambda: dist.send(full, 1)) if rank == 0 else (lambda: dist.recv(full, 0)),
    }
    return calls[variant], count * element


def time_collective(rt: Runtime, dist: Any, fn: Callable[[], Any], group: Any) -> float:
    """Median seconds per call, the same number of calls on every rank; the slowest rank's time."""
    cfg = COLLECTIVE_TIMING
    for _ in range(cfg["warmup"]):
        fn()
    rt.sync()
    dist.barrier(group=group)
    seconds = statistics.median(rt.time_blocks(fn, cfg["inner"], cfg["repeats"]))
    slowest = rt.torch.tensor([seconds], dtype=rt.torch.float64,
                              device=rt.device if rt.is_cuda else "cpu")
    dist.all_reduce(slowest, op=dist.ReduceOp.MAX, group=group)
    return float(slowest.item())


def first_supported_variant(rt: Runtime, dist: Any, op: str, group: Any, group_size: int, dtype: Any,
                            rank: int) -> Tuple[Optional[str], str]:
    """The first call for op that this backend runs, and why the others were refused."""
    reasons = []
    for variant in COLLECTIVE_VARIANTS[op]:
        try:
            fn, _ = collective_call(dist, rt.torch, variant, group, group_size, 1024, dtype, rt.device, rank)
            fn()
            return variant, ""
        except (RuntimeError, AttributeError) as error:  # raised alike on every rank: the backend refuses it
            if not (isinstance(error, AttributeError) or "support" in str(error).lower()):
                raise
            reasons.append(f"{variant}: {str(error).splitlines()[0]}")
    return None, "; ".join(reasons)


def run_collective_series(rt: Runtime, dist: Any, op: str, group: Any, group_size: int, sizes: Sequence[int],
                          dtype: Any, rank: int) -> Tuple[Optional[Dict[str, Any]], str]:
    """Seconds by bytes for one collective and group, or None and the reason the backend refuses it."""
    variant, reason = first_supported_variant(rt, dist, op, group, group_size, dtype, rank)
    if variant is None:
        return None, reason
    table: Dict[str, Any] = {"call": variant, "bytes": [], "seconds": []}
    for nbytes in sizes:
        fn, moved = collective_call(dist, rt.torch, variant, group, group_size, nbytes, dtype, rt.device, rank)
        if table["bytes"] and moved <= table["bytes"][-1]:
            continue
        table["bytes"].append(moved)
        table["seconds"].append(time_collective(rt, dist, fn, group))
    return table, ""


def collectives_worker(rank: int, world: int, backend: str, init_file: str, sizes: List[int], dtype_name: str,
                       result_file: str) -> None:
    """One rank of the collective measurement (started by torch.multiprocessing.spawn)."""
    import torch
    import torch.distributed as dist

    device = torch.device("cuda", rank) if backend == "nccl" else torch.device("cpu")
    if backend == "nccl":
        torch.cuda.set_device(device)
    dist.init_process_group(backend, init_method="file://" + init_file, rank=rank, world_size=world,
                            timeout=datetime.timedelta(minutes=10))
    try:
        result = run_collectives(Runtime(torch, device), dist, rank, world, sizes, getattr(torch, dtype_name))
        if rank == 0:
            Path(result_file).write_text(json.dumps(result))
    finally:
        dist.destroy_process_group()


def run_collectives(rt: Runtime, dist: Any, rank: int, world: int, sizes: List[int], dtype: Any) -> Dict[str, Any]:
    ops: Dict[str, Dict[str, Any]] = {op: {} for op in COLLECTIVE_OPS + ("send_recv",)}
    unsupported: Dict[str, str] = {}
    for group_size in collective_group_sizes(world):
        group = dist.new_group(list(range(group_size)))  # every rank creates every group, in order
        if rank >= group_size:
            continue
        for op in COLLECTIVE_OPS:
            if op in unsupported:
                continue
            table, reason = run_collective_series(rt, dist, op, group, group_size, sizes, dtype, rank)
            if table is None:
                unsupported[op] = reason
            else:
                ops[op][str(group_size)] = table
    pair = dist.new_group([0, 1])
    if rank < 2:
        table, reason = run_collective_series(rt, dist, "send_recv", pair, 2, sizes, dtype, rank)
        if table is None:
            unsupported["send_recv"] = reason
        else:
            ops["send_recv"]["2"] = table
    dist.barrier()
    return {"ops": ops, "unsupported": unsupported}


def collectives_setup(ctx: Context) -> Tuple[int, Optional[str], str]:
    """(processes, backend or None, note)."""
    torch = ctx.torch
    if ctx.args.skip_collectives:
        return 0, None, "collectives not measured (--skip-collectives)"
    if not torch.distributed.is_available():
        return 0, None, "collectives not measured: this torch has no torch.distributed"
    if not ctx.rt.is_cuda:
        if not torch.distributed.is_gloo_available():
            return 0, None, "dry-run: collectives not exercised (no gloo backend)"
        return 2, "gloo", "dry-run: collectives exercised with two CPU processes over gloo (not NCCL figures)"
    count = torch.cuda.device_count()
    if count < 2:
        return count, None, "only one GPU visible: collectives not measured"
    if not torch.distributed.is_nccl_available():
        raise MeasureError("several GPUs are visible but this torch has no NCCL; pass --skip-collectives")
    return count, "nccl", f"collectives measured over NCCL inside one node ({count} GPUs)"


def measure_collectives(ctx: Context) -> Optional[Dict[str, Any]]:
    world, backend, note = collectives_setup(ctx)
    ctx.notes["collectives_note"] = note
    if backend is None:
        progress(note)
        return None
    dtype_name = "float32" if backend == "gloo" else TORCH_DTYPES[ctx.train_dtype]
    key = {"backend": backend, "world": world, "bytes": list(ctx.grids.coll_bytes), "dtype": dtype_name}
    result = ctx.ckpt.get_blob("collectives", key)
    if result is not None:
        progress(f"[collectives] resumed from the checkpoint ({world} processes, {backend})")
        return result
    progress(f"[collectives] {world} processes over {backend}, {len(ctx.grids.coll_bytes)} sizes per collective")
    started = time.monotonic()
    try:
        result = spawn_collectives(ctx, world, backend, dtype_name)
    except Exception as error:  # a failed child surfaces here as one of several exception types
        if backend == "gloo":
            warn(f"dry-run collectives failed ({str(error).strip().splitlines()[-1]}); continuing without them")
            ctx.notes["collectives_note"] = "dry-run: collectives could not be exercised on this machine"
            return None
        raise MeasureError(f"collective measurement failed: {str(error).strip().splitlines()[-1]} "
                           "(pass --skip-collectives to measure without it)") from error
    result["dtype"] = dtype_name
    ctx.ckpt.put_blob("collectives", key, result)
    progress(f"[collectives] done in {format_duration(time.monotonic() - started)}")
    ctx.row_finished(1)
    return result


def spawn_collectives(ctx: Context, world: int, backend: str, dtype_name: str) -> Dict[str, Any]:
    import torch.multiprocessing as multiprocessing

    ctx.rt.release()
    with tempfile.TemporaryDirectory(prefix="vtrain-measure-") as tmp:
        init_file, result_file = os.path.join(tmp, "init"), os.path.join(tmp, "result.json")
        multiprocessing.spawn(collectives_worker, nprocs=world, join=True,
                              args=(world, backend, init_file, list(ctx.grids.coll_bytes), dtype_name, result_file))
        return json.loads(Path(result_file).read_text())


def collective_tables(result: Dict[str, Any], op: str) -> List[Dict[str, Any]]:
    return [{"gpus": int(g), "bytes": t["bytes"], "seconds": t["seconds"]}
            for g, t in sorted(result["ops"].get(op, {}).items(), key=lambda item: int(item[0])) if t]


# ----------------------------------------------------------------------------------------------------
# Links, base profile, identity


def slug(text: str) -> str:
    text = re.sub(r"^nvidia\s+", "", text.strip(), flags=re.IGNORECASE)
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "gpu"


def gpu_traits(text: str) -> Tuple[Optional[str], bool]:
    """(family such as "h100", PCIe card?) read from a device name or a profile id."""
    lowered = text.lower().replace("-", " ")
    family = re.search(r"\b[a-z]{1,2}\d{2,3}[a-z]?\b", lowered)
    return (family.group(0) if family else None), "pcie" in lowered


def profile_matches(device_name: str, path: Path, data: Dict[str, Any], exact: bool) -> bool:
    """Exact: same name, id or file stem. Loose: same GPU family and form factor (links do not depend
    on the memory size)."""
    names = (str(data.get("name", "")), str(data.get("id", "")), path.stem)
    if exact:
        return device_name.lower() == names[0].lower() or slug(device_name) in names[1:]
    family, pcie = gpu_traits(device_name)
    return family is not None and any(gpu_traits(name) == (family, pcie) for name in names)


def find_base_profile(args: argparse.Namespace, device_name: str, on_gpu: bool) -> Optional[Path]:
    """--base-profile; on a GPU, else the profiles/*.json of this GPU (exact match first, then loose)."""
    if args.base_profile is not None:
        if not args.base_profile.is_file():
            raise MeasureError(f"--base-profile {args.base_profile}: no such file")
        return args.base_profile
    if not on_gpu:
        return None  # a dry-run keeps the built-in links unless told otherwise
    candidates = []
    for path in sorted((REPO_ROOT / "profiles").glob("*.json")):
        try:
            candidates.append((path, json.loads(path.read_text())))
        except (OSError, ValueError):
            continue
    for exact in (True, False):
        for path, data in candidates:
            if isinstance(data, dict) and profile_matches(device_name, path, data, exact):
                return path
    return None


def load_base_profile(path: Optional[Path]) -> Optional[Dict[str, Any]]:
    if path is None:
        return None
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError) as error:
        raise MeasureError(f"base profile {path}: {error}") from error
    links = {**LINK_DEFAULTS, **data.get("links", {})} if isinstance(data.get("links"), dict) else {}
    missing = [k for k in LINK_KEYS if not isinstance(links.get(k), (int, float))]
    if missing:
        raise MeasureError(f"base profile {path}: 'links' lacks {', '.join(missing)}")
    return {**data, "links": links}


def display_path(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(REPO_ROOT))
    except ValueError:
        return str(path)


def fit_links(links: Dict[str, Any], all_reduce: List[Dict[str, Any]]) -> Tuple[Dict[str, Any], Dict[str, Any]]:
    """NVLink bus bandwidth and base latency from the largest measured all-reduce group."""
    table = max(all_reduce, key=lambda t: t["gpus"])
    gpus = table["gpus"]
    ring = 2.0 * (gpus - 1) / gpus
    bus = max(ring * b / s for b, s in zip(table["bytes"], table["seconds"])) / 1e9
    smallest_us = table["seconds"][0] * 1e6
    steps = 2 * (gpus - 1)
    base_us = max(1.0, smallest_us - steps * float(links["nvlink_step_latency_us"]))
    fitted = {**links, "gpus_per_node": gpus, "nvlink_bus_gbytes_per_s": round(bus, 1),
              "nvlink_base_latency_us": round(base_us, 2)}
    how = {"gpus": gpus, "bus_gbytes_per_s": "max over sizes of 2(n-1)/n * bytes / seconds",
           "base_latency_us": "smallest all-reduce time minus 2(n-1) ring steps at nvlink_step_latency_us"}
    return fitted, how


def resolve_links(ctx: Context, base: Optional[Dict[str, Any]], base_path: Optional[Path],
                  all_reduce: List[Dict[str, Any]]) -> Dict[str, Any]:
    origin = f"base profile {display_path(base_path)}" if base_path else "built-in conservative figures"
    links = {k: base["links"][k] for k in LINK_KEYS} if base else dict(CONSERVATIVE_LINKS)
    if ctx.rt.is_cuda and all_reduce:
        links, how = fit_links(links, all_reduce)
        ctx.notes["links_note"] = (f"nvlink_bus_gbytes_per_s, nvlink_base_latency_us and gpus_per_node fitted from "
                                   f"the measured all-reduce; the other figures from {origin}")
        ctx.notes["links_fit"] = how
    elif ctx.rt.is_cuda and ctx.torch.cuda.device_count() < 2:
        progress(f"only one GPU is visible: link figures are kept from {origin}")
        ctx.notes["links_note"] = f"only one GPU visible: links kept from {origin}"
    elif ctx.rt.is_cuda:
        ctx.notes["links_note"] = f"collectives not measured: links kept from {origin}"
    else:
        ctx.notes["links_note"] = f"dry-run: links kept from {origin}"
    return links


def query_nvidia_smi(device_name: str) -> Optional[Dict[str, Any]]:
    """Driver and clocks from nvidia-smi for the GPU named device_name, or None without nvidia-smi."""
    exe = shutil.which("nvidia-smi")
    if exe is None:
        return None
    fields = ("name", "driver_version", "clocks.max.sm", "clocks.max.memory", "clocks.applications.graphics",
              "clocks.applications.memory", "power.limit")
    try:
        output = subprocess.run([exe, "--query-gpu=" + ",".join(fields), "--format=csv,noheader,nounits"],
                                capture_output=True, text=True, timeout=30, check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    rows = [[cell.strip() for cell in line.split(",")] for line in output.splitlines() if line.strip()]
    rows = [r for r in rows if len(r) == len(fields)]
    if not rows:
        return None
    row = next((r for r in rows if r[0] == device_name), rows[0])
    return {name: parse_smi_value(value) for name, value in zip(fields, row)}


def parse_smi_value(value: str) -> Any:
    if not value or "N/A" in value or "Not Supported" in value:
        return None
    try:
        return float(value)
    except ValueError:
        return value


def driver_from_proc() -> Optional[str]:
    try:
        text = Path("/proc/driver/nvidia/version").read_text()
    except OSError:
        return None
    match = re.search(r"Kernel Module\s+(?:for\s+\S+\s+)?(\d[\w.]*)", text)
    return match.group(1) if match else None


def gpu_identity(ctx: Context) -> Dict[str, Any]:
    torch = ctx.torch
    props = torch.cuda.get_device_properties(ctx.rt.device)
    smi = query_nvidia_smi(props.name)
    clocks = None
    if smi:
        clocks = {"sm_max_mhz": smi["clocks.max.sm"], "memory_max_mhz": smi["clocks.max.memory"],
                  "sm_application_mhz": smi["clocks.applications.graphics"],
                  "memory_application_mhz": smi["clocks.applications.memory"], "power_limit_w": smi["power.limit"]}
    return {
        "name": props.name, "sm_count": props.multi_processor_count, "memory_bytes": props.total_memory,
        "compute_capability": f"{props.major}.{props.minor}", "visible_gpus": torch.cuda.device_count(),
        "driver": (smi or {}).get("driver_version") or driver_from_proc(), "clocks": clocks,
        "cuda": torch.version.cuda, "hip": getattr(torch.version, "hip", None),
        "cudnn": torch.backends.cudnn.version() if torch.backends.cudnn.is_available() else None,
    }


def cpu_identity(ctx: Context) -> Dict[str, Any]:
    memory = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    processor = platform.processor() or platform.machine() or "unknown CPU"
    return {"name": f"CPU dry run ({processor})", "sm_count": os.cpu_count() or 1, "memory_bytes": memory,
            "compute_capability": None, "visible_gpus": 0, "driver": None, "clocks": None, "cuda": None,
            "hip": None, "cudnn": None}


def datasheet_peaks(name: str) -> Optional[Dict[str, float]]:
    lowered = name.lower()
    for pattern, peaks in KNOWN_GPUS:
        if re.search(pattern, lowered):
            return peaks
    return None


def peak_tflops(ctx: Context, device_name: str, gemm: Dict[str, Dict[str, Any]]) -> Dict[str, float]:
    peaks = datasheet_peaks(device_name) if ctx.rt.is_cuda else None
    if peaks:
        ctx.notes["peak_tflops_source"] = "datasheet (dense) figures from the tool's table of known GPUs"
        return dict(peaks)
    ctx.notes["peak_tflops_source"] = ("not in the tool's table of known GPUs: the best achieved GEMM rate "
                                       "measured per data type")
    peaks = {name: significant(best_gemm_tflops(table)) for name, table in gemm.items()}
    if not ctx.rt.is_cuda:  # a slow CPU may fall below the loader's floor of 0.001 TFLOP/s
        peaks = {name: max(value, 1e-3) for name, value in peaks.items()}
    return peaks


# ----------------------------------------------------------------------------------------------------
# Assembling, checking and writing the profile


def significant(value: float, digits: int = 4) -> float:
    return float(f"{value:.{digits}g}")


def round_tables(obj: Any) -> Any:
    """Latencies to 4 significant digits (finer than the run-to-run noise) to keep the file small."""
    if isinstance(obj, dict):
        return {k: round_tables(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [round_tables(v) for v in obj]
    if isinstance(obj, float):
        return significant(obj)
    return obj


def check_grid(errors: List[str], where: str, grid: Any) -> int:
    if not isinstance(grid, list) or not grid:
        errors.append(f"{where}: must be a non-empty list")
        return 0
    if any(not isinstance(v, (int, float)) or not v > 0 for v in grid) or any(
            b <= a for a, b in zip(grid, grid[1:])):
        errors.append(f"{where}: must be positive and strictly increasing")
    return len(grid)


def check_latencies(errors: List[str], where: str, values: Any, expected: int) -> None:
    if not isinstance(values, list) or len(values) != expected:
        errors.append(f"{where}: expected {expected} values, found {len(values) if isinstance(values, list) else 0}")
    elif any(not isinstance(v, (int, float)) or not math.isfinite(v) or v <= 0 for v in values):
        errors.append(f"{where}: every latency must be positive and finite")


def check_table(errors: List[str], where: str, table: Dict[str, Any], axes: Sequence[str],
                outputs: Sequence[str]) -> None:
    size = math.prod(check_grid(errors, f"{where}.{axis}", table.get(axis)) for axis in axes)
    for output in outputs:
        check_latencies(errors, f"{where}.{output}", table.get(output), size)


def validate_profile(profile: Dict[str, Any]) -> List[str]:
    """The loader's rules (docs/profile-format.md), so a bad file is caught before it is written."""
    errors: List[str] = []
    for name, table in profile["gemm"].items():
        check_table(errors, f"gemm.{name}", table, ("m", "n", "k"), ("seconds",))
    check_table(errors, "flash_attention", profile["flash_attention"], ("batch_heads", "seq", "head_dim"),
                ("forward_seconds", "backward_seconds"))
    for kind in MEMORY_BOUND_KINDS:
        check_table(errors, f"memory_bound.{kind}", profile["memory_bound"].get(kind, {}), ("bytes",),
                    ("forward_seconds", "backward_seconds"))
    check_table(errors, "adam", profile["adam"], ("params",), ("seconds",))
    for i, table in enumerate(profile.get("all_reduce", [])):
        check_table(errors, f"all_reduce[{i}]", table, ("bytes",), ("seconds",))
    for op, tables in profile.get("collectives_extra", {}).items():
        for i, table in enumerate(tables):
            check_table(errors, f"collectives_extra.{op}[{i}]", table, ("bytes",), ("seconds",))
    for key, (low, high) in SCALAR_RANGES.items():
        check_range(errors, key, profile[key], low, high)
    for key, (low, high) in LINK_RANGES.items():
        check_range(errors, f"links.{key}", profile["links"].get(key), low, high)
    for name, value in profile["peak_tflops"].items():
        check_range(errors, f"peak_tflops.{name}", value, 1e-3, 1e6)
    if profile["memory_reserve_gib"] >= profile["memory_gib"]:
        errors.append("memory_reserve_gib: must be smaller than memory_gib")
    return errors


# The loader's accepted ranges (core/src/io/profile_json.cpp).
SCALAR_RANGES = {"memory_gib": (1, 1e4), "memory_reserve_gib": (0, 1e3), "memory_bandwidth_gbytes_per_s": (1, 1e6),
                 "sm_count": (1, 1e5), "kernel_launch_overhead_us": (0, 1e4), "price_usd_per_gpu_hour": (0, 1e4)}
LINK_RANGES = {"gpus_per_node": (1, 1024), "nvlink_bus_gbytes_per_s": (1, 1e5), "nvlink_base_latency_us": (0, 1e4),
               "nvlink_step_latency_us": (0, 1e4), "nics_per_node": (1, 64), "nic_gbit_per_s": (1, 1e5),
               "nic_efficiency": (0.01, 1), "inter_node_base_latency_us": (0, 1e4),
               "inter_node_latency_us": (0, 1e4)}


def check_range(errors: List[str], where: str, value: Any, low: float, high: float) -> None:
    if not (isinstance(value, (int, float)) and math.isfinite(value) and low <= value <= high):
        errors.append(f"{where}: {value!r} is outside [{low:g}, {high:g}]")


def guess_vendor(device_name: str) -> str:
    """The vendor the GUI groups a GPU under; the base profile's wins when there is one."""
    lowered = device_name.lower()
    if "nvidia" in lowered:
        return "NVIDIA"
    if "amd" in lowered or "instinct" in lowered:
        return "AMD"
    return ""


def build_profile(ctx: Context, identity: Dict[str, Any], figures: Dict[str, Any],
                  tables: Dict[str, Any], base: Optional[Dict[str, Any]], base_path: Optional[Path],
                  collectives: Optional[Dict[str, Any]]) -> Dict[str, Any]:
    args = ctx.args
    all_reduce = collective_tables(collectives, "all_reduce") if collectives else []
    links = resolve_links(ctx, base, base_path, all_reduce)
    price, price_source = resolve_price(args, base, base_path)
    profile: Dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "id": args.id or args.out.stem,
        "name": args.name or identity["name"],
        "vendor": (base or {}).get("vendor") or guess_vendor(identity["name"]),
        "source": "measured" if ctx.rt.is_cuda else "modeled",
        "source_details": None,  # filled below, once every note is known
        "memory_gib": round(identity["memory_bytes"] / GIB, 2),
        "memory_reserve_gib": figures["memory_reserve_gib"],
        "memory_bandwidth_gbytes_per_s": round(figures["copy_gbytes_per_s"], 1),
        "peak_tflops": peak_tflops(ctx, identity["name"], tables["gemm"]),
        "sm_count": identity["sm_count"],
        "kernel_launch_overhead_us": round(figures["launch_overhead_us"], 2),
        "price_usd_per_gpu_hour": price,
        "price_source": price_source,
        "links": links,
        "gemm": tables["gemm"],
        "flash_attention": tables["flash_attention"],
        "memory_bound": tables["memory_bound"],
        "adam": tables["adam"],
    }
    if all_reduce:
        profile["all_reduce"] = all_reduce
        profile["collectives_extra"] = {op: collective_tables(collectives, op)
                                        for op in ("all_gather", "reduce_scatter", "send_recv")
                                        if collective_tables(collectives, op)}
    profile["source_details"] = source_details(ctx, identity, figures, collectives)
    return round_tables(profile)


def resolve_price(args: argparse.Namespace, base: Optional[Dict[str, Any]],
                  base_path: Optional[Path]) -> Tuple[float, str]:
    if args.price_usd_per_gpu_hour is not None:
        return args.price_usd_per_gpu_hour, "given on the command line (--price-usd-per-gpu-hour)"
    if base and isinstance(base.get("price_usd_per_gpu_hour"), (int, float)):
        return base["price_usd_per_gpu_hour"], (f"from {display_path(base_path)}: "
                                                f"{base.get('price_source', 'no source given')}")
    return 0.0, "not given (pass --price-usd-per-gpu-hour)"


def source_details(ctx: Context, identity: Dict[str, Any], figures: Dict[str, Any],
                   collectives: Optional[Dict[str, Any]]) -> Dict[str, Any]:
    torch = ctx.torch
    details: Dict[str, Any] = {
        "method": MEASURED_METHOD if ctx.rt.is_cuda else DRY_RUN_METHOD,
        "tool": TOOL_NAME, "tool_version": TOOL_VERSION,
        "date": datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0).isoformat(),
        "gpu": identity["name"] if ctx.rt.is_cuda else None,
        "device": str(ctx.rt.device),
        **{k: identity[k] for k in ("sm_count", "memory_bytes", "compute_capability", "visible_gpus",
                                     "clocks", "driver", "cuda", "hip", "cudnn")},
        "torch": torch.__version__, "python": platform.python_version(),
        "grids": grid_name(ctx.args),
        "dtypes": {"gemm": list(ctx.args.dtypes), "attention_and_memory_bound": ctx.train_dtype,
                   "collectives": (collectives or {}).get("dtype")},
        "timing": {**asdict(ctx.timing), "timer": "CUDA events" if ctx.rt.is_cuda else "time.perf_counter",
                   "statistic": "median seconds per call"},
        "memory_budget_bytes": int(ctx.memory_budget),
        "figures": figures["how"],
        "memory_bound_shapes": MEMORY_BOUND_NOTES,
        "tables": ctx.table_counts,
        "resumed_points": ctx.ckpt.resumed,
        "extrapolated": {"rule": "seconds of the nearest measured point (log-size distance) times the ratio "
                                 "of flops (GEMM, attention), bytes or parameters", **ctx.extrapolated},
    }
    if collectives:
        details["collectives"] = {
            "bytes_meaning": {"all_reduce": "buffer", "all_gather": "gathered output", "reduce_scatter":
                              "full input", "send_recv": "message from rank 0 to rank 1"},
            "calls": {op: sorted({t["call"] for t in tables.values()}) for op, tables in collectives["ops"].items()
                      if tables},
            "unsupported": collectives.get("unsupported", {}), "timing": COLLECTIVE_TIMING}
    details.update(ctx.notes)
    return details


def grid_name(args: argparse.Namespace) -> str:
    return "dry-run" if args.dry_run else "quick" if args.quick else "default"


def dumps_profile(obj: Any, indent: int = 0) -> str:
    """JSON with one line per list of numbers, so tables stay readable and small."""
    pad = "  " * indent
    flat = json.dumps(obj)
    if isinstance(obj, dict):
        if len(flat) <= 100:
            return flat
        items = [f"{pad}  {json.dumps(k)}: {dumps_profile(v, indent + 1)}" for k, v in obj.items()]
        return "{\n" + ",\n".join(items) + "\n" + pad + "}"
    if isinstance(obj, list):
        if not obj or all(not isinstance(v, (dict, list)) for v in obj) or len(flat) <= 100:
            return flat
        return "[\n" + ",\n".join(f"{pad}  {dumps_profile(v, indent + 1)}" for v in obj) + "\n" + pad + "]"
    return json.dumps(obj)


# ----------------------------------------------------------------------------------------------------
# Main flow


def import_torch() -> Any:
    try:
        import torch
    except ImportError as error:
        raise MeasureError(f"PyTorch is not importable with {sys.executable} ({error}); install it "
                           "(pip install torch, or apt-get install python3-torch for --dry-run) or run "
                           "this tool with a python that has it") from error
    return torch


def make_context(torch: Any, args: argparse.Namespace) -> Tuple[Context, Dict[str, Any]]:
    if args.dry_run:
        rt = Runtime(torch, torch.device("cpu"))
    elif not torch.cuda.is_available():
        raise MeasureError("no CUDA GPU is visible to PyTorch; use --dry-run to exercise the tool on the CPU")
    else:
        rt = Runtime(torch, torch.device("cuda", 0))
    ctx = Context(torch=torch, rt=rt, args=args, grids=GRIDS[grid_name(args)],
                  timing=GPU_TIMING if rt.is_cuda else CPU_TIMING,
                  ckpt=Checkpoint(Path(str(args.out) + ".partial.json"), {}), memory_budget=0.0,
                  train_dtype=next(d for d in args.dtypes if d in SIXTEEN_BIT))
    identity = gpu_identity(ctx) if rt.is_cuda else cpu_identity(ctx)
    ctx.ckpt.fingerprint = {"device": identity["name"], "dry_run": bool(args.dry_run), "torch": torch.__version__,
                            "tool_version": TOOL_VERSION.split(".")[0]}
    resolve_dtypes(ctx, list(dict.fromkeys(args.dtypes + [ctx.train_dtype])))
    return ctx, identity


def set_memory_budget(ctx: Context, identity: Dict[str, Any]) -> Dict[str, Any]:
    """Budget for one shape's operands, and the memory the context and libraries keep."""
    ctx.rt.release()
    free = ctx.rt.free_bytes()
    if ctx.args.mem_limit_bytes is not None:
        ctx.memory_budget = ctx.args.mem_limit_bytes
    elif ctx.args.dry_run:
        ctx.memory_budget = DRY_RUN_MEMORY_BUDGET
    else:
        ctx.memory_budget = ctx.args.mem_fraction * free
    in_use_gib = max(0.0, identity["memory_bytes"] - free) / GIB if ctx.rt.is_cuda else 0.0
    return {"memory_reserve_gib": round(in_use_gib + 2.0, 1),
            "memory_reserve": f"memory in use after start-up ({in_use_gib:.2f} GiB: context, library "
                              "workspaces) plus 2 GiB for allocator fragmentation"}


def measure_device_figures(ctx: Context, identity: Dict[str, Any]) -> Dict[str, Any]:
    warm_up_device(ctx)
    reserve = set_memory_budget(ctx, identity)
    launch_us = measure_launch_overhead_us(ctx)
    copy_gbytes, copy_size = measure_copy_bandwidth_gbytes(ctx)
    ctx.rt.release()
    progress(f"device: {identity['name']}; launch gap {launch_us:.2f} us, copy {copy_gbytes:.0f} GB/s, "
             f"operand budget {ctx.memory_budget / GIB:.3g} GiB per shape")
    return {"launch_overhead_us": launch_us, "copy_gbytes_per_s": copy_gbytes,
            "memory_reserve_gib": reserve["memory_reserve_gib"],
            "how": {"kernel_launch_overhead_us": "per-kernel time of back-to-back 1-element in-place adds",
                    "memory_bandwidth_gbytes_per_s": f"device copy of {copy_size} bytes: (read + write) / time",
                    "memory_reserve_gib": reserve["memory_reserve"]}}


def measure_tables(ctx: Context) -> Dict[str, Any]:
    gemm = {}
    for name in ctx.args.dtypes:
        gemm[name] = measure_gemm(ctx, name)
    return {"gemm": gemm, "flash_attention": measure_attention(ctx), "memory_bound": measure_memory_bound(ctx),
            "adam": measure_adam(ctx)}


def describe_plan(ctx: Context) -> None:
    g = ctx.grids
    progress(f"{'dry-run on the CPU' if ctx.args.dry_run else 'measuring'} with the {grid_name(ctx.args)} grids: "
             f"GEMM {len(g.gemm_m)}x{len(g.gemm_n)}x{len(g.gemm_k)} per dtype ({','.join(ctx.args.dtypes)}), "
             f"attention {len(g.attn_batch_heads)}x{len(g.attn_seq)}x{len(g.attn_head_dim)}, "
             f"{len(MEMORY_BOUND_KINDS)} memory-bound kinds x {len(g.mb_bytes)} sizes, "
             f"Adam {len(g.adam_params)} sizes; checkpoint {ctx.ckpt.path}")


def run(args: argparse.Namespace) -> Dict[str, Any]:
    torch = import_torch()
    args.out = args.out.expanduser()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    if args.id and args.id != args.out.stem:
        warn(f"--id {args.id} differs from the file stem {args.out.stem}; scenarios name the profile by id")
    ctx, identity = make_context(torch, args)
    base_path = find_base_profile(args, identity["name"], ctx.rt.is_cuda)
    base = load_base_profile(base_path)
    if args.resume:
        ctx.ckpt.load()
    describe_plan(ctx)
    torch.manual_seed(0)
    figures = measure_device_figures(ctx, identity)
    tables = measure_tables(ctx)
    collectives = measure_collectives(ctx)
    profile = build_profile(ctx, identity, figures, tables, base, base_path, collectives)
    errors = validate_profile(profile)
    if errors:
        raise MeasureError("the measured profile breaks the format rules: " + "; ".join(errors) +
                           f" (measured rows are kept in {ctx.ckpt.path}; rerun, e.g. with --skip-collectives, "
                           "to resume)")
    write_atomically(args.out, dumps_profile(profile) + "\n")
    ctx.ckpt.remove()
    extrapolated = sum(len(v["points"]) for k, v in ctx.extrapolated.items())
    progress(f"wrote {args.out} ({ctx.ckpt.resumed} points resumed, {extrapolated} extrapolated)")
    return profile


def main(argv: Optional[Sequence[str]] = None) -> int:
    if sys.version_info < (3, 9):
        print(f"{TOOL_NAME}: error: Python 3.9 or newer is needed", file=sys.stderr)
        return EXIT_ERROR
    args = parse_args(sys.argv[1:] if argv is None else argv)
    try:
        run(args)
    except StopRequested:
        progress(f"stopped after {args.stop_after_rows} measured rows as asked; "
                 f"rerun without --stop-after-rows to resume from {args.out}.partial.json")
        return EXIT_STOPPED
    except KeyboardInterrupt:
        print(f"{TOOL_NAME}: interrupted; rerun the same command to resume from {args.out}.partial.json",
              file=sys.stderr)
        return 130
    except MeasureError as error:
        print(f"{TOOL_NAME}: error: {error}", file=sys.stderr)
        return EXIT_ERROR
    except (RuntimeError, OSError) as error:  # torch, CUDA or the file system
        first_line = (str(error).strip().splitlines() or [""])[0]
        print(f"{TOOL_NAME}: error: {type(error).__name__}: {first_line}\n"
              f"  (measured rows are kept in {args.out}.partial.json; rerun to resume)", file=sys.stderr)
        return EXIT_ERROR
    return 0


if __name__ == "__main__":
    sys.exit(main())
