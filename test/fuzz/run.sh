#!/usr/bin/env bash
# test/fuzz/run.sh SECONDS [TARGET...]: build the fuzz targets (ASan and
# UBSan; libFuzzer when clang is installed, else gcc with the random-input
# driver.c) and run each for SECONDS (default 60), every target unless
# some are named.  Corpora persist in test/fuzz/corpus/TARGET.  Exits
# non-zero on the first failure; a crashing input is left as
# test/fuzz/crash-*.  CI (test/run.sh) runs a few seconds of each.
set -euo pipefail
cd "$(dirname "$0")"
seconds=${1:-60}
shift || true
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(fuzz_text fuzz_input fuzz_minhash fuzz_sentences fuzz_index_pages)
make -s "${targets[@]}" >&2
for t in "${targets[@]}"; do
	mkdir -p "corpus/$t"
	echo "fuzz: $t for ${seconds}s" >&2
	# -rss_limit_mb: the targets never need much; a leak or a blow-up fails
	ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
		"./$t" -max_total_time="$seconds" -max_len=4096 -rss_limit_mb=1024 \
		-print_final_stats=0 "corpus/$t" $([ -d "seeds/$t" ] && echo "seeds/$t") >"corpus/$t.log" 2>&1 ||
		{ tail -40 "corpus/$t.log" >&2; echo "fuzz: $t FAILED" >&2; exit 1; }
	tail -1 "corpus/$t.log" >&2
done
