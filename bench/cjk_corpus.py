#!/usr/bin/python3
# bench/cjk_corpus.py: owns the second, short-passage evaluation set of
# Chinese near-duplicates.  Deterministic (seeded), standard library
# only, from real text in Debian packages that bench/corpus.py does NOT read:
#   zh  fortunes-zh (Chinese fortunes, Tang and Song poems), lilypond-doc-html-zh
#       (the LilyPond manuals in Chinese) and the zh_CN / zh_TW message
#       catalogues (.mo) of bash, coreutils, dpkg, git, grep and gettext;
#   en  the English originals (msgids) of the same catalogues.
# Originals are passages of 150-1,000 characters; near-duplicates (8-gram
# containment >= 0.3) among them are dropped so that unrelated pairs are
# really unrelated.  Each original gets these variants:
#   sub/ins/del/mix  units (CJK characters in zh, words in en) substituted,
#                    inserted, deleted, or a mix, at 0.5, 1, 2 and 3 % (>= 1)
#   punct            1 and 3 % punctuation changes: full-width <-> half-width
#                    swaps (， <-> , and so on), a mark replaced, deleted or added
#   swap             two adjacent sentences swapped
#   boiler           one boilerplate line added at the top or the bottom
# Output: bench/data/cjk_corpus.jsonl, one object per document with id, lang,
# orig_id, kind, rate (edited units / units, 0 for originals), chars, body.
#   /usr/bin/python3 bench/cjk_corpus.py [--out DIR] [--if-needed]
#   /usr/bin/python3 bench/cjk_corpus.py --print-packages
import argparse
import gettext
import hashlib
import html.parser
import json
import os
import random
import re
import subprocess

PACKAGES = ["fortunes-zh", "lilypond-doc-html-zh", "bash", "coreutils", "dpkg", "git", "grep", "gettext"]
CATALOGUES = ["bash", "coreutils", "dpkg", "git", "grep", "gettext-tools"]
SEED = 16016
MIN_CHARS, MAX_CHARS = 150, 1000
RATES = [0.5, 1, 2, 3]
PUNCT_RATES = [1, 3]

CJK_RE = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
WORD_RE = re.compile(r"[^\W_]+")
ANSI_RE = re.compile(r"\x1b\[[0-9;]*m")
# full-width <-> half-width pairs, and the marks a replacement draws from
WIDTH_PAIRS = [("，", ","), ("。", "."), ("：", ":"), ("；", ";"), ("！", "!"), ("？", "?"),
               ("（", "("), ("）", ")"), ("“", "\""), ("”", "\""), ("、", ",")]
PUNCT_POOL = "，。：；！？、,.:;!?"
BOILER = {
    "zh": ["本文由社区志愿者翻译，如有错误请提交修改建议。", "更多信息请参阅项目主页上的常见问题。",
           "最后更新：2024年3月8日", "本页面内容按照自由软件许可证发布。", "返回目录 | 上一页 | 下一页"],
    "en": ["This page was translated by community volunteers; please report mistakes.",
           "For more information see the frequently asked questions on the project page.",
           "Last updated: 8 March 2024", "The content of this page is released under a free licence.",
           "Back to contents | Previous page | Next page"],
}


def cjk_ratio(s):
    nonspace = sum(1 for c in s if not c.isspace())
    return len(CJK_RE.findall(s)) / nonspace if nonspace else 0.0


def clean(s):
    s = ANSI_RE.sub("", s).replace("\r", "").replace("\t", " ")
    s = re.sub(r"[ ]+\n", "\n", s)
    return re.sub(r"\n{3,}", "\n\n", s).strip()


def pack(paras, out):
    """Consecutive paragraphs joined into passages of MIN..MAX characters."""
    cur = ""
    for p in paras:
        p = p.strip()
        if not p:
            continue
        if cur and len(cur) + len(p) + 1 > MAX_CHARS:
            if len(cur) >= MIN_CHARS:
                out.append(cur)
            cur = ""
        cur = (cur + "\n" + p) if cur else p
        if len(cur) >= 400:
            out.append(cur)
            cur = ""
    if MIN_CHARS <= len(cur) <= MAX_CHARS:
        out.append(cur)


def fortunes():
    out = []
    for name in ("chinese.u8", "tang300.u8", "song100.u8"):
        with open("/usr/share/games/fortunes/" + name, encoding="utf-8", errors="replace") as f:
            for chunk in f.read().split("\n%\n"):
                out.append(("fortunes-zh:" + name, clean(chunk)))
    return out


class Paras(html.parser.HTMLParser):
    """Text of <p>, <li>, <dd> and headings; <pre> and scripts skipped."""
    BLOCK = {"p", "li", "dd", "dt", "h1", "h2", "h3", "h4", "div", "td", "blockquote"}

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.paras, self.buf, self.skip = [], [], 0

    def handle_starttag(self, tag, attrs):
        if tag in ("pre", "script", "style", "head"):
            self.skip += 1
        elif tag in self.BLOCK:
            self.flush()

    def handle_endtag(self, tag):
        if tag in ("pre", "script", "style", "head"):
            self.skip = max(0, self.skip - 1)
        elif tag in self.BLOCK:
            self.flush()

    def handle_data(self, data):
        if not self.skip:
            self.buf.append(data)

    def flush(self):
        t = re.sub(r"\s+", " ", "".join(self.buf)).strip()
        self.buf = []
        if t:
            self.paras.append(t)


def lilypond():
    out = []
    root = "/usr/share/doc/lilypond/html/Documentation"
    for d, _, files in sorted(os.walk(root)):
        for fn in sorted(files):
            if not fn.endswith(".zh.html"):
                continue
            p = Paras()
            with open(os.path.join(d, fn), encoding="utf-8", errors="replace") as f:
                p.feed(f.read())
            p.flush()
            passages = []
            pack([x for x in p.paras if cjk_ratio(x) >= 0.2], passages)
            out.extend(("lilypond-doc-html-zh:" + fn, x) for x in passages)
    return out


def catalogues(rng):
    """(zh msgstr, en msgid) of long messages; zh_CN or zh_TW chosen per msgid."""
    zh, en = [], []
    for cat in CATALOGUES:
        per = {}
        for loc in ("zh_CN", "zh_TW"):
            path = "/usr/share/locale/%s/LC_MESSAGES/%s.mo" % (loc, cat)
            if not os.path.exists(path):
                continue
            with open(path, "rb") as f:
                t = gettext.GNUTranslations(f)
            for k, v in sorted(t._catalog.items(), key=lambda kv: str(kv[0])):
                if isinstance(k, str) and isinstance(v, str) and k:
                    per.setdefault(k, []).append((loc, clean(v)))
        for k in sorted(per):
            loc, v = rng.choice(per[k])
            if MIN_CHARS <= len(v) <= MAX_CHARS and cjk_ratio(v) >= 0.3:
                zh.append(("%s:%s.mo" % (loc, cat), v))
            k = clean(k)
            if MIN_CHARS <= len(k) <= MAX_CHARS:
                en.append(("%s.mo:msgid" % cat, k))
    return zh, en


def grams(s, n=8):
    s = re.sub(r"\W+", "", s.lower())
    return {s[i:i + n] for i in range(max(1, len(s) - n + 1))}


def dedup(docs):
    """Drop exact and near duplicates: a passage sharing >= 30% of its 8-grams with a kept one."""
    kept, index = [], {}
    for src, body in docs:
        g = grams(body)
        seen = {}
        for x in g:
            for j in index.get(x, ()):
                seen[j] = seen.get(j, 0) + 1
        if any(c >= 0.3 * min(len(g), kept[j][2]) for j, c in seen.items()):
            continue
        for x in g:
            index.setdefault(x, []).append(len(kept))
        kept.append((src, body, len(g)))
    return [(s, b) for s, b, _ in kept]


def units(body, lang):
    return [m.span() for m in (CJK_RE if lang == "zh" else WORD_RE).finditer(body)]


def edit_units(body, lang, kind, rate, rng, vocab):
    spans = units(body, lang)
    n = max(1, round(len(spans) * rate / 100.0))
    chosen = set(rng.sample(range(len(spans)), min(n, len(spans))))
    joiner = "" if lang == "zh" else " "
    out, pos = [], 0
    for i, (a, b) in enumerate(spans):
        if i not in chosen:
            continue
        op = kind if kind != "mix" else rng.choice(("sub", "ins", "del"))
        new = rng.choice(vocab)
        while new == body[a:b]:
            new = rng.choice(vocab)
        out.append(body[pos:a])
        if op == "sub":
            out.append(new)
            pos = b
        elif op == "del":
            pos = b + (1 if joiner and body[b:b + 1] == " " else 0)
        else:
            out.append(new + joiner)
            pos = a
    out.append(body[pos:])
    return "".join(out), len(chosen) / len(spans)


def edit_punct(body, lang, rate, rng):
    """Punctuation changes: width swaps mostly, else a mark replaced, deleted or added."""
    spans = units(body, lang)
    n = max(1, round(len(spans) * rate / 100.0))
    chars = list(body)
    marks = [i for i, c in enumerate(chars) if not c.isalnum() and not c.isspace()]
    gaps = [b for _, b in spans]
    for _ in range(n):
        op = rng.random()
        if marks and op < 0.6:
            i = rng.choice(marks)
            c = chars[i]
            swap = [h for f, h in WIDTH_PAIRS if f == c] + [f for f, h in WIDTH_PAIRS if h == c]
            chars[i] = rng.choice(swap) if swap else rng.choice(PUNCT_POOL)
        elif marks and op < 0.75:
            chars[rng.choice(marks)] = rng.choice(PUNCT_POOL)
        elif marks and op < 0.85:
            chars[rng.choice(marks)] = ""
        else:
            g = rng.choice(gaps) - 1
            chars[g] = chars[g] + rng.choice("，、" if lang == "zh" else ",;")
    return "".join(chars), n / len(spans)


SENT_END = re.compile(r"(?<=[。！？!?])|(?<=\.)(?=\s)|(?=\n)")


def swap_sentences(body, rng):
    """Two adjacent sentences (of >= 5 characters) swapped; separators stay in place."""
    cuts = sorted({0, len(body)} | {m.start() for m in SENT_END.finditer(body)})
    segs = []
    for a, b in zip(cuts, cuts[1:]):
        seg = body[a:b]
        core = seg.strip()
        if not core:
            if segs:
                segs[-1][2] += seg
            else:
                segs.append(["", "", seg])
            continue
        lead = seg[:len(seg) - len(seg.lstrip())]
        segs.append([lead, core, seg[len(lead) + len(core):]])
    idx = [i for i in range(len(segs) - 1) if len(segs[i][1]) >= 5 and len(segs[i + 1][1]) >= 5]
    if not idx:
        return None
    i = rng.choice(idx)
    segs[i][1], segs[i + 1][1] = segs[i + 1][1], segs[i][1]
    return "".join(a + b + c for a, b, c in segs)


def build(rng):
    zh_cat, en_cat = catalogues(rng)
    langs = {"zh": dedup(fortunes() + lilypond() + zh_cat), "en": dedup(en_cat)}
    rows, next_id, summary = [], 1, []
    for lang in ("zh", "en"):
        docs = [(s, b) for s, b in langs[lang]
                if MIN_CHARS <= len(b) <= MAX_CHARS and len(units(b, lang)) >= (60 if lang == "zh" else 25)]
        vocab = (CJK_RE.findall("".join(b for _, b in docs)) if lang == "zh"
                 else WORD_RE.findall(" ".join(b for _, b in docs)))
        per_src = {}
        for src, body in docs:
            oid = next_id
            next_id += 1
            per_src[src.split(":")[0]] = per_src.get(src.split(":")[0], 0) + 1
            rows.append({"id": oid, "lang": lang, "orig_id": oid, "kind": "orig", "rate": 0.0,
                         "source": src, "body": body})
            vr = random.Random("%d:%s:%d" % (SEED, lang, oid))
            variants = []
            for kind in ("sub", "ins", "del", "mix"):
                for rate in RATES:
                    variants.append((kind,) + edit_units(body, lang, kind, rate, vr, vocab))
            for rate in PUNCT_RATES:
                variants.append(("punct",) + edit_punct(body, lang, rate, vr))
            sw = swap_sentences(body, vr)
            if sw is not None and sw != body:
                variants.append(("swap", sw, 0.0))
            line = vr.choice(BOILER[lang])
            variants.append(("boiler", (line + "\n" + body) if vr.random() < 0.5 else (body + "\n" + line), 0.0))
            for kind, vbody, rate in variants:
                rows.append({"id": next_id, "lang": lang, "orig_id": oid, "kind": kind, "rate": round(rate, 5),
                             "source": src, "body": vbody})
                next_id += 1
        summary.append("%s: %d originals (%s), %d documents" % (
            lang, len(docs), ", ".join("%s=%d" % kv for kv in sorted(per_src.items())),
            sum(1 for r in rows if r["lang"] == lang)))
    for r in rows:
        r["chars"] = len(r["body"])
    return rows, summary


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.join(here, "data"))
    ap.add_argument("--if-needed", action="store_true")
    ap.add_argument("--print-packages", action="store_true")
    args = ap.parse_args()
    if args.print_packages:
        print(" ".join(PACKAGES))
        return
    with open(os.path.abspath(__file__), "rb") as f:
        stamp = hashlib.sha256(f.read()).hexdigest()
    path = os.path.join(args.out, "cjk_corpus.jsonl")
    if args.if_needed and os.path.exists(path + ".stamp"):
        with open(path + ".stamp") as f:
            if f.read().strip() == stamp and os.path.exists(path):
                print("cjk_corpus.py: %s is up to date" % path)
                return
    versions = subprocess.run(["dpkg-query", "-W", "-f", "${Package}=${Version} "] + PACKAGES,
                              capture_output=True, text=True).stdout.strip()
    rows, summary = build(random.Random(SEED))
    os.makedirs(args.out, exist_ok=True)
    with open(path + ".tmp", "w", encoding="utf-8") as f:
        for r in rows:
            f.write(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n")
    os.replace(path + ".tmp", path)
    with open(path + ".stamp", "w") as f:
        f.write(stamp + "\n")
    print("cjk_corpus.py: %s from %s" % (path, versions))
    for s in summary:
        print("  " + s)


if __name__ == "__main__":
    main()
