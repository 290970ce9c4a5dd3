#!/usr/bin/env bash
# The CUDA platform on a GPU machine, in one command: the runtime's own GPU
# tests, the conformance corpus on CUDA (each run must hand all device memory
# back), `hlorun compare` against the Interpreter, the custom-call guide's CUDA
# example built with nvcc, and `hlorun bench` against XLA GPU (JAX on that
# machine) for the bench programs.
#
# Build elsewhere (the GPU machine needs no Rust):
#   CARGO_PROFILE_RELEASE_DEBUG=0 cargo build --release -p service --bin hlorun
#   CARGO_PROFILE_RELEASE_DEBUG=0 cargo test --release -p platform-cuda --no-run
# then, on the GPU machine, from a copy of the repository holding those files:
#   bash scripts/gpu_check.sh [hlorun] [bench dir] [platform-cuda test binary]
# Sections can be skipped with GPU_CHECK_SKIP="bench compare" (names: tests,
# corpus, compare, custom-call, bench).
set -uo pipefail
cd "$(dirname "$0")/.."
HLORUN="${1:-target/release/hlorun}"
BENCH_DIR="${2:-../shared/bench}"
CUDA_TESTS="${3:-}"
SKIP=" ${GPU_CHECK_SKIP:-} "
status=0
section() { echo; echo "== $*"; }
wanted() { [[ "$SKIP" != *" $1 "* ]]; }

section machine
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv 2>&1 || true
"$HLORUN" platforms || status=1

if wanted tests && [ -n "$CUDA_TESTS" ]; then
  section "platform-cuda's GPU tests"
  "$CUDA_TESTS" gpu_tests --nocapture --test-threads 1 || status=1
fi

if wanted corpus; then
  section "conformance corpus on CUDA"
  "$HLORUN" conformance --platform cuda --corpus tests/conformance || status=1
fi

if wanted compare && [ -d "$BENCH_DIR" ]; then
  section "bench programs: CUDA against the Interpreter (random inputs)"
  tmpc=$(mktemp)
  for hlo in "$BENCH_DIR"/*.hlo; do
    printf '%s: ' "$(basename "$hlo" .hlo)"
    timeout 60 "$HLORUN" compare "$hlo" --platform cuda --reference interpreter >"$tmpc" 2>&1
    rc=$?
    tail -3 "$tmpc"
    [ $rc = 124 ] && echo "timed out after 60 s"
  done
fi

if wanted custom-call; then
  section "the custom-call guide's CUDA example"
  tmp=$(mktemp -d)
  if nvcc -shared -Xcompiler -fPIC -I include -o "$tmp/libguide.so" \
      examples/custom_call_cuda/custom_call.cu; then
    python3 - "$tmp" "$HLORUN" <<'EOF' || status=1
import os, subprocess, sys
import numpy as np
tmp, hlorun = sys.argv[1], sys.argv[2]
rng = np.random.default_rng(0)
b = rng.standard_normal(128).astype(np.float32)
c = rng.standard_normal(2048).astype(np.float32)
np.save(f"{tmp}/b.npy", b)
np.save(f"{tmp}/c.npy", c)
lib = f"--custom-call-lib={tmp}/libguide.so"
run = [hlorun, "run", "examples/custom_call_cuda/custom_call.hlo", f"{tmp}/b.npy",
       f"{tmp}/c.npy", "--platform", "cuda", lib, "--out", tmp]
subprocess.run(run, check=True)
got = np.load(f"{tmp}/out0.npy")
want = (b[np.arange(2048) % 128] + c) * np.float32(0.5)
assert np.array_equal(got, want), f"wrong: max error {np.abs(got - want).max()}"
print("do_custom_call then scale_by_opaque: 2048 of 2048 elements right")
# The status-returning form's failure must reach the caller as exit status 1.
text = open("examples/custom_call_cuda/custom_call.hlo").read()
bad = text.replace('backend_config="0.5"', 'backend_config=""')
open(f"{tmp}/fail.hlo", "w").write(bad)
p = subprocess.run([hlorun, "run", f"{tmp}/fail.hlo", f"{tmp}/b.npy", f"{tmp}/c.npy",
                    "--platform", "cuda", lib], capture_output=True, text=True)
assert p.returncode == 1 and "must hold the factor" in p.stderr, (p.returncode, p.stderr)
print("failing status: exit 1 with", p.stderr.strip())
EOF
  else
    echo "nvcc failed"
    status=1
  fi
fi

if wanted bench; then
  section "CUDA against XLA GPU"
  if [ -d "$BENCH_DIR" ]; then
    python3 bench/compare_xla.py --hlorun "$HLORUN" --platform cuda --xla-backend gpu \
      --bench-dir "$BENCH_DIR" --iters 20 --timeout 60 || status=1
  else
    echo "no bench directory at $BENCH_DIR: pass it as the second argument"
    status=1
  fi
fi
exit $status
