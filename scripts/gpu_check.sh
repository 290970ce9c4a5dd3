#!/usr/bin/env bash
# The CUDA platform on a GPU machine, in one command: the conformance corpus on
# CUDA, then `hlorun bench` against XLA GPU (JAX on that machine) for the bench
# programs, printing both tables.
#
# Build elsewhere (the GPU machine needs no Rust):
#   CARGO_PROFILE_RELEASE_DEBUG=0 cargo build --release -p service --bin hlorun
# then, on the GPU machine, from a copy of the repository holding that binary:
#   bash scripts/gpu_check.sh [path/to/hlorun] [bench dir]
set -uo pipefail
cd "$(dirname "$0")/.."
HLORUN="${1:-target/release/hlorun}"
BENCH_DIR="${2:-../shared/bench}"
status=0

echo "== platforms"
"$HLORUN" platforms || status=1

echo "== conformance corpus on CUDA"
"$HLORUN" conformance --platform cuda --corpus tests/conformance || status=1

echo "== CUDA against XLA GPU"
if [ -d "$BENCH_DIR" ]; then
  python3 bench/compare_xla.py --hlorun "$HLORUN" --platform cuda --xla-backend gpu \
    --bench-dir "$BENCH_DIR" --iters 20 || status=1
else
  echo "no bench directory at $BENCH_DIR: pass it as the second argument"
  status=1
fi
exit $status
