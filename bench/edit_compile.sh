#!/usr/bin/env bash
# The edit-compile loop: touch one file, time `cargo build --release --bin hlorun`.
#
#   bench/edit_compile.sh OLD_CHECKOUT NEW_CHECKOUT [ROUNDS]
#
# Each checkout is a worktree of this repository with its own target directory.
# For each kind of edit (a Host kernel, an HLO pass, a platform contract) the two
# checkouts are timed alternately, round by round, so that a shared machine's
# drift hits both alike. Each timing is preceded by an untimed build, so only the
# rebuild the touch causes is measured. Paths differ between layouts: the old one
# kept the passes and the contracts' device traits in platform-api.
set -euo pipefail
old=$1 new=$2 rounds=${3:-1}
pick() { # the first of the candidate paths that exists in checkout $1
  local dir=$1; shift
  for f in "$@"; do [ -e "$dir/$f" ] && { echo "$f"; return; }; done
  echo "no file of: $*" >&2; exit 1
}
edits=(
  "kernel:platform-host/src/kernels/sort.rs"
  "pass:hlo/passes/src/simplify.rs platform-api/src/passes/simplify.rs"
  "contract:platform-api/src/device.rs platform-api/src/executor.rs"
)
printf 'round\tedit\tcheckout\tseconds\n'
for r in $(seq 1 "$rounds"); do
  for e in "${edits[@]}"; do
    what=${e%%:*}
    for dir in "$old" "$new"; do
      # shellcheck disable=SC2086
      f=$(pick "$dir" ${e#*:})
      (cd "$dir" && cargo build --release --bin hlorun >/dev/null 2>&1)
      touch "$dir/$f"
      s=$(date +%s.%N)
      (cd "$dir" && cargo build --release --bin hlorun >/dev/null 2>&1)
      t=$(date +%s.%N)
      printf '%s\t%s\t%s\t%.0f\n' "$r" "$what" "$dir" "$(echo "$t - $s" | bc)"
    done
  done
done
