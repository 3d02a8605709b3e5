# SPDX-License-Identifier: MIT
"""Tests for measure_gpu.py.

Run from the repository root with a python that has PyTorch (Debian: apt-get install python3-torch):

    /usr/bin/python3 -m unittest profiles/measure/test_measure_gpu.py

The dry-run tests run the tool on the CPU with tiny grids and check the profile's structure against
docs/profile-format.md, and that an interrupted run resumes without re-measuring finished rows. They
are skipped when torch is not importable; the pure-function tests run regardless.
"""
from __future__ import annotations

import importlib.util
import json
import math
import subprocess
import sys
import tempfile
import types
import unittest
from pathlib import Path

HERE = Path(__file__).resolve().parent
TOOL = HERE / "measure_gpu.py"
FIXTURE = HERE.parents[1] / "tests" / "data" / "dry_run_profile.json"
MEMORY_BOUND_KINDS = ("layernorm", "gelu", "swiglu", "softmax", "dropout", "residual_add", "cross_entropy",
                      "embedding")
HAVE_TORCH = importlib.util.find_spec("torch") is not None


def load_tool():
    """Import measure_gpu.py as a module (it does not import torch at import time)."""
    spec = importlib.util.spec_from_file_location("measure_gpu", TOOL)
    module = importlib.util.module_from_spec(spec)
    sys.modules["measure_gpu"] = module  # dataclasses look their module up while the class is created
    spec.loader.exec_module(module)
    return module


tool = load_tool()


def run_tool(*args, timeout=600):
    return subprocess.run([sys.executable, str(TOOL), *map(str, args)], capture_output=True, text=True,
                          timeout=timeout)


def significant(value):
    return float(f"{value:.4g}")


def structure_problems(profile):
    """Everything docs/profile-format.md demands of a profile, as a list of problems (empty when fine)."""
    problems = []

    def grid(where, values):
        if not isinstance(values, list) or not values:
            problems.append(f"{where}: not a non-empty list")
            return 0
        if not all(isinstance(v, (int, float)) and v > 0 for v in values):
            problems.append(f"{where}: not all positive")
        if any(b <= a for a, b in zip(values, values[1:])):
            problems.append(f"{where}: not strictly increasing")
        return len(values)

    def latencies(where, values, count):
        if not isinstance(values, list) or len(values) != count:
            problems.append(f"{where}: expected {count} values")
        elif not all(isinstance(v, (int, float)) and math.isfinite(v) and v > 0 for v in values):
            problems.append(f"{where}: a latency is not positive and finite")

    def table(where, data, axes, outputs):
        count = math.prod(grid(f"{where}.{axis}", data.get(axis)) for axis in axes)
        for output in outputs:
            latencies(f"{where}.{output}", data.get(output), count)

    for key in ("schema_version", "id", "name", "source", "source_details", "memory_gib", "memory_reserve_gib",
                "memory_bandwidth_gbytes_per_s", "peak_tflops", "sm_count", "kernel_launch_overhead_us",
                "price_usd_per_gpu_hour", "price_source", "links", "gemm", "flash_attention", "memory_bound",
                "adam"):
        if key not in profile:
            problems.append(f"missing {key}")
    if problems:
        return problems
    if profile["schema_version"] != 1:
        problems.append("schema_version is not 1")
    for name, data in profile["gemm"].items():
        table(f"gemm.{name}", data, ("m", "n", "k"), ("seconds",))
    table("flash_attention", profile["flash_attention"], ("batch_heads", "seq", "head_dim"),
          ("forward_seconds", "backward_seconds"))
    for kind in MEMORY_BOUND_KINDS:
        table(f"memory_bound.{kind}", profile["memory_bound"].get(kind, {}), ("bytes",),
              ("forward_seconds", "backward_seconds"))
    table("adam", profile["adam"], ("params",), ("seconds",))
    for i, data in enumerate(profile.get("all_reduce", [])):
        if not isinstance(data.get("gpus"), int) or data["gpus"] < 2:
            problems.append(f"all_reduce[{i}].gpus")
        table(f"all_reduce[{i}]", data, ("bytes",), ("seconds",))
    for key in tool.LINK_KEYS:
        if not isinstance(profile["links"].get(key), (int, float)):
            problems.append(f"links.{key} missing")
    for key in ("memory_gib", "memory_bandwidth_gbytes_per_s", "kernel_launch_overhead_us", "sm_count"):
        if not profile[key] > 0:
            problems.append(f"{key} is not positive")
    return problems


def gemm_value(table, m, n, k):
    i, j, l = table["m"].index(m), table["n"].index(n), table["k"].index(k)
    return table["seconds"][(i * len(table["n"]) + j) * len(table["k"]) + l]


class PureFunctionTests(unittest.TestCase):
    """Parts of the tool that need no torch."""

    def test_grids_are_strictly_increasing(self):
        for name, grids in tool.GRIDS.items():
            for axis, values in vars(grids).items():
                if isinstance(values, tuple):
                    self.assertTrue(all(b > a for a, b in zip(values, values[1:])), f"{name}.{axis}")

    def test_default_gemm_m_grid_has_powers_and_half_steps(self):
        m = tool.GRIDS["default"].gemm_m
        self.assertEqual((m[0], m[1], m[-2], m[-1]), (64, 96, 196608, 262144))

    def test_datasheet_peaks_by_name(self):
        self.assertEqual(tool.datasheet_peaks("NVIDIA A100-SXM4-80GB")["bf16"], 312.0)
        self.assertEqual(tool.datasheet_peaks("NVIDIA H100 80GB HBM3")["bf16"], 989.4)
        self.assertEqual(tool.datasheet_peaks("NVIDIA H200")["bf16"], 989.4)
        self.assertEqual(tool.datasheet_peaks("NVIDIA H100 PCIe")["bf16"], 756.0)
        self.assertIsNone(tool.datasheet_peaks("NVIDIA GH200 480GB"))
        self.assertIsNone(tool.datasheet_peaks("NVIDIA L4"))

    def test_skipped_points_scale_from_the_nearest_measured_one_by_work(self):
        ctx = types.SimpleNamespace(memory_budget=1.0, extrapolated={})
        spec = tool.TableSpec(name="t", axes=[("a", (1, 2)), ("b", (10, 20))], work=lambda p: p[0] * p[1],
                              footprint=lambda p: 0, measure=None)
        points = [(1, 10), (1, 20), (2, 10), (2, 20)]
        values = {(1, 10): [1.0], (1, 20): [2.0], (2, 10): [2.5]}
        out = tool.fill_grid(ctx, spec, points, values, {(2, 20): "operands over the memory budget"})
        self.assertEqual(len(out["seconds"]), 4)
        source = ctx.extrapolated["t"]["points"][0]["from"]
        self.assertIn(tuple(source), values)
        self.assertAlmostEqual(out["seconds"][3], values[tuple(source)][0] * 40 / (source[0] * source[1]))

    def test_links_fit_from_all_reduce(self):
        table = {"gpus": 8, "bytes": [1024, 2 ** 30], "seconds": [30e-6, 2 ** 30 * 1.75 / 200e9]}
        links, _ = tool.fit_links(dict(tool.CONSERVATIVE_LINKS), [table])
        self.assertAlmostEqual(links["nvlink_bus_gbytes_per_s"], 200.0, delta=0.5)
        self.assertEqual(links["gpus_per_node"], 8)
        self.assertGreater(links["nvlink_base_latency_us"], 0)

    def test_compact_json_round_trips(self):
        data = {"a": [1, 2.5e-06], "b": {"c": [{"d": 1}], "e": None}, "f": "text"}
        self.assertEqual(json.loads(tool.dumps_profile(data)), data)

    def test_fixture_is_a_valid_dry_run_profile(self):
        if not FIXTURE.exists():
            self.skipTest(f"{FIXTURE} not generated")
        profile = json.loads(FIXTURE.read_text())
        self.assertEqual(structure_problems(profile), [])
        self.assertEqual(profile["source"], "modeled")
        self.assertEqual(profile["source_details"]["method"], tool.DRY_RUN_METHOD)
        self.assertLess(FIXTURE.stat().st_size, 60_000)

    def test_validate_profile_names_the_field(self):
        if not FIXTURE.exists():
            self.skipTest(f"{FIXTURE} not generated")
        profile = json.loads(FIXTURE.read_text())
        profile["gemm"]["bf16"]["k"] = list(reversed(profile["gemm"]["bf16"]["k"]))
        profile["adam"]["seconds"][0] = 0.0
        errors = " ".join(tool.validate_profile(profile))
        self.assertIn("gemm.bf16.k", errors)
        self.assertIn("adam.seconds", errors)


@unittest.skipUnless(HAVE_TORCH, f"torch is not importable with {sys.executable}; "
                                 "install python3-torch (Debian) or PyTorch to run the dry-run tests")
class DryRunTests(unittest.TestCase):
    """The tool end to end on the CPU (--dry-run)."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="measure-gpu-test-")
        cls.out = Path(cls.tmp.name) / "full" / "cpu-test.json"
        cls.result = run_tool("--dry-run", "--out", cls.out)
        cls.profile = json.loads(cls.out.read_text()) if cls.out.exists() else None

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def setUp(self):
        self.assertEqual(self.result.returncode, 0, self.result.stderr)

    def test_structure_follows_the_format(self):
        self.assertEqual(structure_problems(self.profile), [])
        self.assertEqual(set(self.profile["memory_bound"]), set(MEMORY_BOUND_KINDS))
        self.assertEqual(set(self.profile["gemm"]), {"bf16", "fp16"})

    def test_dry_run_is_not_called_a_measurement(self):
        self.assertEqual(self.profile["source"], "modeled")
        details = self.profile["source_details"]
        self.assertEqual(details["method"], tool.DRY_RUN_METHOD)
        for key in ("tool_version", "date", "torch", "clocks", "driver", "cuda", "links_note"):
            self.assertIn(key, details)
        self.assertEqual(self.profile["id"], "cpu-test")

    def test_extrapolated_points_are_recorded_and_scaled(self):
        records = self.profile["source_details"]["extrapolated"]["gemm.bf16"]["points"]
        self.assertTrue(records, "the dry-run budget should push the largest GEMMs out")
        table = self.profile["gemm"]["bf16"]
        for record in records:
            (m, n, k), (sm, sn, sk) = record["point"], record["from"]
            expected = gemm_value(table, sm, sn, sk) * (m * n * k) / (sm * sn * sk)
            self.assertAlmostEqual(gemm_value(table, m, n, k) / expected, 1.0, delta=2e-3)

    def test_progress_is_reported_per_row_and_checkpoint_removed(self):
        self.assertIn("[gemm.bf16] row 1/", self.result.stderr)
        self.assertIn("ETA", self.result.stderr)
        self.assertFalse(Path(str(self.out) + ".partial.json").exists())

    def test_resume_skips_finished_rows(self):
        out = Path(self.tmp.name) / "resume" / "p.json"
        partial = Path(str(out) + ".partial.json")
        first = run_tool("--dry-run", "--skip-collectives", "--out", out, "--stop-after-rows", "2")
        self.assertEqual(first.returncode, 3, first.stderr)
        self.assertFalse(out.exists())
        done = json.loads(partial.read_text())["tables"]["gemm.bf16"]
        self.assertEqual(len(done), 2 * 3 * 3)  # two M rows of the 3 x 3 (N, K) dry-run grid

        second = run_tool("--dry-run", "--skip-collectives", "--out", out)
        self.assertEqual(second.returncode, 0, second.stderr)
        self.assertIn(f"resuming: {len(done)} measured points", second.stderr)
        profile = json.loads(out.read_text())
        self.assertEqual(profile["source_details"]["resumed_points"], len(done))
        table = profile["gemm"]["bf16"]
        for key, (seconds,) in done.items():
            m, n, k = map(int, key.split("x"))
            self.assertEqual(gemm_value(table, m, n, k), significant(seconds), key)  # reused, not re-timed
        self.assertFalse(partial.exists())

    def test_no_resume_ignores_the_checkpoint(self):
        out = Path(self.tmp.name) / "noresume" / "p.json"
        first = run_tool("--dry-run", "--skip-collectives", "--out", out, "--stop-after-rows", "1")
        self.assertEqual(first.returncode, 3, first.stderr)
        second = run_tool("--dry-run", "--skip-collectives", "--no-resume", "--out", out)
        self.assertEqual(second.returncode, 0, second.stderr)
        self.assertEqual(json.loads(out.read_text())["source_details"]["resumed_points"], 0)

    def test_links_and_price_come_from_the_base_profile(self):
        base = Path(self.tmp.name) / "base.json"
        links = {**tool.CONSERVATIVE_LINKS, "nvlink_bus_gbytes_per_s": 123.0, "gpus_per_node": 4}
        base.write_text(json.dumps({"links": links, "price_usd_per_gpu_hour": 2.5, "price_source": "test"}))
        out = Path(self.tmp.name) / "base" / "p.json"
        result = run_tool("--dry-run", "--skip-collectives", "--base-profile", base, "--out", out,
                          "--id", "custom-id", "--name", "Custom")
        self.assertEqual(result.returncode, 0, result.stderr)
        profile = json.loads(out.read_text())
        self.assertEqual(profile["links"], links)
        self.assertEqual(profile["price_usd_per_gpu_hour"], 2.5)
        self.assertIn("base.json", profile["source_details"]["links_note"])
        self.assertEqual((profile["id"], profile["name"]), ("custom-id", "Custom"))

    def test_fp8_gemms_get_their_own_table(self):
        # On the CPU the E4M3 scaled GEMM is stood in for by a float32 matmul, and the profile says so.
        out = Path(self.tmp.name) / "fp8" / "p.json"
        out.parent.mkdir()
        result = run_tool("--dry-run", "--skip-collectives", "--dtype", "bf16,fp8", "--out", out)
        self.assertEqual(result.returncode, 0, result.stderr)
        profile = json.loads(out.read_text())
        self.assertEqual(sorted(profile["gemm"]), ["bf16", "fp8"])
        self.assertIn("fp8", profile["source_details"]["dry_run_substitutions"])
        self.assertEqual(len(profile["gemm"]["fp8"]["seconds"]),
                         len(profile["gemm"]["fp8"]["m"]) * len(profile["gemm"]["fp8"]["n"]) * len(profile["gemm"]["fp8"]["k"]))

    def test_bad_arguments_fail_cleanly(self):
        result = run_tool("--dry-run", "--dtype", "int8", "--out", Path(self.tmp.name) / "x.json")
        self.assertEqual(result.returncode, 2)
        self.assertIn("unknown data type", result.stderr)
        missing = run_tool("--dry-run", "--base-profile", "/nonexistent.json", "--out", Path(self.tmp.name) / "y.json")
        self.assertEqual(missing.returncode, 1)
        self.assertIn("no such file", missing.stderr)
        self.assertNotIn("Traceback", missing.stderr)


if __name__ == "__main__":
    unittest.main()
