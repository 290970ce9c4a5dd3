#!/usr/bin/env bash
# The sharded JAX programs of tests/sharded under mpirun
# (`hlorun run ... --collectives mpi`), one device per process (2 and 4 ranks)
# and two per process (a 4-device program on 2 ranks, a 2-device one on 1):
# rank 0's global results must equal the one-process run's bit for bit (the
# one-process run is checked against JAX's results by `cargo test -p tests
# sharded::`). Then a program whose groups lie inside and across processes,
# on 1, 2 and 4 ranks, and the failure cases: a world size that does not
# divide the devices is an error before anything runs, and a device that
# fails ends the whole job (MPI_Abort) within a bounded time, naming the rank
# (and the device, when a rank runs several).
#
#   tests/sharded/run_mpi.sh path/to/hlorun     (an hlorun built with --features mpi)
set -euo pipefail
HLORUN=$(realpath "${1:?usage: run_mpi.sh HLORUN}")
cd "$(dirname "$0")"
# Containers run CI as root; Open MPI refuses root unless told.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
MPIRUN=(mpirun --oversubscribe)
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# The reduction of the programs written below.
ADD='add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}'

# same_bits LABEL "RANKS..." PROGRAM ARGS...: `hlorun run PROGRAM ARGS...` on
# the Host and the Interpreter, under mpirun on each number of ranks, must
# write the files of the one-process run, bit for bit.
same_bits() {
  local label=$1 rank_counts=$2 platform ranks
  shift 2
  for platform in host interpreter; do
    rm -rf "$WORK/local"
    "$HLORUN" run -p "$platform" "$@" --out "$WORK/local" >/dev/null \
      || { fail "$label $platform: one-process run"; continue; }
    for ranks in $rank_counts; do
      rm -rf "$WORK/mpi"
      if ! timeout 120 "${MPIRUN[@]}" -np "$ranks" "$HLORUN" run -p "$platform" "$@" \
          --collectives mpi --out "$WORK/mpi" >"$WORK/log" 2>&1; then
        fail "$label $platform: mpirun -np $ranks"; tail -5 "$WORK/log"; continue
      fi
      if diff -r "$WORK/local" "$WORK/mpi" >"$WORK/diff"; then
        echo "ok: $label on $platform, $ranks rank(s)"
      else
        fail "$label $platform, $ranks rank(s): differs from the one-process run"; head -5 "$WORK/diff"
      fi
    done
  done
}

for case in */; do
  case=${case%/}
  [ -f "$case/case.json" ] || continue
  devices=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['devices'])" "$case/case.json")
  mapfile -t shardings < <(python3 -c "import json,sys; [print(s) for s in json.load(open(sys.argv[1]))['out_shardings']]" "$case/case.json")
  outs=()
  for s in "${shardings[@]}"; do outs+=(--out-sharding "$s"); done
  same_bits "$case" "$devices $((devices / 2))" "$case/optimized.hlo" "$case"/arg*.npy "${outs[@]}"
done

# Groups inside a process and across processes in one program (on 2 ranks of
# two devices, {0,1} and {2,3} are local, {0,2} and {1,3} span both, as do a
# permute, an all-to-all and the asynchronous pairs), with values whose sums
# depend on the order: 1, 2 and 4 ranks must give the one-process run's bits.
cat >"$WORK/groups.hlo" <<HLO
HloModule groups, num_partitions=4

$ADD

ENTRY e {
  p = f32[3] parameter(0), sharding={devices=[4]<=[4]}
  inside = f32[3] all-reduce(p), channel_id=1, replica_groups={{0,1},{2,3}}, use_global_device_ids=true, to_apply=add
  across = f32[3] all-reduce(inside), channel_id=2, replica_groups={{0,2},{1,3}}, use_global_device_ids=true, to_apply=add
  mixed = f32[3] all-reduce(p), channel_id=3, replica_groups={{3,1,2,0}}, use_global_device_ids=true, to_apply=add
  moved = f32[3] collective-permute(p), channel_id=4, source_target_pairs={{0,3},{3,1},{1,2},{2,0}}
  gathered = f32[6] all-gather(moved), channel_id=5, replica_groups={{1,0},{3,2}}, dimensions={0}, use_global_device_ids=true
  wide = f32[12] all-gather(p), channel_id=6, replica_groups={{0,2,1,3}}, dimensions={0}, use_global_device_ids=true
  scattered = f32[3] reduce-scatter(wide), channel_id=7, replica_groups={{2,0,3,1}}, dimensions={0}, use_global_device_ids=true, to_apply=add
  swapped = f32[12] all-to-all(wide), channel_id=8, replica_groups={{0,3},{1,2}}, dimensions={0}
  started = f32[3] all-reduce-start(p), channel_id=9, replica_groups={{1,2},{3,0}}, use_global_device_ids=true, to_apply=add
  reduced = f32[3] all-reduce-done(started)
  sent = (f32[3], f32[3], u32[], u32[]) collective-permute-start(inside), channel_id=10, source_target_pairs={{0,1},{1,2},{2,3}}
  shifted = f32[3] collective-permute-done(sent)
  ROOT t = (f32[3], f32[3], f32[3], f32[6], f32[3], f32[12], f32[3], f32[3]) tuple(inside, across, mixed, gathered, scattered, swapped, reduced, shifted)
}
HLO
python3 -c "import numpy as np; r = np.random.default_rng(7); \
np.save('$WORK/g.npy', (r.standard_normal(12) * 10.0 ** r.integers(-6, 7, 12)).astype(np.float32))"
groups_outs=(--out-sharding '{devices=[4]<=[4]}' --out-sharding '{replicated}' --out-sharding '{replicated}')
for _ in 1 2 3 4 5; do groups_outs+=(--out-sharding '{devices=[4]<=[4]}'); done
same_bits "groups inside and across processes" "1 2 4" "$WORK/groups.hlo" "$WORK/g.npy" "${groups_outs[@]}"

# Eight devices: on 4 ranks of two devices a rank meets three others (its
# message to each carries its members of every group that spans the two: with
# the groups of `crossed`, a different device to each of two ranks), on 2
# ranks of four the pairs {0,1}..{6,7} and the quarters stay inside a rank.
cat >"$WORK/groups8.hlo" <<HLO
HloModule groups8, num_partitions=8

$ADD

ENTRY e {
  p = f32[4] parameter(0), sharding={devices=[8]<=[8]}
  pairs = f32[4] all-reduce(p), channel_id=1, replica_groups={{0,1},{2,3},{4,5},{6,7}}, use_global_device_ids=true, to_apply=add
  strided = f32[4] all-reduce(pairs), channel_id=2, replica_groups={{0,4},{1,5},{2,6},{3,7}}, use_global_device_ids=true, to_apply=add
  mixed = f32[4] all-reduce(p), channel_id=3, replica_groups={{7,5,3,1,6,4,2,0}}, use_global_device_ids=true, to_apply=add
  back = f32[4] collective-permute(p), channel_id=4, source_target_pairs={{0,7},{7,6},{6,5},{5,4},{4,3},{3,2},{2,1},{1,0}}
  quarters = f32[16] all-gather(back), channel_id=5, replica_groups={{3,2,1,0},{7,6,5,4}}, dimensions={0}, use_global_device_ids=true
  swapped = f32[16] all-to-all(quarters), channel_id=6, replica_groups={{0,2,4,6},{1,3,5,7}}, dimensions={0}
  scattered = f32[4] reduce-scatter(swapped), channel_id=7, replica_groups={{6,1,4,3},{0,7,2,5}}, dimensions={0}, use_global_device_ids=true, to_apply=add
  crossed = f32[8] all-gather(p), channel_id=8, replica_groups={{2,0},{4,1},{3,6},{7,5}}, dimensions={0}, use_global_device_ids=true
  ROOT t = (f32[4], f32[4], f32[4], f32[16], f32[16], f32[4], f32[8]) tuple(pairs, strided, mixed, quarters, swapped, scattered, crossed)
}
HLO
python3 -c "import numpy as np; r = np.random.default_rng(8); \
np.save('$WORK/g8.npy', (r.standard_normal(32) * 10.0 ** r.integers(-6, 7, 32)).astype(np.float32))"
groups8_outs=()
for _ in 1 2 3 4 5 6 7; do groups8_outs+=(--out-sharding '{devices=[8]<=[8]}'); done
same_bits "eight devices" "1 2 4 8" "$WORK/groups8.hlo" "$WORK/g8.npy" "${groups8_outs[@]}"

# Two replicas of two partitions: devices r*2+p on their ranks (replica-id
# tells them apart), an all-reduce across replicas ({0,2} and {1,3}, across
# the two ranks of two devices) and one over every device; global arrays, and
# per-device arguments and results.
cat >"$WORK/replicas.hlo" <<HLO
HloModule replicas, replica_count=2, num_partitions=2

$ADD

ENTRY e {
  p = f32[3] parameter(0), sharding={devices=[2]<=[2]}
  id = u32[] replica-id()
  r = f32[] convert(id)
  rs = f32[3] broadcast(r), dimensions={}
  q = f32[3] add(p, rs)
  replicas = f32[3] all-reduce(q), replica_groups={}, to_apply=add
  everyone = f32[3] all-reduce(q), channel_id=1, replica_groups={}, to_apply=add
  ROOT t = (f32[3], f32[3], f32[3]) tuple(q, replicas, everyone)
}
HLO
python3 -c "import numpy as np; r = np.random.default_rng(3); \
x = (r.standard_normal(6) * 10.0 ** r.integers(-6, 7, 6)).astype(np.float32); np.save('$WORK/r.npy', x); \
[np.save('$WORK/r%d.npy' % d, x[3 * (d % 2):3 * (d % 2) + 3] * (d + 1)) for d in range(4)]"
same_bits "replicas x partitions" "1 2 4" "$WORK/replicas.hlo" "$WORK/r.npy" \
  --out-sharding '{devices=[2]<=[2]}' --out-sharding '{devices=[2]<=[2]}' --out-sharding '{replicated}'
same_bits "replicas x partitions, per device" "1 2 4" "$WORK/replicas.hlo" "$WORK"/r[0-3].npy --per-device

# All-reduces of one f32 array, which the Host runs straight between the
# operand and result buffers (Transport::all_reduce_into): one round below
# 64 KiB (whole, or in two pieces up to 8000 bytes: f32[1500]; with 7-byte
# pieces, pieces that split elements), two phases from it (chunks that do not
# divide evenly, and, with the threshold at 0, empty chunks); on 2 ranks up to
# 8000 bytes (twice the piece size: f32[3], f32[1000], f32[1500]) in two
# phases by MPI_Sendrecv, and f32[3000] whole in one round; with values whose
# sum depends on the order: the MPI run must equal the one-process run bit for
# bit. A spec is elements:two-phase-from:piece-bytes.
for np_ in 2 4; do
  for spec in 3:0:4000 3:65536:4000 3:65536:7 1000:65536:4000 1500:65536:4000 3000:65536:4000 100003:65536:4000; do
    IFS=: read -r m from piece <<<"$spec"
    prog="$WORK/allreduce_${np_}_$m.hlo"
    ids=$(seq -s, 0 $((np_ - 1)))
    cat >"$prog" <<HLO
HloModule allreduce, num_partitions=$np_

$ADD

ENTRY e {
  p = f32[$m] parameter(0), sharding={devices=[$np_]<=[$np_]}
  ROOT r = f32[$m] all-reduce(p), channel_id=1, replica_groups={{$ids}}, use_global_device_ids=true, to_apply=add
}
HLO
    python3 -c "import numpy as np; r = np.random.default_rng($m); \
np.save('$WORK/ar.npy', (r.standard_normal($np_ * $m) * 10.0 ** r.integers(-6, 7, $np_ * $m)).astype(np.float32))"
    "$HLORUN" run -p host "$prog" "$WORK/ar.npy" --out-sharding '{replicated}' --out "$WORK/ar-local" >/dev/null \
      || { fail "all-reduce $np_ x $m: one-process run"; continue; }
    if ! HLORUN_MPI_TWO_PHASE_BYTES=$from HLORUN_MPI_PIECE_BYTES=$piece timeout 120 "${MPIRUN[@]}" -np "$np_" "$HLORUN" run -p host "$prog" \
        "$WORK/ar.npy" --out-sharding '{replicated}' --collectives mpi --out "$WORK/ar-mpi" >"$WORK/log" 2>&1; then
      fail "all-reduce $np_ x $m: mpirun"; tail -5 "$WORK/log"; continue
    fi
    if cmp -s "$WORK/ar-local/out0.npy" "$WORK/ar-mpi/out0.npy"; then
      echo "ok: all-reduce of f32[$m] on $np_ ranks (two phases from $from bytes, pieces of $piece)"
    else
      fail "all-reduce of f32[$m] on $np_ ranks (two phases from $from bytes, pieces of $piece) differs from the one-process run"
    fi
    rm -rf "$WORK/ar-local" "$WORK/ar-mpi"
  done
done

# A world size that does not divide the program's devices: an error before
# running (every rank finds it; mpirun may end the others before they print),
# naming the sizes that would do.
if timeout 60 "${MPIRUN[@]}" -np 3 "$HLORUN" run psum_shard_map/optimized.hlo psum_shard_map/arg*.npy \
    --collectives mpi >"$WORK/log" 2>&1; then
  fail "a 3-rank world for a 4-device program succeeded"
elif ! grep -q "mpirun -np 4 (one device per process), or -np 1 or -np 2" "$WORK/log"; then
  fail "the world-size error does not say what to run"; tail -5 "$WORK/log"
elif ! grep -q "rank [0-2]: the program runs on 4 device(s), which 3 MPI process(es)" "$WORK/log"; then
  fail "the world-size error does not name the rank and the sizes"; tail -5 "$WORK/log"
else
  echo "ok: a 3-rank world for a 4-device program is refused"
fi

# Device 1 fails (its branch runs an op the Interpreter lacks) while the
# others wait at the all-reduce after it: the job must end at once, naming the
# rank, and the device where a rank runs several (on 2 ranks, device 0 waits
# for it in its process and devices 2 and 3 on rank 1).
python3 -c "import numpy as np; np.save('$WORK/x.npy', np.arange(4, dtype=np.float32))"
expect_abort() { # RANKS PATTERN: the log must match PATTERN
  local start=$SECONDS
  if timeout 60 "${MPIRUN[@]}" -np "$1" "$HLORUN" run -p interpreter mpi/fail_on_partition_1.hlo "$WORK/x.npy" \
      --collectives mpi >"$WORK/log" 2>&1; then
    fail "a failing device did not fail the job on $1 ranks"
  elif [ $((SECONDS - start)) -ge 30 ]; then
    fail "a failing device took $((SECONDS - start)) s to end the job on $1 ranks"
  elif ! grep -q "$2" "$WORK/log"; then
    fail "the log of a failing device on $1 ranks does not say '$2'"; tail -5 "$WORK/log"
  else
    echo "ok: a failing device ends the job on $1 ranks in $((SECONDS - start)) s"
  fi
}
expect_abort 4 "rank 1: error: .*infeed"
expect_abort 2 "rank 0: error: device 1 (replica 0, partition 1): .*infeed"

[ "$failures" -eq 0 ] || { echo "$failures failure(s)"; exit 1; }
echo "all MPI checks passed"
