#!/bin/sh
# Seeds fuzz/corpus/parse_hlo with the conformance programs and the parser's
# regression cases. Run from the repository root, then:
#   cargo +nightly fuzz run parse_hlo -- -dict=fuzz/hlo.dict
set -e
mkdir -p fuzz/corpus/parse_hlo
for f in tests/conformance/*/*.hlo; do
    case_name=$(basename "$(dirname "$f")")
    cp "$f" "fuzz/corpus/parse_hlo/${case_name}_$(basename "$f")"
done
for f in platform-api/tests/data/parser_regressions/*.hlo platform-api/tests/data/parser_roundtrip/*.hlo; do
    [ -e "$f" ] && cp "$f" fuzz/corpus/parse_hlo/
done
echo "seeded $(ls fuzz/corpus/parse_hlo | wc -l) files"
