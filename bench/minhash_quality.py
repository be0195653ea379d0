#!/usr/bin/python3
"""bench/minhash_quality.py: the choice of minhash()'s shingling, measured
on the labelled corpus of bench/corpus.py (run through
`bash bench/minhash.sh quality`).

For each shingling (char n-grams of 3, 5, 9, 13 characters, term n-grams of
1, 3, 5 words; 128 permutations, seed 0), every pair of documents of one
language whose estimate minhash_jaccard() reaches 0.5 or 0.8 is matched,
and scored with bench/methods.py's definitions (recall per variant kind,
precision, false matches per million unrelated pairs).  Prints a table per
language.
"""
import os
import sys
import time

import numpy as np
import psycopg

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import methods  # noqa: E402  (evaluate)
import quality  # noqa: E402  (load_corpus, label_order, fmt_table)

CONFIGS = [("char 3", "minhash(body, 3)"), ("char 5", "minhash(body, 5)"),
           ("char 9 (default)", "minhash(body)"), ("char 13", "minhash(body, 13)"),
           ("term 1", "minhash(body, 1, 'term')"), ("term 3", "minhash(body, 3, 'term')"),
           ("term 5", "minhash(body, 5, 'term')")]
THRESHOLDS = (0.5, 0.8)
SHOWN = ("edit1", "edit3", "edit5", "edit10", "edit20", "reorder3", "boiler3")


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    conn = psycopg.connect("")
    rows = quality.load_corpus(conn, os.path.join(here, "data", "corpus_quality.jsonl"))
    ids = np.array([r[0] for r in rows])
    langs = np.array([r[1] for r in rows])
    groups = np.array([r[2] for r in rows])
    labels = quality.label_order(sorted(set(r[3] for r in rows)))
    lab = np.array([labels.index(r[3]) for r in rows])
    shown = [l for l in SHOWN if l in labels]
    table = {}
    for name, expr in CONFIGS:
        t0 = time.time()
        with conn.cursor() as cur:
            cur.execute("DROP TABLE IF EXISTS mhq")
            cur.execute("CREATE TEMP TABLE mhq AS SELECT id, lang, %s AS sig FROM quality_docs" % expr)
            cur.execute("SELECT a.id, b.id, minhash_jaccard(a.sig, b.sig) FROM mhq a JOIN mhq b "
                        "ON a.lang = b.lang AND a.id < b.id WHERE minhash_jaccard(a.sig, b.sig) >= %s",
                        (min(THRESHOLDS),))
            found = cur.fetchall()
        for lang in ("en", "zh"):
            m = langs == lang
            index = {d: i for i, d in enumerate(ids[m])}
            for t in THRESHOLDS:
                pairs = [(index[a], index[b]) for a, b, e in found if e >= t and a in index and b in index]
                pi = np.array([p[0] for p in pairs], dtype=np.int64)
                pj = np.array([p[1] for p in pairs], dtype=np.int64)
                table[(name, t, lang)] = methods.evaluate(pi, pj, lab[m], groups[m], labels)
        print("  %-18s %5.1fs" % (name, time.time() - t0), flush=True)
    for lang in ("en", "zh"):
        hdr = ["shingles", "t"] + ["R " + l for l in shown] + ["min P", "FP/1M"]
        trs = []
        for name, _ in CONFIGS:
            for t in THRESHOLDS:
                r = table[(name, t, lang)]
                trs.append([name, "%.1f" % t] + ["%.2f" % r[l]["recall"] for l in shown]
                           + ["%.2f" % min(r[l]["precision"] for l in labels if l != "orig" and l in r),
                              "%.2g" % r["_unrelated"]["fp_per_million"]])
        print()
        print(quality.fmt_table("minhash_jaccard >= t, %s: recall per variant kind, lowest precision, "
                                "false matches per million unrelated pairs" % lang, hdr, trs))


if __name__ == "__main__":
    main()
