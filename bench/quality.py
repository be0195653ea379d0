#!/usr/bin/python3
# bench/quality.py: owns the near-duplicate quality evaluation (quality/corpus
# helper's file).  Loads the labelled corpus built by bench/corpus.py into a
# table, computes fingerprints in SQL for each feature configuration (CONFIGS),
# fetches them as int64 and computes all-pairs Hamming distances in numpy.
# Reports, per language and per edit kind/level, precision, recall and F1 at
# distance thresholds 0..6, and the false-positive rate of unrelated pairs.
# Writes bench/data/quality.txt (the tables) and bench/data/quality.json.
#
# Run through bench/quality.sh (packages, build, throwaway cluster); by hand:
#   /usr/bin/python3 bench/quality.py [--configs NAME,...] [--best N] [--detail NAME,...]
# with PGHOST/PGPORT/PGUSER pointing at a database where simhash is installed.
#
# Definitions (per language; pairs are unordered, both documents of that language):
#   positive pair  both documents come from the same original (original-variant
#                  and variant-variant of the same original)
#   recall(L, t)   fraction of (original, variant of level L) pairs at distance <= t
#   precision(L,t) among pairs (variant of level L, any other document) at
#                  distance <= t, the fraction that are positive
#   F1             2PR/(P+R); P is taken as 1 when no pair is within t
#   FPR(t)         fraction of all unrelated (negative) pairs at distance <= t
import argparse
import json
import os
import sys
import time

import numpy as np
import psycopg

# name -> SQL expression over column body (table alias q: q.lang is available)
# giving a simhash64.  Add a line to measure another feature set.
TOK = "simhash_tokens(body)"


def shingles(w):
    return "simhash_shingle(%s, %d)" % (TOK, w)


def weighted(features, weight):
    """Unique features with a weight computed from their count n in the document."""
    return ("(SELECT simhash_compute(array_agg(f ORDER BY f), array_agg((%s)::real ORDER BY f)) "
            "FROM (SELECT f, count(*) AS n FROM unnest(%s) AS f GROUP BY f) AS tf)" % (weight, features))


CONFIGS = {
    "w1": "simhash_compute(%s)" % shingles(1),
    "w2": "simhash_compute(%s)" % shingles(2),
    "w3": "simhash_compute(%s)" % shingles(3),
    "w4": "simhash_compute(%s)" % shingles(4),
    "w5": "simhash_compute(%s)" % shingles(5),
    "uni+w2": "simhash_compute(%s || %s)" % (TOK, shingles(2)),
    "uni+w3": "simhash_compute(%s || %s)" % (TOK, shingles(3)),
    "2uni+w2": "simhash_compute(%s || %s || %s)" % (TOK, TOK, shingles(2)),
    "w1 uniq": weighted(shingles(1), "1"),
    "w1 log(1+tf)": weighted(shingles(1), "ln(1 + n)"),
    "w1 sqrt(tf)": weighted(shingles(1), "sqrt(n)"),
    "w1 tf^0.75": weighted(shingles(1), "power(n::float8, 0.75)"),
    "w2 uniq": weighted(shingles(2), "1"),
    "w2 log(1+tf)": weighted(shingles(2), "ln(1 + n)"),
    "w3 log(1+tf)": weighted(shingles(3), "ln(1 + n)"),
    "uni+w2 log(1+tf)": weighted("%s || %s" % (TOK, shingles(2)), "ln(1 + n)"),
    "uni+w2 sqrt(tf)": weighted("%s || %s" % (TOK, shingles(2)), "sqrt(n)"),
    "uni+w3 log(1+tf)": weighted("%s || %s" % (TOK, shingles(3)), "ln(1 + n)"),
    "w1 bitlen(tf)": weighted(shingles(1), "1 + floor(log(2, n))"),
    "w1 1+bitlen(tf)": weighted(shingles(1), "2 + floor(log(2, n))"),
    "w1 2+bitlen(tf)": weighted(shingles(1), "3 + floor(log(2, n))"),
    "w1 bitlen(tf^2)": weighted(shingles(1), "1 + floor(log(2, n * n))"),
    "w1 isqrt(4tf)": weighted(shingles(1), "floor(sqrt(4 * n))"),
    "w1 log2(1+tf)": weighted(shingles(1), "log(2, 1 + n)"),
    "simhash(body)": "simhash(body)",
    "simhash(body; 2)": "simhash(body, 2)",
    "simhash(body; 3)": "simhash(body, 3)",
}

LANGS = ("en", "zh")
THRESHOLDS = range(0, 7)
MAXD = 65


def popcount64(x):
    """Per-element popcount of a uint64 array."""
    if hasattr(np, "bitwise_count"):
        return np.bitwise_count(x).astype(np.uint8)
    return POP8[x.view(np.uint8)].reshape(x.shape + (8,)).sum(axis=-1, dtype=np.uint8)


POP8 = np.array([bin(i).count("1") for i in range(256)], dtype=np.uint8)


def pair_counts(fp, group, lab, nlab, chunk=256):
    """counts[la, lb, pos, d] over unordered pairs i < j (la = lab[i], lb = lab[j])."""
    n = len(fp)
    fpu = fp.view(np.uint64)
    counts = np.zeros(nlab * nlab * 2 * MAXD, dtype=np.int64)
    jidx = np.arange(n)
    for a in range(0, n - 1, chunk):
        b = min(n, a + chunk)
        d = popcount64(fpu[a:b, None] ^ fpu[None, :])
        iidx = np.arange(a, b)
        upper = jidx[None, :] > iidx[:, None]
        pos = group[a:b, None] == group[None, :]
        key = ((lab[a:b, None] * nlab + lab[None, :]) * 2 + pos) * MAXD + d
        counts += np.bincount(key[upper].ravel(), minlength=counts.size)
    return counts.reshape(nlab, nlab, 2, MAXD)


def metrics(counts, labels):
    """Per label (not orig): precision, recall, f1 arrays over THRESHOLDS; plus FPR."""
    nlab = len(labels)
    sym = counts + counts.transpose(1, 0, 2, 3)
    for k in range(nlab):
        sym[k, k] = counts[k, k]  # same-label pairs were counted once
    cum = np.cumsum(sym, axis=-1)  # cum[..., t] = pairs with d <= t
    orig = labels.index("orig")
    res = {}
    for k, lab in enumerate(labels):
        if lab == "orig":
            continue
        # recall: positive (orig, L) pairs
        pos_total = sym[orig, k, 1].sum()
        rec = cum[orig, k, 1, list(THRESHOLDS)] / max(1, pos_total)
        # precision: all pairs involving L (each pair once: sym[k, :] covers every partner label)
        within_pos = cum[k, :, 1, :].sum(axis=0)[list(THRESHOLDS)]
        within_all = (cum[k, :, 0, :] + cum[k, :, 1, :]).sum(axis=0)[list(THRESHOLDS)]
        prec = np.where(within_all > 0, within_pos / np.maximum(within_all, 1), 1.0)
        f1 = np.where(prec + rec > 0, 2 * prec * rec / np.maximum(prec + rec, 1e-12), 0.0)
        neg_k = sym[k, :, 0].sum()
        fpr_k = cum[k, :, 0, :].sum(axis=0)[list(THRESHOLDS)] / max(1, neg_k)
        res[lab] = {"precision": prec.tolist(), "recall": rec.tolist(), "f1": f1.tolist(),
                    "fpr": fpr_k.tolist(), "positives": int(pos_total)}
    negc = counts[:, :, 0, :].sum(axis=(0, 1))
    fpr = np.cumsum(negc)[list(THRESHOLDS)] / max(1, negc.sum())
    res["_unrelated"] = {"fpr": fpr.tolist(), "pairs": int(negc.sum()),
                         "within": np.cumsum(negc)[list(THRESHOLDS)].tolist()}
    return res


def label_order(labels):
    def key(l):
        for i, k in enumerate(("orig", "edit", "reorder", "boiler")):
            if l.startswith(k):
                rest = l[len(k):]
                return (i, int(rest) if rest.isdigit() else 0)
        return (9, 0)
    return sorted(labels, key=key)


def load_corpus(conn, path):
    with conn.cursor() as cur:
        cur.execute("DROP TABLE IF EXISTS quality_docs")
        cur.execute("CREATE TABLE quality_docs (id int PRIMARY KEY, lang text NOT NULL, orig_id int NOT NULL, "
                    "kind text NOT NULL, level int NOT NULL, label text NOT NULL, body text NOT NULL)")
        with cur.copy("COPY quality_docs FROM STDIN") as cp:
            with open(path, encoding="utf-8") as f:
                for line in f:
                    r = json.loads(line)
                    cp.write_row((r["id"], r["lang"], r["orig_id"], r["kind"], r["level"], r["label"], r["body"]))
        cur.execute("ANALYZE quality_docs")
        cur.execute("SELECT id, lang, orig_id, label FROM quality_docs ORDER BY id")
        rows = cur.fetchall()
    conn.commit()
    return rows


def fingerprints(conn, expr):
    with conn.cursor() as cur:
        cur.execute("SELECT id, (%s)::bigint FROM quality_docs AS q ORDER BY id" % expr)
        rows = cur.fetchall()
    return np.array([r[1] for r in rows], dtype=np.int64)


def fmt_table(title, header, rows):
    widths = [max(len(str(x)) for x in col) for col in zip(header, *rows)]
    out = [title]
    out.append("  ".join(str(h).rjust(w) if i else str(h).ljust(w) for i, (h, w) in enumerate(zip(header, widths))))
    for r in rows:
        out.append("  ".join(str(x).rjust(w) if i else str(x).ljust(w) for i, (x, w) in enumerate(zip(r, widths))))
    return "\n".join(out)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", default=os.path.join(here, "data", "corpus_quality.jsonl"))
    ap.add_argument("--out", default=os.path.join(here, "data"))
    ap.add_argument("--configs", help="comma-separated subset of: " + ", ".join(CONFIGS))
    ap.add_argument("--best", type=int, default=3, help="how many of the best configs get full P/R tables")
    ap.add_argument("--detail", help="comma-separated configs that get full P/R tables (in addition to --best)")
    ap.add_argument("--threshold", type=int, default=3, help="distance for the summary table")
    args = ap.parse_args()
    configs = CONFIGS
    if args.configs:
        names = [c.strip() for c in args.configs.split(",")]
        bad = [c for c in names if c not in CONFIGS]
        if bad:
            sys.exit("unknown config(s): %s" % ", ".join(bad))
        configs = {c: CONFIGS[c] for c in names}
    T = args.threshold
    t0 = time.time()
    conn = psycopg.connect("")
    rows = load_corpus(conn, args.corpus)
    ids = np.array([r[0] for r in rows])
    langs = np.array([r[1] for r in rows])
    groups = np.array([r[2] for r in rows])
    all_labels = label_order(sorted(set(r[3] for r in rows)))
    lab_index = {l: i for i, l in enumerate(all_labels)}
    labs = np.array([lab_index[r[3]] for r in rows])
    log = ["quality.py: %d documents (%s) from %s" % (
        len(rows), ", ".join("%s=%d" % (l, (langs == l).sum()) for l in LANGS), os.path.relpath(args.corpus, here + "/.."))]
    print(log[0], flush=True)
    results = {}
    timing = {}
    for name, expr in configs.items():
        t1 = time.time()
        fp = fingerprints(conn, expr)
        t2 = time.time()
        results[name] = {}
        for lang in LANGS:
            m = langs == lang
            c = pair_counts(fp[m], groups[m], labs[m], len(all_labels))
            results[name][lang] = metrics(c, all_labels)
        timing[name] = (t2 - t1, time.time() - t2)
        print("  %-18s sql %5.1fs  numpy %5.1fs" % (name, t2 - t1, time.time() - t2), flush=True)
    conn.close()

    var_labels = [l for l in all_labels if l != "orig"]
    goal_labels = [l for l in ("edit1", "edit2", "edit3") if l in var_labels]

    def goal_score(name):  # worst F1 at d<=T over edit1..3, both languages
        return min(results[name][lang][l]["f1"][T] for lang in LANGS for l in goal_labels)

    ranked = sorted(configs, key=lambda n: -goal_score(n))
    out = []
    out.append(log[0])
    out.append("pairs are unordered and within one language; positives share an original; "
               "edits: editN = N% of words (en) / CJK characters (zh) substituted, deleted or inserted; "
               "reorderN = N sentence pairs swapped; boilerN = N header + N footer lines added")
    for lang in LANGS:
        hdr = ["config"] + var_labels + ["min<=3%", "FPR", "FP/1M"]
        trs = []
        for name in ranked:
            r = results[name][lang]
            trs.append([name] + ["%.3f" % r[l]["f1"][T] for l in var_labels]
                       + ["%.3f" % min(r[l]["f1"][T] for l in goal_labels),
                          "%.1e" % r["_unrelated"]["fpr"][T], "%.2g" % (r["_unrelated"]["fpr"][T] * 1e6)])
        out.append("")
        out.append(fmt_table("F1 at distance <= %d, %s (FPR = fraction of unrelated pairs within %d, of %d; "
                             "FP/1M = FPR x 1e6, unrelated matches expected per document in a 1M-document table)"
                             % (T, lang, T, results[ranked[0]][lang]["_unrelated"]["pairs"]), hdr, trs))
    out.append("")
    out.append("goal: F1 >= 0.85 at d <= %d for edit1..edit3 in en and zh; worst of those per config: " % T
               + ", ".join("%s %.3f" % (n, goal_score(n)) for n in ranked))
    detail = ranked[:args.best] + [c.strip() for c in (args.detail or "").split(",")
                                   if c.strip() in configs and c.strip() not in ranked[:args.best]]
    for name in detail:
        for lang in LANGS:
            r = results[name][lang]
            hdr = ["level"] + ["P/R d<=%d" % t for t in THRESHOLDS]
            trs = []
            for l in var_labels:
                trs.append([l] + ["%.2f/%.2f" % (r[l]["precision"][t], r[l]["recall"][t]) for t in THRESHOLDS])
            trs.append(["FPR unrelated"] + ["%.1e" % r["_unrelated"]["fpr"][t] for t in THRESHOLDS])
            out.append("")
            out.append(fmt_table("%s, %s: precision/recall by distance" % (name, lang), hdr, trs))
    out.append("")
    out.append("configurations (SQL over column body):")
    for name in ranked:
        out.append("  %-18s %s" % (name, configs[name]))
    out.append("")
    out.append("time: %.0f s total; " % (time.time() - t0)
               + ", ".join("%s %.1f+%.1fs" % (n, a, b) for n, (a, b) in timing.items()))
    text = "\n".join(out) + "\n"
    print()
    print(text, end="")
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "quality.txt"), "w", encoding="utf-8") as f:
        f.write(text)
    with open(os.path.join(args.out, "quality.json"), "w", encoding="utf-8") as f:
        json.dump({"thresholds": list(THRESHOLDS), "configs": configs, "results": results}, f, indent=1)


if __name__ == "__main__":
    main()
