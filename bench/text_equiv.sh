#!/usr/bin/env bash
# bench/text_equiv.sh [REF [FILE...]]: the text fingerprints of this tree's
# core against those of git revision REF (default main), document by
# document: bench/text_bench.c --print, built against each core, over
# FILEs (default bench/data/corpus_big.csv, which bench/corpus.py builds)
# in 4 KB documents (cut anywhere, so split UTF-8 sequences too), for
# simhash and simhash_v2 at windows 1, 2, 3 and 5.  Any difference fails:
# a fingerprint never changes for the same input.
set -euo pipefail
cd "$(dirname "$0")/.."
ref=${1:-main}
shift || true
files=("$@")
[ ${#files[@]} -gt 0 ] || files=(bench/data/corpus_big.csv)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
mkdir "$out/ref"
git archive "$ref" src/core | tar -x -C "$out/ref"
for side in ref tree; do
	core=src/core
	[ $side = ref ] && core=$out/ref/src/core
	cc -O2 -std=gnu99 -I"$core" -o "$out/bench_$side" bench/text_bench.c \
		"$core/tokenizer.c" "$core/tfweight.c" "$core/vote.c"
done
docs=0
for f in "${files[@]}"; do
	for w in 1 2 3 5; do
		"$out/bench_ref" "$f" $w --print >"$out/a"
		"$out/bench_tree" "$f" $w --print >"$out/b"
		if ! cmp -s "$out/a" "$out/b"; then
			echo "DIFFERENT fingerprints: $f, window $w (first lines: ref, tree)"
			diff "$out/a" "$out/b" | head -6
			exit 1
		fi
		docs=$((docs + $(wc -l <"$out/a")))
	done
done
echo "text_equiv: $docs documents x (simhash, simhash_v2) identical to $ref"
