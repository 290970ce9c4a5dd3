#!/usr/bin/env python3
"""Writes the stress programs of issue 15 (shapes that once crashed or compiled
in quadratic time) into a folder, for timing by hand:

    python3 scripts/gen_stress_programs.py /tmp/stress
    hlorun bench /tmp/stress/many_adds.hlo --platform host --iters 1
    hlorun bench /tmp/stress/wide_tuple.hlo --platform interpreter --iters 1
    hlorun compare /tmp/stress/nested_fusions.hlo --platform host

`bench` prints the compile time and the run time; its arguments are random.

Each program is valid HLO with unique instruction names; no NumPy needed.
"""
import os
import sys


def many_adds(n=20000):
    """A chain of n adds that each also use the parameter."""
    lines = ["HloModule many_adds", "ENTRY e {", "  p = f32[16] parameter(0)",
             "  a0 = f32[16] add(p, p)"]
    lines += [f"  a{i} = f32[16] add(a{i - 1}, p)" for i in range(1, n)]
    lines += [f"  ROOT r = f32[16] add(a{n - 1}, p)", "}"]
    return "\n".join(lines) + "\n"


def wide_tuple(n=10000):
    """A tuple of n (f32[], f32[]) pairs."""
    ty = ", ".join(["(f32[], f32[])"] * n)
    return (f"HloModule wide_tuple\nENTRY e {{\n  p = f32[] parameter(0)\n"
            f"  q = (f32[], f32[]) tuple(p, p)\n"
            f"  ROOT t = ({ty}) tuple({', '.join(['q'] * n)})\n}}\n")


def nested(kind, n=3000):
    """n computations, each calling (or fusing) the previous one."""
    shape = "f32[8]"
    out = [f"HloModule nested_{kind}s"]
    out.append(f"c0 {{\n  p0 = {shape} parameter(0)\n  ROOT r0 = {shape} add(p0, p0)\n}}")
    for i in range(1, n):
        call = (f"call(p{i}), to_apply=c{i - 1}" if kind == "call"
                else f"fusion(p{i}), kind=kLoop, calls=c{i - 1}")
        out.append(f"c{i} {{\n  p{i} = {shape} parameter(0)\n  ROOT r{i} = {shape} {call}\n}}")
    call = (f"call(x), to_apply=c{n - 1}" if kind == "call"
            else f"fusion(x), kind=kLoop, calls=c{n - 1}")
    out.append(f"ENTRY e {{\n  x = {shape} parameter(0)\n  ROOT y = {shape} {call}\n}}")
    return "\n".join(out) + "\n"


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    folder = sys.argv[1]
    os.makedirs(folder, exist_ok=True)
    programs = {
        "many_adds.hlo": many_adds(),
        "wide_tuple.hlo": wide_tuple(),
        "nested_calls.hlo": nested("call"),
        "nested_fusions.hlo": nested("fusion"),
    }
    for name, text in programs.items():
        with open(os.path.join(folder, name), "w") as f:
            f.write(text)
        print(os.path.join(folder, name))


if __name__ == "__main__":
    main()
