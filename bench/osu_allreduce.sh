#!/usr/bin/env bash
# All-reduce latency, OSU style (4 KiB to 64 MiB of f32), on 2 and 4 ranks:
# through hlorun's MPI collectives layer (an all-reduce program on the Host,
# one device per rank) against MPI_Allreduce called directly. A benchmark,
# not a test. Prints one table per rank count: bytes, then the median over
# ROUNDS rounds (the modes alternated within each round) of the mean
# microseconds per call of each mode, then each hlorun mode over direct.
#
#   bench/osu_allreduce.sh            (needs Open MPI and libclang; builds in release)
#   ROUNDS=3 bench/osu_allreduce.sh
#   BIN=/path/to/other/osu_allreduce MODES="hlorun direct" bench/osu_allreduce.sh
#
# Modes (service/examples/osu_allreduce.rs says exactly what each times):
#   hlorun           the argument stays on the device; each call runs the
#                    program on it and drops the result (no upload, no download)
#   hlorun-literals  each call also uploads the argument and downloads the result
#   direct           MPI_Allreduce (MPI_SUM) between two buffers allocated once
#
# HLORUN_MPI_TWO_PHASE_BYTES=never (or a byte count) moves the point from which
# an all-reduce goes in two phases (docs/distributed.md), to find the crossover.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -z "${BIN:-}" ]; then
  cargo build --release -p service --features mpi --example osu_allreduce
  BIN=${CARGO_TARGET_DIR:-target}/release/examples/osu_allreduce
fi
ROUNDS=${ROUNDS:-2}
MODES=${MODES:-hlorun hlorun-literals direct}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
for round in $(seq "$ROUNDS"); do
  for np in 2 4; do
    for mode in $MODES; do
      mpirun --oversubscribe -np "$np" "$BIN" "$mode" >"$OUT/$np.$mode.$round"
    done
  done
done
for np in 2 4; do
  echo "== $np ranks (median of $ROUNDS rounds, us per call)"
  python3 - "$OUT" "$np" "$ROUNDS" $MODES <<'PY'
import statistics, sys
out, np_, rounds, modes = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4:]
times = {}
for m in modes:
    for r in range(1, rounds + 1):
        for line in open(f"{out}/{np_}.{m}.{r}"):
            b, us = line.split()
            times.setdefault((m, int(b)), []).append(float(us))
sizes = sorted({b for _, b in times})
ratios = [m for m in modes if m != "direct"] if "direct" in modes else []
print(f"{'bytes':>10}" + "".join(f"{m:>17}" for m in modes) + "".join(f"{m + '/direct':>24}" for m in ratios))
for b in sizes:
    med = {m: statistics.median(times[(m, b)]) for m in modes}
    print(f"{b:>10}" + "".join(f"{med[m]:>17.2f}" for m in modes)
          + "".join(f"{med[m] / med['direct']:>24.2f}" for m in ratios))
PY
done
