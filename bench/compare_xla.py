#!/usr/bin/env python3
"""Times XLA CPU and `hlorun bench` on the same inputs for every benchmark program.

For each `NAME.hlo` with its `NAME.json` argument spec in the bench directory
(default: `../shared/bench` relative to the repository root):

1. the inputs are generated once with numpy from the spec (each argument's
   `dtype`, `shape`, and uniform `[lo, hi)`; integers in `[lo, hi)`), seeded by
   the program's name, and saved as `.npy` files in a temporary directory;
2. XLA CPU (through jax) compiles the HLO text and runs it: inputs resident on
   the device, every iteration executes and turns the results into NumPy
   arrays, after one warm-up; median and min over the iterations — the same
   protocol as `hlorun bench`. On CPU `np.asarray` of a result is a view of
   XLA's buffer, not a copy; `hlorun bench` likewise takes each result into a
   literal, which on the Host platform adopts the device buffer (no copy) and
   elsewhere copies;
3. `hlorun bench NAME.hlo ARG0.npy ... --platform PLATFORM --json --iters N`
   runs the same files on each requested platform.

It prints, per program and platform, compile and execution times, the
platform/XLA ratios, the geometric mean of the execution ratios, and the
programs slower than 2x XLA.

Usage (from the repository root):

    cargo build --release -p service --bin hlorun
    python3 bench/compare_xla.py                        # Host vs XLA, all programs
    python3 bench/compare_xla.py --platform interpreter --platform host
    python3 bench/compare_xla.py --only softmax --only matmul --iters 20
    python3 bench/compare_xla.py --iters 20 --rounds 3      # steadier ratios
    python3 bench/compare_xla.py --json > results.json
    python3 bench/compare_xla.py --xla-only             # just time XLA CPU

Options: --bench-dir DIR, --hlorun PATH (default target/release/hlorun),
--platform NAME (repeatable, default host), --iters N (default 10),
--rounds R (default 1: time each side R times, alternating, and keep the
median of the round medians; on a noisy machine 3 steadies the ratios),
--only SUBSTRING (repeatable), --timeout SECONDS (per hlorun call), --json,
--xla-only.

Needs `pip install jax` (CPU). XLA runs on one device; its own intra-op
threading uses all cores, as `hlorun`'s Host platform does.
"""
import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
import zlib

import numpy as np

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def default_bench_dir():
    """The repository's op-level set, `bench/programs` (made by
    `bench/gen_bench.py`); `--bench-dir ../shared/bench` times the shared copy
    of the same programs, `--bench-dir bench/models` the whole-model set."""
    return os.path.join(REPO, "bench", "programs")


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--bench-dir", default=None)
    p.add_argument("--hlorun", default=os.path.join(REPO, "target", "release", "hlorun"))
    p.add_argument("--platform", action="append", dest="platforms")
    p.add_argument("--iters", type=int, default=10)
    p.add_argument("--rounds", type=int, default=1)
    p.add_argument("--only", action="append", default=[])
    p.add_argument("--timeout", type=float, default=600.0)
    p.add_argument("--json", action="store_true")
    p.add_argument("--xla-only", action="store_true")
    p.add_argument("--xla-backend", default="cpu", help="cpu (default) or gpu: which XLA to compare with")
    a = p.parse_args()
    a.platforms = a.platforms or ["host"]
    a.bench_dir = a.bench_dir or default_bench_dir()
    if a.iters < 1:
        p.error("--iters must be at least 1")
    if a.rounds < 1:
        p.error("--rounds must be at least 1")
    return a


def programs(bench_dir, only):
    if not os.path.isdir(bench_dir):
        sys.exit(f"compare_xla: bench directory {bench_dir} does not exist (use --bench-dir)")
    names = sorted(f[:-4] for f in os.listdir(bench_dir) if f.endswith(".hlo"))
    names = [n for n in names if os.path.exists(os.path.join(bench_dir, n + ".json"))]
    if only:
        names = [n for n in names if any(o in n for o in only)]
    return names


def make_inputs(spec, name, out_dir):
    """One .npy per argument, from the spec; the same files feed both sides.

    bfloat16 arguments are drawn in f32 and rounded (numpy files them under
    kind 'V'); complex64 ones are drawn in f32 and given the reversed draw as
    imaginary part."""
    import ml_dtypes  # installed with jax; registers bfloat16 with numpy

    rng = np.random.default_rng(zlib.crc32(name.encode()))
    paths, arrays = [], []
    for i, a in enumerate(spec["args"]):
        dt = np.dtype(a["dtype"])
        shape = tuple(a["shape"])
        lo, hi = a.get("lo", 0), a.get("hi", 1)
        if dt == np.dtype(ml_dtypes.bfloat16):
            x = rng.uniform(lo, hi, size=shape).astype(np.float32).astype(dt)
        elif dt == np.complex64:
            x = rng.uniform(lo, hi, size=shape).astype(np.float32)
            x = (x + 1j * x[::-1].copy()).astype(dt)
        elif dt.kind == "f":
            x = rng.uniform(lo, hi, size=shape).astype(dt)
        elif dt.kind == "b":
            x = rng.integers(0, 2, size=shape).astype(dt)
        else:
            x = rng.integers(lo, hi, size=shape).astype(dt)
        path = os.path.join(out_dir, f"{name}.arg{i}.npy")
        np.save(path, x)
        paths.append(path)
        arrays.append(x)
    return paths, arrays


class Xla:
    """XLA (CPU, or GPU with --xla-backend gpu) through jax's client."""

    def __init__(self, backend="cpu"):
        os.environ.setdefault("JAX_PLATFORMS", "cpu" if backend == "cpu" else "")
        import jax
        from jax._src import xla_bridge
        from jax._src.lib import xla_client as xc

        self.jax = jax
        self.xc = xc
        self.backend = xla_bridge.get_backend(backend)
        self.device = self.backend.devices()[0]
        self.version = jax.__version__

    def compile(self, text):
        xc = self.xc
        m = xc.hlo.hlo_module_from_text(text)
        mlir = xc._xla.mlir.hlo_to_stablehlo(m.as_serialized_hlo_module_proto())
        start = time.perf_counter()
        if hasattr(self.backend, "compile_and_load"):
            exe = self.backend.compile_and_load(mlir, self.backend.devices()[:1], xc.CompileOptions())
        else:
            exe = self.backend.compile(mlir, xc.CompileOptions())
        return exe, (time.perf_counter() - start) * 1e3

    def bench(self, text, arrays, iters):
        exe, compile_ms = self.compile(text)
        bufs = [self.jax.device_put(x, self.device) for x in arrays]

        def run_once():
            start = time.perf_counter()
            outs = exe.execute(bufs)
            for o in outs:
                np.asarray(o)
            return (time.perf_counter() - start) * 1e3

        run_once()  # warm-up
        times = [run_once() for _ in range(iters)]
        return {
            "compile_ms": compile_ms,
            "execute_ms_median": statistics.median(times),
            "execute_ms_min": min(times),
            "iters": iters,
            "peak_bytes": self.peak_bytes(exe),
        }

    @staticmethod
    def peak_bytes(exe):
        """Bytes one run needs beyond its arguments, from XLA's buffer
        assignment: temporaries plus outputs not aliasing an argument (the
        same measure `hlorun bench` reports as peak memory)."""
        try:
            stats = exe.get_compiled_memory_stats()
        except Exception:  # an older jaxlib without the call
            return None
        return stats.temp_size_in_bytes + stats.output_size_in_bytes - stats.alias_size_in_bytes


def run_hlorun(args, platform, hlo_path, arg_paths):
    cmd = [args.hlorun, "bench", hlo_path, *arg_paths, "--platform", platform, "--json",
           "--iters", str(args.iters)]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout)
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {args.timeout:.0f} s"}
    if proc.returncode != 0:
        msg = (proc.stderr.strip() or proc.stdout.strip()).splitlines()
        return {"error": msg[-1] if msg else f"exit status {proc.returncode}"}
    for line in reversed(proc.stdout.strip().splitlines()):
        if line.startswith("{"):
            return json.loads(line)
    return {"error": "no JSON line in hlorun's output"}


def combine_rounds(rounds):
    """One result from several rounds of one side: the first error if any
    round failed, else the median of the rounds' medians and compile times
    and the smallest minimum."""
    for r in rounds:
        if "error" in r:
            return r
    if len(rounds) == 1:
        return rounds[0]
    out = dict(rounds[-1])
    out["execute_ms_median"] = statistics.median(r["execute_ms_median"] for r in rounds)
    out["execute_ms_min"] = min(r["execute_ms_min"] for r in rounds)
    out["compile_ms"] = statistics.median(r["compile_ms"] for r in rounds)
    out["round_medians_ms"] = [r["execute_ms_median"] for r in rounds]
    return out


def geomean(values):
    values = [v for v in values if v and v > 0 and math.isfinite(v)]
    if not values:
        return None
    return math.exp(sum(math.log(v) for v in values) / len(values))


def mb(v):
    return None if v is None else v / 1e6


def fmt(v, unit=""):
    return "—" if v is None else f"{v:.3f}{unit}"


def main():
    args = parse_args()
    names = programs(args.bench_dir, args.only)
    if not names:
        sys.exit("compare_xla: no programs selected")
    if not args.xla_only and not os.path.exists(args.hlorun):
        sys.exit(f"compare_xla: {args.hlorun} not found; build it with "
                 "`cargo build --release -p service --bin hlorun` or pass --hlorun")
    xla = Xla(args.xla_backend)
    platforms = [] if args.xla_only else args.platforms
    results = []
    with tempfile.TemporaryDirectory(prefix="compare_xla_") as tmp:
        for name in names:
            hlo_path = os.path.join(args.bench_dir, name + ".hlo")
            with open(os.path.join(args.bench_dir, name + ".json")) as f:
                spec = json.load(f)
            with open(hlo_path) as f:
                text = f.read()
            paths, arrays = make_inputs(spec, name, tmp)
            row = {"program": name}
            # Rounds alternate XLA and each platform, so a slow spell of the
            # machine hits both sides; each side keeps the median of its
            # round medians.
            rounds = {k: [] for k in ["xla", *platforms]}
            for _ in range(args.rounds):
                try:
                    rounds["xla"].append(xla.bench(text, arrays, args.iters))
                except Exception as e:  # report and go on with the other programs
                    rounds["xla"].append({"error": f"{type(e).__name__}: {e}".splitlines()[0]})
                for p in platforms:
                    rounds[p].append(run_hlorun(args, p, hlo_path, paths))
            del arrays
            row["xla"] = combine_rounds(rounds["xla"])
            for p in platforms:
                r = combine_rounds(rounds[p])
                x = row["xla"]
                if "error" not in r and "error" not in x:
                    r["execute_ratio"] = r["execute_ms_median"] / x["execute_ms_median"]
                    r["compile_ratio"] = r["compile_ms"] / x["compile_ms"]
                    if r.get("peak_bytes") is not None and x.get("peak_bytes"):
                        r["peak_ratio"] = r["peak_bytes"] / x["peak_bytes"]
                row[p] = r
            for path in paths:
                os.remove(path)
            results.append(row)
            if not args.json:
                print_row(row, platforms, file=sys.stderr)

    summary = {}
    for p in platforms:
        ratios = [r[p].get("execute_ratio") for r in results]
        ok = [v for v in ratios if v is not None]
        summary[p] = {
            "geomean_execute_ratio": geomean(ok),
            "geomean_compile_ratio": geomean([r[p].get("compile_ratio") for r in results]),
            "programs_compared": len(ok),
            "programs_failed": [r["program"] for r in results if "error" in r[p]],
            "slower_than_2x": [r["program"] for r in results
                               if (r[p].get("execute_ratio") or 0) > 2.0],
            "slower_than_1_5x": [r["program"] for r in results
                                 if (r[p].get("execute_ratio") or 0) > 1.5],
            "geomean_peak_ratio": geomean([r[p].get("peak_ratio") for r in results]),
            "peak_above_xla": [r["program"] for r in results
                               if (r[p].get("peak_ratio") or 0) > 1.0],
        }
    doc = {"xla_version": xla.version, "iters": args.iters, "rounds": args.rounds,
           "results": results, "summary": summary}
    if args.json:
        print(json.dumps(doc, indent=1))
    else:
        print_table(doc, platforms)


def print_row(row, platforms, file):
    x = row["xla"]
    parts = [f"{row['program']}: XLA " + (x["error"] if "error" in x else
             f"compile {x['compile_ms']:.1f} ms, execute {x['execute_ms_median']:.3f} ms")]
    for p in platforms:
        r = row[p]
        if "error" in r:
            parts.append(f"{p} failed: {r['error']}")
        else:
            parts.append(f"{p} compile {r['compile_ms']:.1f} ms, execute {r['execute_ms_median']:.3f} ms"
                         + (f" ({r['execute_ratio']:.2f}x)" if "execute_ratio" in r else ""))
    print("; ".join(parts), file=file, flush=True)


def print_table(doc, platforms):
    head = "| program | XLA compile ms | XLA execute ms (median / min) | XLA peak MB |"
    rule = "| --- | --- | --- | --- |"
    for p in platforms:
        head += (f" {p} compile ms | {p} execute ms (median / min) | {p}/XLA execute |"
                 f" {p}/XLA compile | {p} peak MB | {p}/XLA peak |")
        rule += " --- | --- | --- | --- | --- | --- |"
    print(head)
    print(rule)
    for row in doc["results"]:
        x = row["xla"]
        if "error" in x:
            line = f"| {row['program']} | error: {x['error']} | | |"
        else:
            line = (f"| {row['program']} | {x['compile_ms']:.1f} | "
                    f"{x['execute_ms_median']:.3f} / {x['execute_ms_min']:.3f} | "
                    f"{fmt(mb(x.get('peak_bytes')))} |")
        for p in platforms:
            r = row[p]
            if "error" in r:
                line += f" error: {r['error']} | | | | | |"
            else:
                line += (f" {r['compile_ms']:.1f} | {r['execute_ms_median']:.3f} / "
                         f"{r['execute_ms_min']:.3f} | {fmt(r.get('execute_ratio'), 'x')} | "
                         f"{fmt(r.get('compile_ratio'), 'x')} | {fmt(mb(r.get('peak_bytes')))} | "
                         f"{fmt(r.get('peak_ratio'), 'x')} |")
        print(line)
    print()
    for p, s in doc["summary"].items():
        print(f"{p}: geometric mean of execute ratios {fmt(s['geomean_execute_ratio'], 'x')} "
              f"over {s['programs_compared']} program(s); compile {fmt(s['geomean_compile_ratio'], 'x')}; "
              f"slower than 2x: {', '.join(s['slower_than_2x']) or 'none'}; "
              f"slower than 1.5x: {', '.join(s['slower_than_1_5x']) or 'none'}; "
              f"peak memory {fmt(s['geomean_peak_ratio'], 'x')} of XLA's (geometric mean), "
              f"above XLA's: {', '.join(s['peak_above_xla']) or 'none'}; "
              f"failed: {', '.join(s['programs_failed']) or 'none'}")


if __name__ == "__main__":
    main()
