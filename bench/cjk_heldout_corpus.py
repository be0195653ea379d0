#!/usr/bin/python3
# bench/cjk_heldout_corpus.py: owns the held-out Chinese near-duplicate corpus
# (bench/cjk_heldout.py evaluates it).  Deterministic (one seed), real text
# from Debian packages, none of it read by bench/cjk_corpus.py:
#   zh  man    manpages-zh (zh_CN man pages), one document per page
#       fortune fortunes-zh (chinese, song100, tang300), consecutive entries
#              grouped into one document
#       edu    debian-edu-doc-zh-cn (the Debian Edu bookworm manual), one
#              document per chapter
#       mo     the zh_CN message catalogues of installed packages (except the
#              ones bench/cjk_corpus.py reads), one document per catalogue
#   en  man    the English man pages of manpages and of installed packages
# Passages of 150-2,500 characters; near-duplicate passages (5-gram
# containment >= 0.3 in an earlier one) are dropped so that passages of
# different documents are unrelated.  Each document goes to the dev or the
# test half by a hash of its name: choose on dev, report on test.
# Variants of every passage:
#   edit R   R = 1, 2, 3, 5, 10 % of the units (CJK characters in zh, words in
#            en) edited by a mix of substitutions, insertions, deletions,
#            typos (zh: a character replaced by one that sounds alike, same
#            Mandarin syllable in Unihan, or looks alike, a table of classic
#            confusions or the same radical and stroke count; en: letters
#            swapped, replaced by a keyboard neighbour, dropped, doubled)
#            and word swaps (zh: two adjacent 2-character runs; en: two
#            adjacent words; 2 units); rate = edited units / units
#   swap     two adjacent sentences swapped
#   boiler   one boilerplate line added at the top or the bottom
#   edit+    R = 1, 2, 3 % edits as above, and two adjacent sentences swapped
#            and one boilerplate line added (rate counts the unit edits only)
#   s2t      (zh) converted to traditional characters (OpenCC s2t)
#   s2twp    (zh) converted to Taiwan's characters and phrases (OpenCC s2twp)
# Output: bench/data/cjk_heldout.jsonl: id, lang, source, doc, half, orig_id,
# kind, rate, chars, body.
#   /usr/bin/python3 bench/cjk_heldout_corpus.py [--out DIR] [--if-needed]
#   /usr/bin/python3 bench/cjk_heldout_corpus.py --print-packages
import argparse
import bz2
import collections
import gettext
import glob
import gzip
import hashlib
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import unicodedata

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cjk_corpus import Paras  # noqa: E402  (the HTML paragraph reader)

PACKAGES = ["manpages-zh", "fortunes-zh", "debian-edu-doc-zh-cn", "manpages", "unicode-data", "opencc"]
SEED = 30030
VERSION = 3  # bump when the output changes, so --if-needed rebuilds
MIN_CHARS, MAX_CHARS = 150, 2500
RATES = [1, 2, 3, 5, 10]
PER_SOURCE = {"man": 700, "fortune": 500, "edu": 400, "mo": 700}
EN_PASSAGES = 2400
SKIP_MO = {"bash", "coreutils", "dpkg", "git", "grep", "gettext-tools", "gettext-runtime"}

CJK_RE = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
WORD_RE = re.compile(r"[A-Za-z][A-Za-z'-]*")
ANSI_RE = re.compile(r"\x1b\[[0-9;]*m")
BOILER = {
    "zh": ["本页内容由志愿者维护，转载请注明出处。", "版权所有，保留一切权利。未经许可不得复制。",
           "如发现翻译错误，请通过邮件列表告知我们，谢谢。", "上一节 | 目录 | 下一节", "文档生成时间：2023年11月5日 星期日"],
    "en": ["This page is maintained by volunteers; please cite the source when copying.",
           "All rights reserved. Do not copy without permission.",
           "If you find a mistake, please tell us on the mailing list. Thank you.",
           "Previous section | Contents | Next section", "Generated on Sunday, 5 November 2023"],
}
# classic look-alike confusions (both directions)
LOOKALIKE = ("己已巳 未末 戊戌戍 人入 土士 日曰 大太犬 天夫 王玉 木本术 买卖 拔拨 侯候 辨辩辫瓣 即既 "
             "问间 令今 壁璧 历厉 折拆 治冶 刺剌 免兔 鸟乌 贝见 办为 斤斥 干千于 子孑 午牛 白自 "
             "甲申由田 广厂 己巳 处外 汆氽 析折 炙灸 崇祟 茶荼 狼狠 睛晴清情请 待侍持 拨泼 "
             "徽微 裁栽载 辩辨 历沥 则侧测 锻锥 佳隹 钓钩 杨扬 堪勘 幕慕暮墓募 愉偷输 话活 "
             "拆折 往住 陪赔倍培 洒酒 烂栏拦 跟根很狠恨 抄炒吵妙秒")


def cjk_count(s):
    """The number of CJK ideographs in s."""
    return len(CJK_RE.findall(s))


def cjk_ratio(s):
    nonspace = sum(1 for c in s if not c.isspace())
    return cjk_count(s) / nonspace if nonspace else 0.0


def units(lang, s):
    return cjk_count(s) if lang == "zh" else len(WORD_RE.findall(s))


def half_of(source, doc):
    return "dev" if hashlib.sha1(("%d/%s/%s" % (SEED, source, doc)).encode()).digest()[0] % 2 == 0 else "test"


# ---------------------------------------------------------------- sources

ROFF_ESC = [
    (re.compile(r"\\f(\[[^\]]*\]|\(..|.)"), ""), (re.compile(r"\\\*(\[[^\]]*\]|\(..|.)"), ""),
    (re.compile(r"\\\((em|en)"), "—"), (re.compile(r"\\\((lq|rq|dq)"), "\""), (re.compile(r"\\\(.."), ""),
    (re.compile(r"\\s[+-]?\d+"), ""), (re.compile(r"\\[-]"), "-"), (re.compile(r"\\[&,/^|c%]"), ""),
    (re.compile(r"\\e"), "\\\\"), (re.compile(r"\\ "), " "), (re.compile(r"\\\".*$"), ""),
]
FONT_MACROS = {"B", "I", "BR", "BI", "IR", "RB", "IB", "RI", "SM", "SB", "UR", "MT"}


def roff_text(line):
    for rx, rep in ROFF_ESC:
        line = rx.sub(rep, line)
    return line


def roff_sections(src):
    """A man page as a list of sections, each a list of paragraphs."""
    sections, paras, cur = [], [], []

    def flush_para():
        if cur:
            text = cur[0]
            for x in cur[1:]:
                text += x if CJK_RE.match(text[-1:]) and CJK_RE.match(x[:1]) else " " + x
            paras.append(text)
            cur.clear()

    for raw in src.splitlines():
        if raw.startswith((".\\\"", "'\\\"", "...")) or raw.strip() in (".", ""):
            if raw.strip() == "":
                flush_para()
            continue
        if raw.startswith((".", "'")):
            parts = raw[1:].split(None, 1)
            if not parts:
                continue
            macro, arg = parts[0], (parts[1] if len(parts) > 1 else "")
            if macro in ("SH", "SS"):
                flush_para()
                if macro == "SH" and paras:
                    sections.append(paras)
                    paras = []
            elif macro in FONT_MACROS:
                t = roff_text(arg.replace("\"", "")).strip()
                if t:
                    cur.append(t)
            elif macro in ("so",):
                return []
            else:
                flush_para()
            continue
        t = roff_text(raw).strip()
        if t:
            cur.append(t)
    flush_para()
    if paras:
        sections.append(paras)
    return sections


def chunk_paragraphs(paras, rng):
    """Greedy passages of MIN_CHARS..MAX_CHARS characters from paragraphs."""
    out, cur = [], []
    target = rng.randint(MIN_CHARS, 1200)
    for p in paras:
        p = p.strip()
        if not p:
            continue
        if cur and len("\n".join(cur + [p])) > MAX_CHARS:
            if len("\n".join(cur)) >= MIN_CHARS:
                out.append("\n".join(cur))
            cur = []
        cur.append(p)
        if len("\n".join(cur)) >= target:
            out.append("\n".join(cur))
            cur = []
            target = rng.randint(MIN_CHARS, 1200)
    if cur and MIN_CHARS <= len("\n".join(cur)) <= MAX_CHARS:
        out.append("\n".join(cur))
    return [x for x in out if len(x) <= MAX_CHARS]


def man_documents(root):
    """(page name, paragraphs) of every man page under root (links and .so pages skipped)."""
    docs = []
    seen = set()
    for path in sorted(glob.glob(os.path.join(root, "man*", "*.gz"))):
        if os.path.islink(path):
            continue
        name = os.path.basename(path)[:-3]
        if name in seen:
            continue
        seen.add(name)
        try:
            src = gzip.open(path, "rb").read().decode("utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        paras = [p for sec in roff_sections(src) for p in sec + [""]]
        docs.append((name, paras))
    return docs


def fortune_documents(rng):
    """Consecutive fortunes grouped into documents of 150-1,000 characters."""
    docs = []
    for fname in ("chinese", "song100", "tang300"):
        path = "/usr/share/games/fortunes/" + fname
        text = open(path, encoding="utf-8", errors="replace").read()
        entries = [ANSI_RE.sub("", e).strip() for e in re.split(r"\n%\n", text)]
        entries = [e for e in entries if e and cjk_ratio(e) >= 0.3]
        i, n = 0, 0
        while i < len(entries):
            target = rng.randint(MIN_CHARS, 1000)
            group = []
            while i < len(entries) and len("\n".join(group)) < target:
                group.append(entries[i])
                i += 1
            docs.append(("%s#%d" % (fname, n), group))
            n += 1
    return docs


class Chapters(Paras):
    """Paras' paragraphs, split into chapters at <h1> and <h2>."""

    def __init__(self):
        super().__init__()
        self.chapters = [self.paras]

    def handle_starttag(self, tag, attrs):
        super().handle_starttag(tag, attrs)
        if tag in ("h1", "h2"):
            self.paras = []
            self.chapters.append(self.paras)


def edu_documents(rng):
    """The Debian Edu manual's chapters (the bookworm edition only: the bullseye one repeats it)."""
    p = Chapters()
    p.feed(open("/usr/share/doc/debian-edu-doc-zh-cn/debian-edu-bookworm-manual.html", encoding="utf-8").read())
    p.flush()
    return [("bookworm#%d" % i, ch) for i, ch in enumerate(p.chapters) if ch]


def mo_documents(rng):
    """(domain, translated messages) of the zh_CN catalogues, those of bench/cjk_corpus.py excepted."""
    docs = []
    for path in sorted(glob.glob("/usr/share/locale/zh_CN/LC_MESSAGES/*.mo")):
        dom = os.path.basename(path)[:-3]
        if dom in SKIP_MO:
            continue
        try:
            with open(path, "rb") as f:
                cat = gettext.GNUTranslations(f)._catalog
        except Exception:
            continue
        msgs = []
        for k, v in cat.items():
            if not k or not isinstance(v, str):
                continue
            v = re.sub(r"[ \t]+", " ", v.replace("\\n", "\n")).strip()
            if len(v) >= 8 and cjk_ratio(v) >= 0.3:
                msgs.append(v)
        docs.append((dom, msgs))
    return docs


# ---------------------------------------------------------------- passages

def passages(docs, lang, rng, source):
    """The passages of every document that are mostly Chinese (zh) or English prose (en)."""
    out = []
    for name, paras in docs:
        for body in chunk_paragraphs(paras, rng):
            if lang == "zh" and cjk_ratio(body) < 0.3:
                continue
            if lang == "en" and (cjk_ratio(body) > 0 or len(WORD_RE.findall(body)) * 6 < len(body) * 0.6):
                continue
            out.append({"lang": lang, "source": source, "doc": name, "body": body})
    return out


def grams(s, n=5):
    """The set of character n-grams of s without white space."""
    s = re.sub(r"\s+", "", s)
    return {s[i:i + n] for i in range(max(0, len(s) - n + 1))}


def drop_near_duplicates(items):
    """Keep a passage unless >= 30 % of its 5-grams occur in one kept passage."""
    index = collections.defaultdict(list)
    kept = []
    for it in items:
        g = grams(it["body"])
        if not g:
            continue
        counts = collections.Counter()
        for x in g:
            for k in index.get(x, ())[:200]:
                counts[k] += 1
        if counts and counts.most_common(1)[0][1] >= 0.3 * len(g):
            continue
        for x in g:
            index[x].append(len(kept))
        kept.append(it)
    return kept


# ---------------------------------------------------------------- edits

class ZhTypos:
    """Sound-alike (same Mandarin syllable, Unihan) and look-alike characters."""

    def __init__(self, common):
        self.common = common
        read = {}
        with bz2.open("/usr/share/unicode/Unihan_Readings.txt.bz2", "rt", encoding="utf-8") as f:
            for line in f:
                if "\tkMandarin\t" in line:
                    cp, _, val = line.rstrip("\n").split("\t")
                    read[chr(int(cp[2:], 16))] = self._toneless(val.split()[0])
        rs = {}
        with bz2.open("/usr/share/unicode/Unihan_IRGSources.txt.bz2", "rt", encoding="utf-8") as f:
            for line in f:
                if "\tkRSUnicode\t" in line:
                    cp, _, val = line.rstrip("\n").split("\t")
                    rad, strokes = val.split()[0].replace("'", "").split(".")
                    rs[chr(int(cp[2:], 16))] = (rad, int(strokes))
        self.sound = collections.defaultdict(list)
        self.shape = collections.defaultdict(list)
        for c in common:
            if c in read:
                self.sound[read[c]].append(c)
            if c in rs:
                self.shape[rs[c][0]].append(c)
        self.read, self.rs = read, rs
        self.look = collections.defaultdict(list)
        for group in LOOKALIKE.split():
            for a in group:
                self.look[a] += [b for b in group if b != a]

    @staticmethod
    def _toneless(p):
        return "".join(c for c in unicodedata.normalize("NFD", p) if not unicodedata.combining(c))

    def typo(self, c, rng):
        options = []
        if rng.random() < 0.5:
            options = [x for x in self.sound.get(self.read.get(c), []) if x != c]
        if not options:
            options = list(self.look.get(c, []))
            if not options and c in self.rs:
                rad, st = self.rs[c]
                options = [x for x in self.shape.get(rad, []) if x != c and abs(self.rs[x][1] - st) <= 1]
        if not options:
            options = [x for x in self.sound.get(self.read.get(c), []) if x != c]
        return rng.choice(options) if options else None


KEYB = "qwertyuiop asdfghjkl zxcvbnm"


def en_typo(w, rng):
    """w with two letters swapped, one replaced by a keyboard neighbour, dropped or doubled."""
    if len(w) < 3:
        return w + w[-1]
    i = rng.randrange(len(w) - 1)
    op = rng.randrange(4)
    if op == 0:
        return w[:i] + w[i + 1] + w[i] + w[i + 2:]
    if op == 1:
        row = next((r for r in KEYB.split() if w[i].lower() in r), None)
        if row:
            j = row.index(w[i].lower())
            return w[:i] + row[max(0, j - 1) if rng.random() < 0.5 and j > 0 else min(len(row) - 1, j + 1)] + w[i + 1:]
        return w[:i] + w[i + 1:]
    if op == 2:
        return w[:i] + w[i + 1:]
    return w[:i] + w[i] + w[i:]


def edit_zh(body, n_units, rng, freq_chars, freq_w, typos):
    """body with n_units CJK characters edited by a mix of the five kinds; (text, units edited)."""
    s = list(body)
    done = 0
    ops = ["sub", "ins", "del", "typo", "wswap"]
    while done < n_units:
        pos = [i for i, c in enumerate(s) if CJK_RE.match(c)]
        if len(pos) < 8:
            break
        op = rng.choice(ops)
        i = rng.choice(pos)
        if op == "sub":
            s[i] = rng.choices(freq_chars, freq_w)[0]
        elif op == "ins":
            s.insert(i, rng.choices(freq_chars, freq_w)[0])
        elif op == "del":
            del s[i]
        elif op == "typo":
            t = typos.typo(s[i], rng)
            if t is None:
                continue
            s[i] = t
        else:
            if done + 2 > n_units:
                continue
            if i + 4 > len(s) or not all(CJK_RE.match(c) for c in s[i:i + 4]) or s[i:i + 2] == s[i + 2:i + 4]:
                continue
            s[i:i + 4] = s[i + 2:i + 4] + s[i:i + 2]
            done += 1
        done += 1
    return "".join(s), done


def edit_en(body, n_units, rng, vocab, vocab_w):
    """body with n_units words edited by a mix of the five kinds; (text, units edited)."""
    toks = re.split(r"(\s+)", body)
    done = 0
    ops = ["sub", "ins", "del", "typo", "wswap"]
    while done < n_units:
        pos = [i for i, t in enumerate(toks) if WORD_RE.fullmatch(t)]
        if len(pos) < 8:
            break
        op = rng.choice(ops)
        k = rng.randrange(len(pos))
        i = pos[k]
        if op == "sub":
            toks[i] = rng.choices(vocab, vocab_w)[0]
        elif op == "ins":
            toks[i:i] = [rng.choices(vocab, vocab_w)[0], " "]
        elif op == "del":
            del toks[i:i + 2]
        elif op == "typo":
            toks[i] = en_typo(toks[i], rng)
        else:
            if done + 2 > n_units or k + 1 >= len(pos):
                continue
            j = pos[k + 1]
            toks[i], toks[j] = toks[j], toks[i]
            done += 1
        done += 1
    return "".join(toks), done


def swap_sentences(body, lang, rng):
    """body with two adjacent sentences swapped, or None when it has no two."""
    if lang == "zh":
        parts = [p for p in re.split(r"(?<=[。！？；!?\n])", body) if p]
    else:
        parts = [p for p in re.split(r"(?<=[.!?\n])(?=\s)", body) if p]
    idx = [i for i in range(len(parts) - 1) if len(parts[i].strip()) >= 4 and len(parts[i + 1].strip()) >= 4
           and parts[i].strip() != parts[i + 1].strip()]
    if not idx:
        return None
    i = rng.choice(idx)
    a, b = parts[i], parts[i + 1]
    if lang == "en":
        a, b = a.lstrip(), b.lstrip()
        parts[i], parts[i + 1] = " " + b, " " + a
        return "".join(parts).strip()
    parts[i], parts[i + 1] = b, a
    return "".join(parts)


def opencc_convert(texts, config):
    """Convert texts with the opencc tool (one process for all)."""
    sep = "\n@@SIMHASHDOC@@\n"
    with tempfile.TemporaryDirectory() as d:
        src, dst = os.path.join(d, "in"), os.path.join(d, "out")
        with open(src, "w", encoding="utf-8") as f:
            f.write(sep.join(texts))
        subprocess.run(["opencc", "-c", config + ".json", "-i", src, "-o", dst], check=True)
        out = open(dst, encoding="utf-8").read().split(sep)
    assert len(out) == len(texts)
    return out


def build(out_path):
    """Originals and variants, written to out_path; returns the rows."""
    rng = random.Random(SEED)
    zh = []
    for source, fn in (("man", lambda r: man_documents("/usr/share/man/zh_CN")),
                       ("fortune", fortune_documents), ("edu", edu_documents), ("mo", mo_documents)):
        items = passages(fn(rng), "zh", rng, source)
        rng.shuffle(items)
        zh += items[:PER_SOURCE[source] * 2]
    zh = drop_near_duplicates(zh)
    per = collections.Counter()
    zh_kept = []
    for it in zh:
        if per[it["source"]] < PER_SOURCE[it["source"]]:
            per[it["source"]] += 1
            zh_kept.append(it)
    en = passages(man_documents("/usr/share/man"), "en", rng, "man")
    rng.shuffle(en)
    en = drop_near_duplicates(en[:EN_PASSAGES * 2])[:EN_PASSAGES]
    originals = zh_kept + en

    cf = collections.Counter(c for it in zh_kept for c in it["body"] if CJK_RE.match(c))
    freq_chars, freq_w = zip(*cf.most_common())
    typos = ZhTypos(set(c for c, _ in cf.most_common(3500)))
    wf = collections.Counter(w for it in en for w in WORD_RE.findall(it["body"]))
    vocab, vocab_w = zip(*wf.most_common(20000))

    rows = []
    zh_bodies = []
    for it in originals:
        lang, body = it["lang"], it["body"]
        oid = len(rows)
        base = dict(lang=lang, source=it["source"], doc=it["doc"], half=half_of(it["source"], it["doc"]),
                    orig_id=oid)
        rows.append(dict(base, id=oid, kind="orig", rate=0.0, chars=len(body), body=body))
        u = units(lang, body)
        for r in RATES:
            n = max(1, int(r * u / 100))
            if lang == "zh":
                v, done = edit_zh(body, n, rng, freq_chars, freq_w, typos)
            else:
                v, done = edit_en(body, n, rng, vocab, vocab_w)
            rows.append(dict(base, id=len(rows), kind="edit", rate=round(100.0 * done / u, 3),
                             chars=len(body), body=v))
        for r in RATES[:3]:
            n = max(1, int(r * u / 100))
            if lang == "zh":
                v, done = edit_zh(body, n, rng, freq_chars, freq_w, typos)
            else:
                v, done = edit_en(body, n, rng, vocab, vocab_w)
            v = swap_sentences(v, lang, rng) or v
            line = rng.choice(BOILER[lang])
            v = line + "\n" + v if rng.random() < 0.5 else v + "\n" + line
            rows.append(dict(base, id=len(rows), kind="edit+", rate=round(100.0 * done / u, 3),
                             chars=len(body), body=v))
        v = swap_sentences(body, lang, rng)
        if v is not None:
            rows.append(dict(base, id=len(rows), kind="swap", rate=0.0, chars=len(body), body=v))
        line = rng.choice(BOILER[lang])
        v = line + "\n" + body if rng.random() < 0.5 else body + "\n" + line
        rows.append(dict(base, id=len(rows), kind="boiler", rate=0.0, chars=len(body), body=v))
        if lang == "zh":
            zh_bodies.append((oid, base, body))
    for config in ("s2t", "s2twp"):
        conv = opencc_convert([b for _, _, b in zh_bodies], config)
        for (oid, base, body), v in zip(zh_bodies, conv):
            if v != body:
                rows.append(dict(base, id=len(rows), kind=config, rate=0.0, chars=len(body), body=v))
    os.makedirs(os.path.dirname(out_path), exist_ok=True)
    tmp = out_path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(json.dumps({"version": VERSION, "seed": SEED}) + "\n")
        for r in rows:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    os.replace(tmp, out_path)
    return rows


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.join(here, "data"))
    ap.add_argument("--if-needed", action="store_true")
    ap.add_argument("--print-packages", action="store_true")
    a = ap.parse_args()
    if a.print_packages:
        print(" ".join(PACKAGES))
        return
    path = os.path.join(a.out, "cjk_heldout.jsonl")
    if a.if_needed and os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            head = json.loads(f.readline())
        if head.get("version") == VERSION and head.get("seed") == SEED:
            return
    rows = build(path)
    c = collections.Counter((r["lang"], r["source"], r["half"]) for r in rows if r["kind"] == "orig")
    for k in sorted(c):
        print("%s %-8s %-4s %5d passages" % (k[0], k[1], k[2], c[k]))
    print("%d documents -> %s" % (len(rows), path))


if __name__ == "__main__":
    main()
