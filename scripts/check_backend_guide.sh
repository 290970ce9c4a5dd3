#!/usr/bin/env bash
# Checks docs/writing-a-backend.md the way a hardware team would use it: the
# out-of-tree backend "Toy" (scripts/backend_guide_check, written by following
# the guide) is copied to a temporary folder outside this repository, built
# against this checkout, and must stay under 150 lines of its own and pass the
# whole conformance corpus. Reuses this checkout's target directory, so after
# `cargo test --workspace` it builds only the Toy crate.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp -r "$repo/scripts/backend_guide_check/." "$tmp/"
sed -i "s|@REPO@|$repo|g" "$tmp/Cargo.toml"
cp "$repo/Cargo.lock" "$tmp/"
# The same build profiles as the workspace, so the Toy build reuses what
# `cargo test --workspace` already compiled instead of building every
# dependency a second time (and doubling the disk a test run needs).
sed -n '/^\[profile/,$p' "$repo/Cargo.toml" >>"$tmp/Cargo.toml"
# Outside its own workspace this checkout's crates count as dependencies, which
# the "*" override builds optimised and without line tables; give them back the
# members' settings so their compiled form is reused too.
for member in $(cd "$repo" && cargo metadata --no-deps --format-version 1 \
    | python3 -c 'import json,sys; print(" ".join(p["name"] for p in json.load(sys.stdin)["packages"]))'); do
  printf '\n[profile.dev.package.%s]\nopt-level = 0\ndebug = "line-tables-only"\n' "$member" >>"$tmp/Cargo.toml"
done
lines=$(grep -c '' "$tmp/src/lib.rs")
if [ "$lines" -ge 150 ]; then
  echo "the Toy backend has $lines lines of its own; the guide promises under 150" >&2
  exit 1
fi
echo "Toy backend: $lines lines"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$repo/target}"
CORPUS_DIR="$repo/tests/conformance" cargo test --manifest-path "$tmp/Cargo.toml" -- --nocapture
# The guide's checklist, with the two-line `toyrun` binary (hlorun + Toy).
toyrun() { cargo run -q --manifest-path "$tmp/Cargo.toml" --bin toyrun -- "$@"; }
toyrun platforms | grep -E '^Toy +.*available'
toyrun run "$repo/examples/softmax.hlo" --platform toy
toyrun conformance --platform toy --corpus "$repo/tests/conformance" --json >"$tmp/report.jsonl"
runs=$(grep -c '' "$tmp/report.jsonl")
passes=$(grep -c '"status": *"pass"' "$tmp/report.jsonl" || true)
echo "toyrun conformance: $passes of $runs runs pass"
if [ "$runs" -lt 80 ] || [ "$passes" != "$runs" ]; then
  echo "expected every run of the corpus to pass on Toy" >&2
  exit 1
fi
