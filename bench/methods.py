#!/usr/bin/python3
# bench/methods.py: owns the comparison of near-duplicate METHODS (sentence
# fingerprints' file): simhash (distance <= 3), sentence fingerprints
# (sharing >= 1 of sentence_hashes(body)) and, when the functions exist in
# the installed extension, MinHash (minhash_jaccard(minhash(a), minhash(b))
# >= 0.5), on the labelled corpus of bench/corpus.py, per language and per
# variant kind, with the same definitions as bench/quality.py:
#   positive pair  both documents come from the same original
#   recall(L)      fraction of (original, variant of kind L) pairs matched
#   precision(L)   among matched pairs involving a variant of kind L, the
#                  fraction that are positive
#   FP/1M          fraction of unrelated pairs matched, times one million
# Also sweeps sentence_hashes(body, n, min_length) over n and min_length
# (--sweep) to justify the defaults.
# Writes bench/data/methods.txt and bench/data/methods.json.
#
# Run through bench/methods.sh (packages, build, throwaway cluster); by hand:
#   /usr/bin/python3 bench/methods.py [--sweep] [--minhash-threshold 0.5]
# with PGHOST/PGPORT/PGUSER pointing at a database where simhash is installed.
import argparse
import collections
import json
import os
import sys
import time

import numpy as np
import psycopg

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import quality  # noqa: E402  (load_corpus, label_order, popcount64, fmt_table)

LANGS = ("en", "zh")
SWEEP_N = (1, 3, 5, 8)
SWEEP_MIN = (1, 10, 20, 30, 50)
SHORT_MIN = (1, 5, 10, 15, 20, 25, 30, 40)


def simhash_pairs(fp, max_distance, chunk=512):
    """(i, j) with i < j and Hamming distance <= max_distance."""
    fpu = fp.view(np.uint64)
    n = len(fpu)
    out_i, out_j = [], []
    for a in range(0, n, chunk):
        b = min(n, a + chunk)
        d = quality.popcount64(fpu[a:b, None] ^ fpu[None, :])
        ii, jj = np.nonzero(d <= max_distance)
        ii = ii + a
        keep = jj > ii
        out_i.append(ii[keep])
        out_j.append(jj[keep])
    return np.concatenate(out_i), np.concatenate(out_j)


def shared_pairs(sets, min_shared, max_df=None):
    """(i, j) with i < j whose hash sets share at least min_shared hashes
    (hashes found in more than max_df documents ignored)."""
    post = collections.defaultdict(list)
    for i, s in enumerate(sets):
        for h in s:
            post[h].append(i)
    shared = collections.Counter()
    for docs in post.values():
        if len(docs) > 1 and (max_df is None or len(docs) <= max_df):
            for x in range(len(docs)):
                for y in range(x + 1, len(docs)):
                    shared[(docs[x], docs[y])] += 1
    pairs = [p for p, c in shared.items() if c >= min_shared]
    if not pairs:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    a = np.array(pairs, dtype=np.int64)
    return a[:, 0], a[:, 1]


def evaluate(pi, pj, lab, grp, labels):
    """Precision/recall per variant label, FP/1M, from the matched pairs of one language."""
    n = len(lab)
    orig = labels.index("orig")
    pos = grp[pi] == grp[pj]
    res = {}
    for k, name in enumerate(labels):
        if name == "orig":
            continue
        nvar = int((lab == k).sum())
        if nvar == 0:
            continue
        involves = (lab[pi] == k) | (lab[pj] == k)
        rec_pairs = pos & (((lab[pi] == orig) & (lab[pj] == k)) | ((lab[pi] == k) & (lab[pj] == orig)))
        matched = int(involves.sum())
        p = float((involves & pos).sum()) / matched if matched else 1.0
        r = float(rec_pairs.sum()) / nvar
        res[name] = {"precision": p, "recall": r, "f1": 2 * p * r / (p + r) if p + r > 0 else 0.0,
                     "matched": matched, "variants": nvar}
    sizes = np.bincount(grp)
    positives = int((sizes * (sizes - 1) // 2).sum())
    negatives = n * (n - 1) // 2 - positives
    fp = int((~pos).sum())
    res["_unrelated"] = {"pairs": negatives, "matched": fp, "fp_per_million": fp / max(1, negatives) * 1e6}
    return res


def fetch(conn, sql):
    with conn.cursor() as cur:
        cur.execute(sql)
        return [r[1] for r in cur.fetchall()]


def has_minhash(conn):
    with conn.cursor() as cur:
        cur.execute("SELECT count(DISTINCT proname) FROM pg_proc WHERE proname IN ('minhash', 'minhash_jaccard')")
        return cur.fetchone()[0] == 2


def minhash_pairs(conn, lang_ids, threshold):
    """Pairs (as indices into lang_ids) with minhash_jaccard >= threshold, computed in SQL."""
    with conn.cursor() as cur:
        cur.execute("CREATE TEMP TABLE IF NOT EXISTS mh AS SELECT id, lang, minhash(body) AS sig FROM quality_docs")
        cur.execute("SELECT a.id, b.id FROM mh a JOIN mh b ON a.lang = b.lang AND a.id < b.id "
                    "WHERE minhash_jaccard(a.sig, b.sig) >= %s", (threshold,))
        rows = cur.fetchall()
    index = {d: i for i, d in enumerate(lang_ids)}
    pairs = [(index[a], index[b]) for a, b in rows if a in index and b in index]
    if not pairs:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    a = np.array(pairs, dtype=np.int64)
    return a[:, 0], a[:, 1]


def short_texts(conn, path):
    """min_length on short texts: the distinct paragraphs of 1-300 characters
    of the big table; per min_length, the share that gets a fingerprint and
    the pairs of distinct paragraphs sharing one."""
    with conn.cursor() as cur:
        cur.execute("DROP TABLE IF EXISTS big, paragraphs")
        cur.execute("CREATE TABLE big (id int, lang text, body text)")
        with cur.copy("COPY big FROM STDIN WITH (FORMAT csv, HEADER true)") as cp:
            with open(path, "rb") as f:
                while True:
                    chunk = f.read(1 << 20)
                    if not chunk:
                        break
                    cp.write(chunk)
        cur.execute(r"""CREATE TABLE paragraphs AS
            SELECT lang, para FROM (SELECT lang, trim(p) AS para
                                    FROM big, regexp_split_to_table(body, '\n\s*\n') AS p) x
            WHERE length(para) BETWEEN 1 AND 300 GROUP BY lang, para""")
        res = {}
        for ml in SHORT_MIN:
            cur.execute("""SELECT lang, count(*), count(*) FILTER (WHERE cardinality(h) > 0)
                           FROM (SELECT lang, sentence_hashes(para, 5, %s) h FROM paragraphs) x GROUP BY lang""", (ml,))
            counts = {r[0]: (r[1], r[2]) for r in cur.fetchall()}
            cur.execute("""SELECT lang, sum(df * (df - 1) / 2) FROM
                           (SELECT lang, h, count(*)::bigint AS df FROM paragraphs, unnest(sentence_hashes(para, 5, %s)) h
                            GROUP BY lang, h) x GROUP BY lang""", (ml,))
            pairs = {r[0]: int(r[1]) for r in cur.fetchall()}
            for lang in LANGS:
                n, with_fp = counts[lang]
                res[(ml, lang)] = {"paragraphs": n, "with_fingerprint": with_fp, "pairs": pairs.get(lang, 0)}
        cur.execute("DROP TABLE big, paragraphs")
    conn.commit()
    return res


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", default=os.path.join(here, "data", "corpus_quality.jsonl"))
    ap.add_argument("--out", default=os.path.join(here, "data"))
    ap.add_argument("--sweep", action="store_true", help="also sweep sentence_hashes over n and min_length")
    ap.add_argument("--simhash-distance", type=int, default=3)
    ap.add_argument("--minhash-threshold", type=float, default=0.5)
    ap.add_argument("--max-df", type=int, default=50,
                    help="stop list: ignore fingerprints found in more than this many documents")
    args = ap.parse_args()
    t0 = time.time()
    conn = psycopg.connect("")
    rows = quality.load_corpus(conn, args.corpus)
    ids = np.array([r[0] for r in rows])
    langs = np.array([r[1] for r in rows])
    groups = np.array([r[2] for r in rows])
    labels = quality.label_order(sorted(set(r[3] for r in rows)))
    lab = np.array([labels.index(r[3]) for r in rows])
    var_labels = [l for l in labels if l != "orig"]
    head = "methods.py: %d documents (%s) from %s" % (
        len(rows), ", ".join("%s=%d" % (l, (langs == l).sum()) for l in LANGS),
        os.path.relpath(args.corpus, here + "/.."))
    print(head, flush=True)

    # method name -> (SQL, how pairs are matched)
    D = args.simhash_distance
    methods = [("simhash(body), distance <= %d" % D, "simhash(body)::bigint", ("hamming", D)),
               ("sentence_hashes(body), share >= 1", "sentence_hashes(body)", ("shared", 1)),
               ("sentence_hashes(body), share >= 2", "sentence_hashes(body)", ("shared", 2)),
               ("sentence_hashes(body), share >= 1 of those in <= %d documents" % args.max_df,
                "sentence_hashes(body)", ("shared_df", args.max_df))]
    if has_minhash(conn):
        methods.append(("minhash(body), jaccard >= %g" % args.minhash_threshold, None,
                        ("minhash", args.minhash_threshold)))
    else:
        print("  (no minhash()/minhash_jaccard() installed: MinHash column skipped)", flush=True)

    results, timing, empty = {}, {}, {}
    cache = {}
    for name, sql, (kind, param) in methods:
        t1 = time.time()
        if sql is not None and sql not in cache:
            cache[sql] = fetch(conn, "SELECT id, %s FROM quality_docs ORDER BY id" % sql)
        results[name] = {}
        for lang in LANGS:
            m = langs == lang
            if kind == "hamming":
                fp = np.array([v for v, keep in zip(cache[sql], m) if keep], dtype=np.int64)
                pi, pj = simhash_pairs(fp, param)
            elif kind == "shared":
                sets = [v for v, keep in zip(cache[sql], m) if keep]
                empty[(name, lang)] = sum(1 for s in sets if not s)
                pi, pj = shared_pairs(sets, param)
            elif kind == "shared_df":
                sets = [v for v, keep in zip(cache[sql], m) if keep]
                pi, pj = shared_pairs(sets, 1, param)
            else:
                pi, pj = minhash_pairs(conn, list(ids[m]), param)
            results[name][lang] = evaluate(pi, pj, lab[m], groups[m], labels)
        timing[name] = time.time() - t1
        print("  %-40s %5.1fs" % (name, timing[name]), flush=True)

    out = [head, "pairs are unordered and within one language; positives share an original; "
           "editN = N% of words (en) / CJK characters (zh) substituted, deleted or inserted; "
           "reorderN = N sentence pairs swapped; boilerN = N header + N footer lines added"]
    for lang in LANGS:
        hdr = ["method"] + var_labels + ["FP/1M"]
        trs = []
        for name, _, _ in methods:
            r = results[name][lang]
            trs.append([name] + ["%.2f/%.2f" % (r[l]["precision"], r[l]["recall"]) for l in var_labels]
                       + ["%.2g" % r["_unrelated"]["fp_per_million"]])
        out.append("")
        out.append(quality.fmt_table("precision/recall, %s (%d unrelated pairs; FP/1M = unrelated pairs matched "
                                     "per million: expected false matches per document in a 1M-document table)"
                                     % (lang, results[methods[0][0]][lang]["_unrelated"]["pairs"]), hdr, trs))
        for name, _, (kind, _) in methods[1:2]:
            if kind == "shared":
                out.append("  %s: %d of %d %s documents have no fingerprint" % (
                    name, empty[(name, lang)], int((langs == lang).sum()), lang))

    sweep = {}
    if args.sweep:
        for n in SWEEP_N:
            for ml in SWEEP_MIN:
                vals = fetch(conn, "SELECT id, sentence_hashes(body, %d, %d) FROM quality_docs ORDER BY id" % (n, ml))
                for lang in LANGS:
                    m = langs == lang
                    sets = [v for v, keep in zip(vals, m) if keep]
                    pi, pj = shared_pairs(sets, 1)
                    r = evaluate(pi, pj, lab[m], groups[m], labels)
                    r["_empty"] = sum(1 for s in sets if not s)
                    sweep[(n, ml, lang)] = r
        for lang in LANGS:
            hdr = ["n", "min_length"] + ["R " + l for l in var_labels] + ["min P", "FP/1M", "no fp"]
            trs = []
            for n in SWEEP_N:
                for ml in SWEEP_MIN:
                    r = sweep[(n, ml, lang)]
                    trs.append([n, ml] + ["%.2f" % r[l]["recall"] for l in var_labels]
                               + ["%.3f" % min(r[l]["precision"] for l in var_labels),
                                  "%.2g" % r["_unrelated"]["fp_per_million"], r["_empty"]])
            out.append("")
            out.append(quality.fmt_table("sentence_hashes(body, n, min_length), share >= 1, %s: recall per variant "
                                         "kind, the worst precision, FP/1M, documents without a fingerprint"
                                         % lang, hdr, trs))
        short = short_texts(conn, os.path.join(here, "data", "corpus_big.csv"))
        for lang in LANGS:
            hdr = ["min_length", "paragraphs", "with fingerprint", "pairs sharing one", "pairs per 1000 with"]
            trs = []
            for ml in SHORT_MIN:
                r = short[(ml, lang)]
                trs.append([ml, r["paragraphs"], "%.1f%%" % (100.0 * r["with_fingerprint"] / r["paragraphs"]),
                            r["pairs"], "%.0f" % (1000.0 * r["pairs"] / max(1, r["with_fingerprint"]))])
            out.append("")
            out.append(quality.fmt_table("short texts, %s: the distinct paragraphs of 1-300 characters of "
                                         "bench/data/corpus_big.csv; sentence_hashes(para, 5, min_length)" % lang,
                                         hdr, trs))
        sweep.update({("short", ml, lang): v for (ml, lang), v in short.items()})
    conn.close()
    out.append("")
    out.append("time: %.0f s" % (time.time() - t0))
    text = "\n".join(out) + "\n"
    print()
    print(text, end="")
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "methods.txt"), "w", encoding="utf-8") as f:
        f.write(text)
    with open(os.path.join(args.out, "methods.json"), "w", encoding="utf-8") as f:
        json.dump({"results": results,
                   "sweep": {",".join(str(x) for x in k): v for k, v in sweep.items()}}, f, indent=1)


if __name__ == "__main__":
    main()
