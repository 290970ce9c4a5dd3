#!/usr/bin/env bash
# All-reduce latency, OSU style (4 KiB to 64 MiB of f32), on 2 and 4 ranks:
# through hlorun's MPI collectives layer (an all-reduce program on the Host,
# one device per rank) against MPI_Allreduce called directly. Prints one table
# per rank count: bytes, hlorun us, direct us, ratio. A benchmark, not a test.
#
#   bench/osu_allreduce.sh            (needs Open MPI and libclang; builds in release)
#
# HLORUN_MPI_TWO_PHASE_BYTES=never (or a byte count) moves the point from which
# an all-reduce goes in two phases (docs/distributed.md), to find the crossover.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -p service --features mpi --example osu_allreduce
BIN=${CARGO_TARGET_DIR:-target}/release/examples/osu_allreduce
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
for np in 2 4; do
  hl=$(mktemp) di=$(mktemp)
  mpirun --oversubscribe -np "$np" "$BIN" hlorun >"$hl"
  mpirun --oversubscribe -np "$np" "$BIN" direct >"$di"
  echo "== $np ranks"
  printf "%10s %12s %12s %7s\n" bytes hlorun_us direct_us ratio
  join "$hl" "$di" | awk '{ printf "%10d %12.1f %12.1f %7.2f\n", $1, $2, $3, $2 / $3 }'
  rm -f "$hl" "$di"
done
