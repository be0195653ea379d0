#!/usr/bin/python3
"""bench/minhash_texts.py: synthetic texts for bench/minhash.sh, as CSV
(id,kind,body) on stdout.

Words are drawn with their frequencies in the real corpus
(bench/data/corpus_big.csv, English documents; the 50,000 most frequent
lowercase ASCII words), 20-120 words per text (log-uniform), so that the
texts have the corpus' Zipfian word distribution and realistic lengths.
Rows 1..P are planted originals; rows P+1..5P are 4 near-duplicates of each
(variant v replaces 2v words: J of char 9-shingles from about 0.9 down);
the rest are independent.  Fixed seed: the output depends only on the
arguments and the corpus.

usage: minhash_texts.py ROWS [PLANTED]
"""
import collections
import csv
import math
import random
import re
import sys


def main():
    rows = int(sys.argv[1])
    planted = int(sys.argv[2]) if len(sys.argv) > 2 else 1000
    csv.field_size_limit(1 << 30)
    counts = collections.Counter()
    word = re.compile(r"[a-z]{2,}")
    with open("bench/data/corpus_big.csv", newline="", encoding="utf-8") as f:
        for rec in csv.DictReader(f):
            if rec["lang"] == "en":
                counts.update(word.findall(rec["body"].lower()))
    vocab = [w for w, _ in counts.most_common(50000)]
    cum = []
    total = 0
    for w in vocab:
        total += counts[w]
        cum.append(total)

    rng = random.Random(20240601)
    out = csv.writer(sys.stdout, lineterminator="\n")
    out.writerow(["id", "kind", "body"])

    def text():
        n = int(math.exp(rng.uniform(math.log(20), math.log(120))))
        return rng.choices(vocab, cum_weights=cum, k=n)

    originals = []
    for i in range(1, planted + 1):
        t = text()
        originals.append(t)
        out.writerow([i, "original", " ".join(t)])
    next_id = planted + 1
    for c, t in enumerate(originals):
        for v in range(1, 5):
            u = list(t)
            for _ in range(2 * v):
                u[rng.randrange(len(u))] = rng.choices(vocab, cum_weights=cum, k=1)[0]
            out.writerow([next_id, "variant", " ".join(u)])
            next_id += 1
    while next_id <= rows:
        out.writerow([next_id, "random", " ".join(text())])
        next_id += 1


if __name__ == "__main__":
    main()
