#!/bin/sh
# Seeds fuzz/corpus/parse_hlo with the conformance programs, the hand-written
# round-trip modules and the parser's regression cases. Run from the repository
# root; fuzz/README.md says how to run the fuzzer afterwards.
set -e
mkdir -p fuzz/corpus/parse_hlo
for f in tests/conformance/*/*.hlo; do
    case_name=$(basename "$(dirname "$f")")
    cp "$f" "fuzz/corpus/parse_hlo/${case_name}_$(basename "$f")"
done
for f in hlo/ir/tests/data/parser_regressions/*.hlo hlo/ir/tests/data/parser_roundtrip/*.hlo; do
    [ -e "$f" ] && cp "$f" fuzz/corpus/parse_hlo/
done
echo "seeded $(ls fuzz/corpus/parse_hlo | wc -l) files"
