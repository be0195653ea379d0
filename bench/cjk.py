#!/usr/bin/python3
# bench/cjk.py: owns the near-duplicate recall / false-match evaluation of
# Chinese short passages.  Run through bench/cjk.sh.
#
# Corpora (one table each, fingerprints computed in SQL, distances in numpy):
#   short   bench/data/cjk_corpus.jsonl (bench/cjk_corpus.py): passages of
#           150-1,000 characters, zh and en, variants sub/ins/del/mix at
#           0.5-3 %, punct, swap, boiler
#   long    bench/data/corpus_quality.jsonl (bench/corpus.py, bench/quality.sh's
#           documents of 1-10 KB): variants edit1..edit30, reorder, boiler
# For each configuration (an SQL expression over body giving a simhash64;
# NULL counts as matching nothing) and corpus/language, at distance <= T (3):
#   recall of (original, variant) pairs, edits of <= 1 %, 1-3 %, <= 3 % of the
#   units (CJK characters in zh, words in en; unit edits only: substitutions,
#   insertions, deletions), by length band of the original (characters), and
#   per other variant kind; FP/1M = unrelated pairs (different originals, one
#   language) within T per million such pairs.
# --minhash adds what the docs recommend for short texts instead: MinHash
# candidates (minhash_pairs, LSH at an estimate >= 0.6) verified on the exact
# Jaccard similarity >= 0.7 of the texts' character n-grams (3 in zh, 9 in
# en), with the same recall and false-match measures on the short corpus.
#   /usr/bin/python3 bench/cjk.py [--configs before,after,...] [--candidates] [--minhash] [--threshold 3]
import argparse
import json
import os
import sys
import time

import numpy as np
import psycopg

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from quality import popcount64, fmt_table  # noqa: E402  (shared helpers)

# a single token of a script written without spaces (what simhash_v2 calls CJK)
CJK1 = "'^[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af\u0e00-\u0e7f]$'"
CJK2 = CJK1.replace("]$'", "] [\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af\u0e00-\u0e7f]$'")


def capped(k):
    """v1 features, CJK unigrams weighted min(count, k) (k = 0: count)."""
    w = "count" if k == 0 else "least(count, %d)" % k
    return ("(SELECT simhash_compute(array_agg(feature), array_agg((CASE WHEN feature ~ %s THEN %s "
            "ELSE weight END)::real)) FROM simhash_features(body) AS f)" % (CJK1, w))


CONFIGS = {
    "before": "simhash(body)",
    "after": "simhash_v2(body)",
}
CANDIDATES = {
    "cap4": capped(4),
    "cap8": capped(8),
    "cap12": capped(12),
    "cap16": capped(16),
    "linear": capped(0),
    "bigrams": ("(SELECT simhash_compute(array_agg(feature), array_agg(weight::real)) FROM ("
                "SELECT feature, weight FROM simhash_features(body, 2) WHERE feature ~ %s UNION ALL "
                "SELECT feature, weight FROM simhash_features(body, 1) WHERE feature !~ %s) AS f)" % (CJK2, CJK1)),
    "uni+bigrams": ("(SELECT simhash_compute(array_agg(feature), array_agg(weight::real)) FROM ("
                    "SELECT feature, weight FROM simhash_features(body, 2) WHERE feature ~ %s UNION ALL "
                    "SELECT feature, weight FROM simhash_features(body, 1)) AS f)" % CJK2),
    "window 2": "simhash(body, 2)",
}
UNIT_EDITS = ("sub", "ins", "del", "mix", "edit")
BANDS = [(0, 200), (200, 300), (300, 500), (500, 1000), (1000, 2000), (2000, 10 ** 9)]


def band_name(b):
    return "%d-%d" % b if b[1] < 10 ** 9 else ">=%d" % b[0]


def load(conn, name, path):
    """Rows as dicts with id, lang, orig_id, kind, rate, chars; the table cjk_<name>."""
    rows = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            r = json.loads(line)
            if "label" in r:  # bench/corpus.py's format
                kind = "orig" if r["kind"] == "orig" else ("edit" if r["kind"] == "edit" else r["label"])
                r = {"id": r["id"], "lang": r["lang"], "orig_id": r["orig_id"], "kind": kind,
                     "rate": r["level"] / 100.0 if kind == "edit" else 0.0, "body": r["body"]}
            r["chars"] = len(r["body"])
            rows.append(r)
    with conn.cursor() as cur:
        cur.execute("DROP TABLE IF EXISTS cjk_%s" % name)
        cur.execute("CREATE TABLE cjk_%s (id int PRIMARY KEY, body text NOT NULL)" % name)
        with cur.copy("COPY cjk_%s FROM STDIN" % name) as cp:
            for r in rows:
                cp.write_row((r["id"], r["body"]))
    conn.commit()
    for r in rows:
        del r["body"]
    return rows


def fingerprints(conn, table, expr):
    with conn.cursor() as cur:
        cur.execute("SELECT id, (%s)::bigint FROM %s ORDER BY id" % (expr, table))
        res = cur.fetchall()
    fp = np.array([0 if v is None else v for _, v in res], dtype=np.int64)
    null = np.array([v is None for _, v in res])
    return dict(zip((i for i, _ in res), range(len(res)))), fp, null


def false_matches(fp, null, groups, T, chunk=512):
    """Unrelated pairs (i < j, different groups, neither NULL) within T, and their number."""
    fpu = fp.view(np.uint64)
    n = len(fpu)
    within = total = 0
    j = np.arange(n)
    for a in range(0, n, chunk):
        b = min(n, a + chunk)
        d = popcount64(fpu[a:b, None] ^ fpu[None, :])
        m = (j[None, :] > np.arange(a, b)[:, None]) & (groups[a:b, None] != groups[None, :])
        m &= ~null[a:b, None] & ~null[None, :]
        within += int(((d <= T) & m).sum())
        total += int(m.sum())
    return within, total


def evaluate(rows, pos, fp, null, lang, T):
    sel = [r for r in rows if r["lang"] == lang]
    idx = np.array([pos[r["id"]] for r in sel])
    fpu = fp.view(np.uint64)
    orig = {r["id"]: r for r in sel if r["kind"] == "orig"}
    acc = {}

    def add(key, ok):
        a = acc.setdefault(key, [0, 0])
        a[0] += ok
        a[1] += 1

    for r in sel:
        if r["kind"] == "orig":
            continue
        o = orig[r["orig_id"]]
        i, k = pos[r["id"]], pos[o["id"]]
        ok = (not null[i] and not null[k]
              and bin(int(fpu[i]) ^ int(fpu[k])).count("1") <= T)
        if r["kind"] in UNIT_EDITS:
            if r["rate"] > 0.03 + 1e-9:
                continue
            add("<=1%" if r["rate"] <= 0.01 + 1e-9 else "1-3%", ok)
            add("<=3%", ok)
            for b in BANDS:
                if b[0] <= o["chars"] < b[1]:
                    add("<=3% " + band_name(b), ok)
        else:
            add(r["kind"], ok)
    groups = np.array([r["orig_id"] for r in sel])
    within, total = false_matches(fp[idx], null[idx], groups, T)
    return acc, within, total, int(null[idx].sum())


def minhash_table(conn, rows, langs=(("zh", 3), ("en", 9)), estimate=0.6, exact=0.7):
    """MinHash + exact verification on the short corpus: recall by edit rate, false pairs per million."""
    out = []
    for lang, n in langs:
        ids = [r["id"] for r in rows if r["lang"] == lang]
        t1 = time.time()
        with conn.cursor() as cur:
            cur.execute("DROP TABLE IF EXISTS cjk_mh")
            cur.execute("CREATE TABLE cjk_mh AS SELECT id, body, minhash(body, n_gram => %s) AS sig "
                        "FROM cjk_short WHERE id = ANY(%s)", (n, ids))
            cur.execute("SELECT p.id_a, p.id_b FROM minhash_pairs('cjk_mh', 'id', 'sig', %s) AS p "
                        "JOIN cjk_mh a ON a.id = p.id_a JOIN cjk_mh b ON b.id = p.id_b "
                        "WHERE jaccard(a.body, b.body, %s) >= %s", (estimate, n, exact))
            found = {(min(a, b), max(a, b)) for a, b in cur.fetchall()}
            cur.execute("DROP TABLE cjk_mh")
        conn.commit()
        sel = [r for r in rows if r["lang"] == lang]
        group = {r["id"]: r["orig_id"] for r in sel}
        acc = {}
        for r in sel:
            if r["kind"] == "orig" or (r["kind"] in UNIT_EDITS and r["rate"] > 0.03 + 1e-9):
                continue
            key = r["kind"] if r["kind"] not in UNIT_EDITS else ("<=1%" if r["rate"] <= 0.01 + 1e-9 else "1-3%")
            pair = (min(r["id"], r["orig_id"]), max(r["id"], r["orig_id"]))
            for k in (key, "<=3%") if r["kind"] in UNIT_EDITS else (key,):
                a = acc.setdefault(k, [0, 0])
                a[0] += pair in found
                a[1] += 1
        sizes = {}
        for g in group.values():
            sizes[g] = sizes.get(g, 0) + 1
        nn = len(sel)
        unrelated = nn * (nn - 1) // 2 - sum(c * (c - 1) // 2 for c in sizes.values())
        false = sum(1 for a, b in found if group[a] != group[b])
        keys = ["<=1%", "1-3%", "<=3%"] + sorted(k for k in acc if k not in ("<=1%", "1-3%", "<=3%"))
        out.append("")
        out.append(fmt_table("short corpus, %s: MinHash (char %d-grams, 128 permutations, LSH at estimate >= %.1f) "
                             "verified on exact Jaccard >= %.1f; %.0f s" % (lang, n, estimate, exact, time.time() - t1),
                             ["method"] + keys + ["FP/1M", "FP"],
                             [["minhash+exact"] + ["%.3f" % (acc[k][0] / acc[k][1]) for k in keys]
                              + ["%.2f" % (false / max(1, unrelated) * 1e6), str(false)]]))
    return out


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser()
    ap.add_argument("--short", default=os.path.join(here, "data", "cjk_corpus.jsonl"))
    ap.add_argument("--long", default=os.path.join(here, "data", "corpus_quality.jsonl"))
    ap.add_argument("--configs", default="before,after")
    ap.add_argument("--candidates", action="store_true", help="also the candidate feature definitions")
    ap.add_argument("--minhash", action="store_true", help="also MinHash with exact verification (short corpus)")
    ap.add_argument("--threshold", type=int, default=3)
    ap.add_argument("--out", default=os.path.join(here, "data", "cjk.txt"))
    args = ap.parse_args()
    allc = dict(CONFIGS, **CANDIDATES)
    names = [c.strip() for c in args.configs.split(",") if c.strip()]
    if args.candidates:
        names += [c for c in CANDIDATES if c not in names]
    bad = [c for c in names if c not in allc]
    if bad:
        sys.exit("unknown config(s): %s (known: %s)" % (", ".join(bad), ", ".join(allc)))
    T = args.threshold
    t0 = time.time()
    conn = psycopg.connect("")
    corpora = [("short", args.short), ("long", args.long)]
    data = {c: load(conn, c, p) for c, p in corpora}
    results = {}
    for name in names:
        for c, _ in corpora:
            t1 = time.time()
            pos, fp, null = fingerprints(conn, "cjk_" + c, allc[name])
            t2 = time.time()
            for lang in ("zh", "en"):
                results[(name, c, lang)] = evaluate(data[c], pos, fp, null, lang, T)
            print("  %-12s %-5s sql %5.1fs, pairs %5.1fs" % (name, c, t2 - t1, time.time() - t2), flush=True)
    mh = minhash_table(conn, data["short"]) if args.minhash else []
    conn.close()

    out = []
    for c, p in corpora:
        for lang in ("zh", "en"):
            rows = data[c]
            norig = sum(1 for r in rows if r["lang"] == lang and r["kind"] == "orig")
            nvar = sum(1 for r in rows if r["lang"] == lang and r["kind"] != "orig")
            first = results[(names[0], c, lang)][0]
            kinds = ["<=1%", "1-3%", "<=3%"]
            bands = ["<=3% " + band_name(b) for b in BANDS if "<=3% " + band_name(b) in first]
            others = sorted(k for k in first if k not in kinds and not k.startswith("<=3% "))
            hdr = ["config"] + kinds + [b.replace("<=3% ", "") for b in bands] + others + ["FP/1M", "FP", "NULL"]
            trs = []
            for name in names:
                acc, within, total, nnull = results[(name, c, lang)]
                trs.append([name] + ["%.3f" % (acc[k][0] / acc[k][1]) for k in kinds + bands + others]
                           + ["%.2f" % (within / max(1, total) * 1e6), str(within), str(nnull)])
            counts = ["n"] + [str(first[k][1]) for k in kinds + bands + others] + ["%d pairs" % results[(names[0], c, lang)][2], "", ""]
            out.append("")
            out.append(fmt_table(
                "%s corpus (%s), %s: %d originals, %d variants; recall at distance <= %d "
                "(edit rates: unit edits; length bands: <= 3%% edits by characters of the original)"
                % (c, os.path.relpath(p, here + "/.."), lang, norig, nvar, T), hdr, trs + [counts]))
    out.extend(mh)
    out.append("")
    out.append("configurations:")
    for name in names:
        out.append("  %-12s %s" % (name, allc[name]))
    out.append("time: %.0f s" % (time.time() - t0))
    text = "\n".join(out) + "\n"
    print(text, end="")
    with open(args.out, "w", encoding="utf-8") as f:
        f.write(text)


if __name__ == "__main__":
    main()
