#!/usr/bin/env python3
"""Runs mutants of the repository's HLO programs through `hlorun bench` and
reports every run that ends other than with exit 0 or 1 (a panic, an abort, a
signal) or that outlives a time limit.

Each mutant changes one program in one way: one or two integers in its text
(a dimension, an attribute, a constant) become edge values (0, -1, 2^31 - 1,
2^32, ...), an instruction line is dropped, or an element type is swapped.
Most mutants are refused at parse or verify time (exit 1, as they should be);
the ones that get through exercise the platform on shapes and attributes no
test wrote. Arguments are `hlorun bench`'s random ones. Runs are made under an
address-space limit, so a huge allocation fails instead of swapping.

    python3 fuzz/mutate_run.py --hlorun target/release/hlorun --count 3000 --seed 1
    python3 fuzz/mutate_run.py --hlorun ... --platform interpreter

Findings are written to OUT (default /tmp/hlorun-mutants): the mutant, the
program it came from, the exit status and the end of stderr.
"""

import argparse
import glob
import os
import random
import re
import resource
import subprocess
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EDGE_VALUES = ["0", "1", "-1", "2", "3", "7", "64", "1000", "2147483647", "4294967296", "-5",
               "99999999999"]
TYPES = ["f32", "s32", "pred", "bf16", "f16", "f64", "u8", "s8", "s64", "c64", "u32"]
NUMBER = re.compile(r"(?<![A-Za-z_.%])\d+")
TYPED = re.compile(r"\b(f32|s32|pred|bf16|f16|f64|u8|s8|s64|u32)\[")


def programs():
    patterns = ["tests/conformance/*/module.hlo", "tests/conformance/*/optimized.hlo",
                "platform-host/tests/cases/*/module.hlo", "tests/xla_ops/*/*.hlo",
                "tests/op_matrix/*/*.mlir"]
    found = [f for p in patterns for f in glob.glob(os.path.join(ROOT, p))]
    return sorted(f for f in found if os.path.getsize(f) < 20000)


def mutate(text, rng):
    kind = rng.random()
    if kind < 0.6:
        for _ in range(rng.randint(1, 2)):
            numbers = list(NUMBER.finditer(text))
            if not numbers:
                break
            m = rng.choice(numbers)
            text = text[:m.start()] + rng.choice(EDGE_VALUES) + text[m.end():]
        return text
    lines = text.split("\n")
    if kind < 0.8:
        body = [i for i, line in enumerate(lines) if " = " in line and "ROOT" not in line]
        if body:
            del lines[rng.choice(body)]
        return "\n".join(lines)
    typed = list(TYPED.finditer(text))
    if typed:
        m = rng.choice(typed)
        text = text[:m.start()] + rng.choice(TYPES) + text[m.end() - 1:]
    return text


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hlorun", required=True)
    ap.add_argument("--platform", default="host")
    ap.add_argument("--count", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=30, help="seconds per run")
    ap.add_argument("--memory-gb", type=float, default=12, help="address-space limit per run")
    ap.add_argument("--out", default="/tmp/hlorun-mutants")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    rng = random.Random(args.seed)
    sources = programs()
    limit = int(args.memory_gb * (1 << 30))

    def limit_memory():
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    counts = {}
    current = os.path.join(args.out, f"current_{args.seed}.hlo")
    for i in range(args.count):
        source = rng.choice(sources)
        text = mutate(open(source).read(), rng)
        open(current, "w").write(text)
        start = time.time()
        try:
            r = subprocess.run([args.hlorun, "bench", "-p", args.platform, current, "--iters", "1"],
                               capture_output=True, text=True, timeout=args.timeout,
                               preexec_fn=limit_memory)
            status, err = r.returncode, r.stderr[-2000:]
        except subprocess.TimeoutExpired:
            status, err = "timeout", ""
        clean = status in (0, 1) and "panicked" not in err
        key = status if clean else "finding"
        counts[key] = counts.get(key, 0) + 1
        if not clean:
            keep = os.path.join(args.out, f"mutant_{args.seed}_{i}.hlo")
            open(keep, "w").write(text)
            with open(os.path.join(args.out, "findings.txt"), "a") as f:
                f.write(f"{keep} from {os.path.relpath(source, ROOT)}: status {status} "
                        f"after {time.time() - start:.1f} s\n{err}\n----\n")
            print(f"finding: {keep} (from {os.path.relpath(source, ROOT)}): status {status}",
                  flush=True)
    print(f"{args.count} mutants on {args.platform}: exit 0: {counts.get(0, 0)}, "
          f"exit 1: {counts.get(1, 0)}, findings: {counts.get('finding', 0)}")


if __name__ == "__main__":
    main()
