#!/bin/bash
# Times one program under several `hlorun` binaries, alternating between them
# round by round so that the machine's drift (±30–50% over minutes on a shared
# machine) hits every binary alike. Prints, per binary, the mean of the round
# medians and the smallest minimum.
#
# Usage: bench/ab_hlorun.sh PROGRAM.hlo ROUNDS CPUS BINARY...
#   CPUS is a taskset list: 0 for one core, 0,1 for two.
#   ITERS=N (environment, default 20) is passed to `hlorun bench --iters`.
# Example (last build against a saved one, two cores, 8 rounds):
#   cp target/release/hlorun /tmp/hlorun_old   # before the change
#   bench/ab_hlorun.sh ../shared/bench/elementwise_4m.hlo 8 0,1 /tmp/hlorun_old target/release/hlorun
set -euo pipefail
if [ $# -lt 4 ]; then
  sed -n '2,12p' "$0" >&2
  exit 2
fi
program=$1 rounds=$2 cpus=$3
shift 3
for _ in $(seq "$rounds"); do
  for bin in "$@"; do
    printf '%s ' "$bin"
    taskset -c "$cpus" "$bin" bench "$program" --iters "${ITERS:-20}" --json |
      python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["execute_ms_median"], d["execute_ms_min"])'
  done
done | awk '{n[$1]++; s[$1]+=$2; if (!($1 in m) || $3 < m[$1]) m[$1]=$3}
  END {for (k in n) printf "%s  mean of medians %.3f ms  min %.3f ms  (%d rounds)\n", k, s[k]/n[k], m[k], n[k]}' | sort
