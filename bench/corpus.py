#!/usr/bin/python3
# bench/corpus.py: owns the benchmark corpora (quality/corpus helper's file).
# Builds, deterministically and with the standard library only, from real text
# shipped in Debian packages (see PACKAGES below):
#   (a) a labelled near-duplicate corpus, English and Chinese:
#       bench/data/corpus_quality.jsonl        one JSON object per document
#       bench/data/corpus_quality_labels.tsv   the same without the body
#   (b) a table of real documents (1-10 KB each, >= 100 MB) for speed runs:
#       bench/data/corpus_big.csv              CSV with header id,lang,body
#   and bench/data/corpus_summary.txt (what it printed, plus a stamp).
#
# Usage: /usr/bin/python3 bench/corpus.py [--if-needed] [--sample N] [--out DIR]
#        /usr/bin/python3 bench/corpus.py --print-packages
# Load (b) with:  \copy t(id, lang, body) FROM 'bench/data/corpus_big.csv' WITH (FORMAT csv, HEADER true)
#
# Document sizes are UTF-8 bytes, 1 KB = 1024 bytes.
import argparse
import csv
import gzip
import hashlib
import html.parser
import json
import os
import random
import re
import sys
import time
import zlib

# Debian packages whose text is used (quality.sh installs them when missing).
PACKAGES = [
    "postgresql-doc-15",     # en: quality corpus originals + big table
    "python3.11-doc",        # en: big table (reST sources)
    "perl-doc",              # en: big table (POD)
    "perl-modules-5.36",     # en: big table (POD embedded in the modules)
    "linux-doc-6.1",         # en: big table (kernel Documentation); zh: its zh_CN translations
    "manpages",              # en: big table (man pages)
    "manpages-dev",          # en: big table (man pages)
    "debian-handbook",       # en: big table (en-US); zh: zh-CN
    "debian-reference-en",   # en: big table
    "debian-policy",         # en: big table
    "developers-reference",  # en: big table
    "python-django-doc",     # en: big table
    "nodejs-doc",            # en: big table (Markdown)
    "git-doc",               # en: big table
    "sqlite3-doc",           # en: big table
    "libreoffice-help-en-us",  # en: big table
    "cppreference-doc-en-html",  # en: big table
    "debian-edu-doc-zh-cn",  # zh: Debian Edu bookworm manual
    "debian-reference-zh-cn",  # zh
    "debian-faq-zh-cn",      # zh
    "maint-guide-zh-cn",     # zh
    "manpages-zh",           # zh: man pages (zh_CN only; zh_TW is the same text)
]

MIN_BYTES = 1024
MAX_BYTES = 10 * 1024
BIG_TARGET_BYTES = 100 * 1024 * 1024
SEED = 20240531
EDIT_PCTS = [1, 2, 3, 5, 10, 20, 30]
REORDER_SWAPS = [1, 3]
BOILER_LINES = [1, 3]

CJK_RE = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
WORD_RE = re.compile(r"[^\W_]+(?:['\u2019][^\W_]+)?")
CTRL_RE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def nbytes(s):
    return len(s.encode("utf-8"))


def cjk_count(s):
    return len(CJK_RE.findall(s))


def cjk_ratio(s):
    nonspace = len(s) - sum(1 for c in s if c.isspace())
    return cjk_count(s) / nonspace if nonspace else 0.0


def clean_text(s):
    s = s.replace("\r\n", "\n").replace("\r", "\n").replace("\u00a0", " ")
    s = CTRL_RE.sub("", s.replace("\t", "    "))
    s = re.sub(r"[ ]+\n", "\n", s)
    s = re.sub(r"\n{3,}", "\n\n", s)
    return s.strip()


# ---------------------------------------------------------------- HTML -> blocks
# A block is (kind, text); kind is 'h' (heading), 'p', 'pre' or 'item'.
BLOCK_TAGS = {"p", "div", "h1", "h2", "h3", "h4", "h5", "h6", "li", "dt", "dd", "tr",
              "pre", "blockquote", "table", "ul", "ol", "dl", "section", "article",
              "header", "footer", "caption", "figure", "body", "hr"}
ITEM_TAGS = {"li", "dt", "dd", "tr"}
SKIP_TAGS = {"script", "style", "head", "noscript"}
SKIP_CLASSES = {"navheader", "navfooter", "toc", "docnav", "list-of-tables",
                "list-of-figures", "list-of-examples", "breadcrumbs", "sphinxsidebar",
                "related", "footer", "t-navbar", "printfooter", "catlinks", "nosearch",
                "headerlink"}
SKIP_IDS = {"siteSub", "contentSub", "jump-to-nav", "mw-head", "mw-panel", "footer", "cpp-footer-base"}


class BlockParser(html.parser.HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.blocks = []
        self.buf = []
        self.kind = "p"
        self.skip = 0
        self.skip_tag = None
        self.pre = 0

    def flush(self):
        text = "".join(self.buf)
        self.buf = []
        if self.pre:
            lines = [l.rstrip() for l in text.split("\n")]
            text = "\n".join(lines).strip("\n")
            kind = "pre"
        else:
            text = "\n".join(" ".join(l.split()) for l in text.split("\n"))
            text = re.sub(r"\n+", "\n", text).strip()
            kind = self.kind
        if text.strip():
            self.blocks.append((kind, text))
        self.kind = "p"

    def handle_starttag(self, tag, attrs):
        if self.skip:
            if tag == self.skip_tag:
                self.skip += 1
            return
        cls = set()
        skip_id = False
        for k, v in attrs:
            if k == "class" and v:
                cls.update(v.split())
            elif k == "id" and v in SKIP_IDS:
                skip_id = True
        if tag in SKIP_TAGS or skip_id or (cls & SKIP_CLASSES):
            self.flush()
            self.skip, self.skip_tag = 1, tag
            return
        if tag == "br":
            self.buf.append("\n")
        elif tag in ("td", "th"):
            self.buf.append(" ")
        elif tag in BLOCK_TAGS:
            self.flush()
            if tag == "pre":
                self.pre += 1
            elif tag[0] == "h" and tag[1:].isdigit():
                self.kind = "h"
            elif tag in ITEM_TAGS:
                self.kind = "item"

    def handle_startendtag(self, tag, attrs):
        if self.skip:
            return
        if tag == "br":
            self.buf.append("\n")
        elif tag in BLOCK_TAGS:
            self.flush()

    def handle_endtag(self, tag):
        if self.skip:
            if tag == self.skip_tag:
                self.skip -= 1
            return
        if tag in BLOCK_TAGS:
            self.flush()
            if tag == "pre" and self.pre:
                self.pre -= 1

    def handle_data(self, data):
        if not self.skip:
            # outside <pre>, source line breaks are just spaces; <br> makes a line break
            self.buf.append(data if self.pre else data.replace("\n", " "))


def html_blocks(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        data = f.read()
    p = BlockParser()
    p.feed(data)
    p.close()
    p.flush()
    return p.blocks


# ---------------------------------------------------------------- text formats -> blocks
def para_blocks(text, heading_fn=None):
    """Split plain text on blank lines; heading_fn(par) -> bool marks headings."""
    out = []
    for par in re.split(r"\n\s*\n", text):
        par = par.strip("\n")
        if not par.strip():
            continue
        kind = "h" if heading_fn and heading_fn(par) else "p"
        out.append((kind, par.rstrip()))
    return out


RST_UNDERLINE = re.compile(r"^([=\-~^\"'`#*+:.])\1{2,}\s*$")


def rst_blocks(text):
    lines = text.split("\n")
    out_lines = []
    heads = set()
    for i, line in enumerate(lines):
        if RST_UNDERLINE.match(line):
            if out_lines and out_lines[-1].strip() and i > 0 and lines[i - 1].strip():
                heads.add(len(out_lines) - 1)
            continue
        m = re.match(r"^\s*\.\. [\w:-]+::\s*(.*)$", line)
        if m:
            line = m.group(1)
        elif re.match(r"^\s*\.\. (_|\|)", line) or re.match(r"^\s*:[\w -]+:(\s.*)?$", line):
            continue
        line = re.sub(r":[\w:.+-]+:`([^`<]*?)\s*(?:<[^`]*>)?`", r"\1", line)
        line = re.sub(r"``([^`]+)``", r"\1", line)
        line = re.sub(r"`([^`<]+?)\s*(?:<[^`]*>)?`_{0,2}", r"\1", line)
        out_lines.append(line)
    # headings become their own paragraphs
    buf = []
    for i, line in enumerate(out_lines):
        if i in heads:
            buf.append("")
            buf.append("\x01" + line.strip())
            buf.append("")
        else:
            buf.append(line)
    blocks = []
    for kind, par in para_blocks("\n".join(buf)):
        if par.startswith("\x01"):
            blocks.append(("h", par[1:]))
        else:
            blocks.append((kind, par))
    return blocks


POD_CODE = re.compile(r"[A-Z]<<+\s+(.*?)\s+>>+|[A-Z]<([^<>]*)>", re.S)


def pod_inline(s):
    for _ in range(5):
        t = POD_CODE.sub(lambda m: m.group(1) if m.group(1) is not None else m.group(2), s)
        if t == s:
            break
        s = t
    s = re.sub(r"\bE<gt>|E<gt>", ">", s)
    return s


def pod_blocks(text):
    blocks = []
    in_pod = True
    skip = False
    for par in re.split(r"\n\s*\n", text):
        if not par.strip():
            continue
        if par.startswith("="):
            cmd, _, rest = par.partition(" ")
            cmd = cmd.strip()
            if cmd.startswith("=head"):
                blocks.append(("h", pod_inline(" ".join(rest.split()))))
            elif cmd == "=item":
                rest = pod_inline(rest.strip())
                if rest and rest not in ("*",):
                    blocks.append(("item", rest))
            elif cmd == "=begin":
                skip = True
            elif cmd == "=end":
                skip = False
            elif cmd == "=cut":
                in_pod = False
            elif cmd == "=pod":
                in_pod = True
            continue
        if skip or not in_pod:
            continue
        if par[0] in " \t":
            blocks.append(("pre", par.rstrip()))
        else:
            blocks.append(("p", pod_inline(" ".join(par.split()))))
    return blocks


def pm_pod_blocks(path):
    """The POD embedded in a Perl module."""
    out, inpod = [], False
    for line in read_gz_or_plain(path).split("\n"):
        if re.match(r"^=[a-zA-Z]", line):
            inpod = not line.startswith("=cut")
            if not inpod:
                continue
        if inpod:
            out.append(line)
    return pod_blocks("\n".join(out))


ROFF_ESC = [
    (re.compile(r"\\f(?:\[[^\]]*\]|\(..|.)"), ""),
    (re.compile(r"\\s[+-]?\d"), ""),
    (re.compile(r"\\\((em|\-\-)"), "\u2014"),
    (re.compile(r"\\\(en"), "\u2013"),
    (re.compile(r"\\\(bu"), "\u2022"),
    (re.compile(r"\\\((aq|cq|oq)"), "'"),
    (re.compile(r"\\\((lq|rq|dq)"), '"'),
    (re.compile(r"\\\(co"), "\u00a9"),
    (re.compile(r"\\\(.."), ""),
    (re.compile(r"\\\[[^\]]*\]"), ""),
    (re.compile(r"\\\*(?:\(..|\[[^\]]*\]|.)"), ""),
    (re.compile(r"\\[nk](?:\(..|\[[^\]]*\]|.)"), ""),
    (re.compile(r"\\[hvwlLoxXbDNZ]'[^']*'"), ""),
    (re.compile(r"\\[-]"), "-"),
    (re.compile(r"\\e"), "\\\\"),
    (re.compile(r"\\[ ~0]"), " "),
    (re.compile(r"\\[&|^%c:)dur/,!]"), ""),
    (re.compile(r"\\(.)"), r"\1"),
]
ROFF_TEXT_MACROS = {"B", "I", "SM", "SB", "IP", "TP", "Nm", "Nd", "Op", "Fl", "Ar", "Xr",
                    "Pa", "Dv", "Er", "Ev", "Fn", "Fa", "Ft", "Va", "Cm", "Em", "Sy",
                    "Li", "Ql", "Dq", "Sq", "Pq", "Ic", "In", "Cd", "Lk", "Mt", "It",
                    "UR", "MT", "OP", "SY", "Vb", "Ve", "Aq", "Bq", "Brq", "Ns", "No"}
ROFF_ALT = {"BR", "RB", "BI", "IB", "IR", "RI"}


def roff_unescape(s):
    for rx, rep in ROFF_ESC:
        s = rx.sub(rep, s)
    return s


def roff_args(s):
    args = re.findall(r'"((?:[^"]|"")*)"|(\S+)', s)
    return [a if a else b for a, b in args]


def roff_blocks(text):
    blocks = []
    cur = []
    nofill = False
    in_de = False

    def flush(kind="p"):
        if cur:
            if nofill:
                t = "\n".join(l.rstrip() for l in cur).strip("\n")
                k = "pre"
            else:
                t = " ".join(" ".join(cur).split())
                k = kind
            if t.strip():
                blocks.append((k, t))
            cur.clear()

    for raw in text.split("\n"):
        if in_de:
            if raw.startswith(".."):
                in_de = False
            continue
        if raw.startswith(('.\\"', "'\\\"", '.\\}', "\\\"")) or raw.strip() in (".", "'"):
            continue
        if raw.startswith((".", "'")):
            m = re.match(r"^[.']\s*(\S+)\s*(.*)$", raw)
            if not m:
                continue
            req, rest = m.group(1), m.group(2)
            if req in ("de", "de1", "am", "ig"):
                in_de = True
                continue
            if req in ("SH", "SS", "Sh", "Ss"):
                flush()
                blocks.append(("h", roff_unescape(" ".join(roff_args(rest)))))
                continue
            if req in ("PP", "LP", "P", "sp", "TP", "IP", "HP", "Pp", "Bl", "El", "RS", "RE", "TS", "TE", "EX", "EE"):
                flush()
            if req in ("nf", "EX", "Bd"):
                flush()
                nofill = True
                continue
            if req in ("fi", "EE", "Ed"):
                flush()
                nofill = False
                continue
            if req == "br":
                if not nofill:
                    cur.append("\n")
                continue
            if req in ROFF_ALT:
                cur.append(roff_unescape("".join(roff_args(rest))))
            elif req in ROFF_TEXT_MACROS or (req[:1].isupper() and req not in ("TH", "Dd", "Dt", "Os", "TS")):
                if rest:
                    cur.append(roff_unescape(" ".join(roff_args(rest))))
            continue
        cur.append(roff_unescape(raw))
    flush()
    # the " ".join above loses .br line breaks; keep them as newlines
    return [(k, t.replace(" \n ", "\n").replace("\n ", "\n").replace(" \n", "\n")) for k, t in blocks]


# ---------------------------------------------------------------- blocks -> documents
def split_long(text, limit=4096):
    """Split a text longer than limit bytes at line, then sentence, then space boundaries."""
    if nbytes(text) <= limit:
        return [text]
    for sep_re in (r"(?<=\n)", r"(?<=[.!?。！？；])\s*", r"(?<= )"):
        parts = [p for p in re.split(sep_re, text) if p]
        if len(parts) > 1:
            break
    else:
        parts = [text[i:i + limit // 3] for i in range(0, len(text), limit // 3)]
    out, cur = [], ""
    for p in parts:
        if cur and nbytes(cur) + nbytes(p) > limit:
            out.append(cur)
            cur = ""
        cur += p
    if cur:
        out.append(cur)
    res = []
    for o in out:
        if nbytes(o) > limit and len(o) > 1:
            res.extend(split_long(o, limit) if o != text else [o[i:i + limit // 3] for i in range(0, len(o), limit // 3)])
        else:
            res.append(o)
    return [r.strip("\n") for r in res if r.strip()]


def render(blocks):
    out = []
    prev = None
    for kind, text in blocks:
        if out:
            out.append("\n" if (prev == "item" and kind == "item") else "\n\n")
        out.append(text)
        prev = kind
    return clean_text("".join(out))


def group_docs(blocks, rng):
    pieces = []
    for kind, text in blocks:
        if nbytes(text) > 8192:
            pieces.extend((kind if kind != "h" else "p", t) for t in split_long(text))
        else:
            pieces.append((kind, text))
    docs, cur, size = [], [], 0
    target = rng.randint(MIN_BYTES, 6 * 1024)
    for kind, text in pieces:
        b = nbytes(text) + 2
        if cur and ((kind == "h" and size >= target) or size + b > MAX_BYTES):
            docs.append(cur)
            cur, size = [], 0
            target = rng.randint(MIN_BYTES, 6 * 1024)
        cur.append((kind, text))
        size += b
    if cur:
        if docs and size < MIN_BYTES and sum(nbytes(t) + 2 for _, t in docs[-1]) + size <= MAX_BYTES:
            docs[-1].extend(cur)
        else:
            docs.append(cur)
    out = []
    for d in docs:
        t = render(d)
        if MIN_BYTES <= nbytes(t) <= MAX_BYTES:
            out.append(t)
    return out


# ---------------------------------------------------------------- sources
def read_gz_or_plain(path):
    if path.endswith(".gz"):
        with gzip.open(path, "rb") as f:
            data = f.read()
    else:
        with open(path, "rb") as f:
            data = f.read()
    return data.decode("utf-8", errors="replace")


def walk(root, pred):
    out = []
    for d, dirs, files in os.walk(root):
        dirs.sort()
        for fn in sorted(files):
            p = os.path.join(d, fn)
            if not os.path.islink(p) and pred(p):
                out.append(p)
    return out


def pkg_files(pkg, pred):
    """Regular files of an installed Debian package (sorted), filtered by pred."""
    lst = "/var/lib/dpkg/info/%s.list" % pkg
    if not os.path.exists(lst):
        lst = "/var/lib/dpkg/info/%s:amd64.list" % pkg
    if not os.path.exists(lst):
        return []
    with open(lst, encoding="utf-8", errors="replace") as f:
        paths = [l.rstrip("\n") for l in f]
    return sorted(p for p in paths if os.path.isfile(p) and not os.path.islink(p) and pred(p))


PG_HTML = "/usr/share/doc/postgresql-doc-15/html"
KDOC = "/usr/share/doc/linux-doc-6.1/Documentation"
HANDBOOK = "/usr/share/doc/debian-handbook/html"


def is_kernel_en(p):
    rel = os.path.relpath(p, KDOC)
    if rel.startswith("translations/") or rel.startswith("devicetree/bindings") and not rel.endswith(".txt.gz"):
        return False
    base = os.path.basename(p)
    return base.endswith((".rst.gz", ".txt.gz")) or (rel.startswith("ABI/") and base.count(".") == 1)


def is_man_page(p):
    return re.match(r"^/usr/share/man/man\d/", p) is not None and p.endswith(".gz")


# (name, package, lang, list-of-files function, reader -> blocks)
def sources():
    return [
        ("postgresql-doc-15", "postgresql-doc-15", "en",
         lambda: walk(PG_HTML, lambda p: p.endswith(".html")), html_blocks),
        ("debian-edu-doc-zh-cn", "debian-edu-doc-zh-cn", "zh",
         # bookworm only: the bullseye manual is mostly the same text
         lambda: ["/usr/share/doc/debian-edu-doc-zh-cn/debian-edu-bookworm-manual.html"], html_blocks),
        ("debian-handbook-zh", "debian-handbook", "zh",
         lambda: walk(os.path.join(HANDBOOK, "zh-CN"), lambda p: p.endswith(".html")), html_blocks),
        ("debian-reference-zh-cn", "debian-reference-zh-cn", "zh",
         lambda: walk("/usr/share/debian-reference", lambda p: re.search(r"/(ch\d\d|apa|pr01)\.zh-cn\.html$", p) is not None),
         html_blocks),
        ("debian-faq-zh-cn", "debian-faq-zh-cn", "zh",
         lambda: walk("/usr/share/doc/debian/FAQ/zh-cn", lambda p: p.endswith(".html")), html_blocks),
        ("maint-guide-zh-cn", "maint-guide-zh-cn", "zh",
         lambda: walk("/usr/share/doc/maint-guide-zh-cn/html", lambda p: p.endswith(".html")), html_blocks),
        ("manpages-zh", "manpages-zh", "zh",
         lambda: walk("/usr/share/man/zh_CN", lambda p: p.endswith(".gz")),
         lambda p: roff_blocks(read_gz_or_plain(p))),
        ("linux-doc-zh", "linux-doc-6.1", "zh",
         lambda: walk(os.path.join(KDOC, "translations/zh_CN"), lambda p: p.endswith((".rst.gz", ".txt.gz"))),
         lambda p: rst_blocks(read_gz_or_plain(p))),
        # English sources used only by the big table
        ("python3.11-doc", "python3.11-doc", "en",
         lambda: walk("/usr/share/doc/python3.11/html/_sources", lambda p: p.endswith(".txt")),
         lambda p: rst_blocks(read_gz_or_plain(p))),
        ("perl-doc", "perl-doc", "en",
         lambda: walk("/usr/share/perl/5.36.0/pod", lambda p: p.endswith(".pod")),
         lambda p: pod_blocks(read_gz_or_plain(p))),
        ("perl-modules-5.36", "perl-modules-5.36", "en",
         lambda: pkg_files("perl-modules-5.36", lambda p: p.endswith(".pm")), pm_pod_blocks),
        ("linux-doc-6.1", "linux-doc-6.1", "en",
         lambda: walk(KDOC, is_kernel_en), lambda p: rst_blocks(read_gz_or_plain(p))),
        ("manpages", "manpages", "en", lambda: pkg_files("manpages", is_man_page),
         lambda p: roff_blocks(read_gz_or_plain(p))),
        ("manpages-dev", "manpages-dev", "en", lambda: pkg_files("manpages-dev", is_man_page),
         lambda p: roff_blocks(read_gz_or_plain(p))),
        ("debian-handbook-en", "debian-handbook", "en",
         lambda: walk(os.path.join(HANDBOOK, "en-US"), lambda p: p.endswith(".html")), html_blocks),
        ("debian-reference-en", "debian-reference-en", "en",
         lambda: walk("/usr/share/debian-reference", lambda p: re.search(r"/(ch\d\d|apa|pr01)\.en\.html$", p) is not None),
         html_blocks),
        ("debian-policy", "debian-policy", "en",
         lambda: walk("/usr/share/doc/debian-policy", lambda p: p.endswith(".html") and not p.endswith(("genindex.html", "search.html"))),
         html_blocks),
        ("developers-reference", "developers-reference", "en",
         lambda: walk("/usr/share/developers-reference", lambda p: p.endswith(".html") and not p.endswith(("genindex.html", "search.html"))),
         html_blocks),
        ("python-django-doc", "python-django-doc", "en",
         lambda: walk("/usr/share/doc/python-django-doc/html",
                      lambda p: p.endswith(".html") and "/_modules/" not in p
                      and not p.endswith(("genindex.html", "search.html", "py-modindex.html"))),
         html_blocks),
        ("nodejs-doc", "nodejs-doc", "en",
         lambda: walk("/usr/share/doc/nodejs/api", lambda p: p.endswith(".md.gz")),
         lambda p: rst_blocks(read_gz_or_plain(p))),
        ("git-doc", "git-doc", "en",
         lambda: walk("/usr/share/doc/git-doc", lambda p: p.endswith(".txt")),
         lambda p: rst_blocks(read_gz_or_plain(p))),
        ("sqlite3-doc", "sqlite3-doc", "en",
         lambda: walk("/usr/share/doc/sqlite3", lambda p: p.endswith(".html")), html_blocks),
        ("libreoffice-help-en-us", "libreoffice-help-en-us", "en",
         lambda: walk("/usr/share/libreoffice/help/en-US", lambda p: p.endswith(".html")), html_blocks),
        ("cppreference-doc-en-html", "cppreference-doc-en-html", "en",
         lambda: pkg_files("cppreference-doc-en-html", lambda p: p.endswith(".html")), html_blocks),
        ("linux-doc-6.1-dt-yaml", "linux-doc-6.1", "en",
         lambda: walk(os.path.join(KDOC, "devicetree/bindings"), lambda p: p.endswith(".yaml.gz")),
         lambda p: para_blocks(read_gz_or_plain(p))),
    ]


def load_all():
    """Returns list of dicts: source, package, lang, path, chunk, body (1-10 KB)."""
    docs = []
    per_source = []
    for name, pkg, lang, files_fn, reader in sources():
        t0 = time.time()
        files = files_fn()
        if not files:
            sys.exit("corpus.py: no files for source %s: apt-get install %s" % (name, pkg))
        n0 = len(docs)
        for path in files:
            try:
                blocks = reader(path)
            except Exception as e:  # a malformed file is skipped, never fatal
                print("  skip %s: %s" % (path, e), file=sys.stderr)
                continue
            rng = random.Random("%d:%s" % (SEED, path))
            for i, body in enumerate(group_docs(blocks, rng)):
                dlang = lang
                if lang == "zh" and cjk_ratio(body) < 0.05:
                    dlang = "en"  # untranslated part of a Chinese package
                docs.append({"source": name, "package": pkg, "lang": dlang, "path": path,
                             "chunk": i, "body": body})
        per_source.append((name, pkg, len(files), len(docs) - n0,
                           sum(nbytes(d["body"]) for d in docs[n0:]), time.time() - t0))
    return docs, per_source


def norm_key(body):
    return hashlib.sha1(" ".join(body.split()).encode("utf-8")).digest()


# ---------------------------------------------------------------- near-duplicate filter for originals
def sampled_features(body, lang):
    if lang == "zh":
        s = "".join(body.split())
        grams = (s[i:i + 4] for i in range(max(1, len(s) - 3)))
    else:
        w = [x.lower() for x in WORD_RE.findall(body)]
        grams = (" ".join(w[i:i + 4]) for i in range(max(1, len(w) - 3)))
    out = set()
    for g in grams:
        h = zlib.crc32(g.encode("utf-8"))
        if h % 4 == 0:
            out.add(h)
    return out


def drop_near_duplicates(docs):
    """Keep a document unless its sampled 4-gram set has Jaccard >= 0.5 with, or is
    >= 80% contained in, one already kept.  Returns (kept, dropped_count)."""
    index = {}
    kept, feats = [], []
    dropped = 0
    for d in docs:
        f = sampled_features(d["body"], d["lang"])
        counts = {}
        for h in f:
            post = index.get(h)
            if post and len(post) <= 64:
                for j in post:
                    counts[j] = counts.get(j, 0) + 1
        dup = False
        for j, c in counts.items():
            if not f:
                break
            union = len(f) + len(feats[j]) - c
            if c / union >= 0.5 or c / min(len(f), len(feats[j])) >= 0.8:
                dup = True
                break
        if dup or not f:
            dropped += 1
            continue
        k = len(kept)
        kept.append(d)
        feats.append(f)
        for h in f:
            index.setdefault(h, []).append(k)
    return kept, dropped


# ---------------------------------------------------------------- variants
BOILER = {
    "en": {
        "head": ["Home | Documentation | Download | Community | Blog | Contact",
                 "Posted by admin on 2023-05-17 in Tutorials",
                 "You are here: Home > Docs > Articles",
                 "Skip to main content",
                 "Subscribe to our newsletter for weekly updates"],
        "foot": ["Copyright \u00a9 2024 Example Networks Ltd. All rights reserved.",
                 "This article was originally published on example.org. Please credit the source when reposting.",
                 "Share this: Twitter Facebook LinkedIn Reddit Email",
                 "Privacy Policy | Terms of Use | Cookie Settings",
                 "Related posts: Getting started | Frequently asked questions"],
    },
    "zh": {
        "head": ["首页 | 新闻 | 文档 | 下载 | 社区 | 联系我们",
                 "发布时间：2023年5月17日　作者：管理员　阅读次数：1024",
                 "当前位置：首页 > 技术文档 > 教程",
                 "欢迎访问本站，收藏本站方便下次访问",
                 "关注我们的微信公众号，获取最新资讯"],
        "foot": ["转载请注明出处",
                 "版权所有 © 2024 某某网络科技有限公司 保留所有权利",
                 "本文来源于网络，如有侵权请联系删除",
                 "分享到：微博 微信 QQ空间 豆瓣",
                 "上一篇：入门指南　下一篇：常见问题解答"],
    },
}


def edit_words(body, pct, rng, vocab):
    spans = [m.span() for m in WORD_RE.finditer(body)]
    return apply_edits(body, spans, pct, rng, vocab, " ")


def edit_cjk(body, pct, rng, vocab):
    spans = [m.span() for m in CJK_RE.finditer(body)]
    return apply_edits(body, spans, pct, rng, vocab, "")


def apply_edits(body, spans, pct, rng, vocab, joiner):
    n = max(1, round(len(spans) * pct / 100.0))
    chosen = sorted(rng.sample(range(len(spans)), min(n, len(spans))))
    ops = {}
    for i in chosen:
        op = rng.choice(("sub", "del", "ins"))
        new = rng.choice(vocab)
        while new.lower() == body[spans[i][0]:spans[i][1]].lower():
            new = rng.choice(vocab)
        ops[i] = (op, new)
    out, pos = [], 0
    for i, (a, b) in enumerate(spans):
        if i not in ops:
            continue
        op, new = ops[i]
        out.append(body[pos:a])
        if op == "sub":
            out.append(new)
            pos = b
        elif op == "del":
            pos = b
            if joiner and body[b:b + 1] == " ":
                pos = b + 1
        else:  # insert before the word
            out.append(new + joiner)
            pos = a
    out.append(body[pos:])
    return "".join(out), len(chosen)


SENT_BOUNDARY = re.compile(r"(?<=[.!?])\s+(?=\S)|(?<=[。！？])|\n+")


def reorder(body, swaps, rng):
    segs, pos = [], 0
    for m in SENT_BOUNDARY.finditer(body):
        if m.end() > pos:
            segs.append([body[pos:m.start()], body[m.start():m.end()]])
            pos = m.end()
    if pos < len(body):
        segs.append([body[pos:], ""])
    idx = [i for i, s in enumerate(segs) if len(s[0].strip()) >= 10]
    if len(idx) < 2:
        return None
    for _ in range(swaps):
        i, j = rng.sample(idx, 2)
        segs[i][0], segs[j][0] = segs[j][0], segs[i][0]
    return "".join(a + b for a, b in segs)


def add_boiler(body, lang, nlines, rng):
    pool = BOILER[lang]
    head = rng.sample(pool["head"], nlines)
    foot = rng.sample(pool["foot"], nlines)
    return "\n".join(head) + "\n\n" + body + "\n\n" + "\n".join(foot)


def build_quality(all_docs, sample_n):
    """Originals: English from postgresql-doc-15; Chinese from the zh sources."""
    rows = []
    stats = {}
    next_id = 1
    for lang in ("en", "zh"):
        if lang == "en":
            cand = [d for d in all_docs if d["source"] == "postgresql-doc-15"]
        else:
            cand = [d for d in all_docs if d["package"] != "linux-doc-6.1" or d["source"] == "linux-doc-zh"]
            cand = [d for d in cand if d["lang"] == "zh" and cjk_count(d["body"]) >= 300
                    and cjk_ratio(d["body"]) >= 0.3]
        seen, uniq = set(), []
        for d in cand:
            k = norm_key(d["body"])
            if k not in seen:
                seen.add(k)
                uniq.append(d)
        exact_dups = len(cand) - len(uniq)
        origs, near_dups = drop_near_duplicates(uniq)
        orig_rows = []
        for d in origs:
            r = {"id": next_id, "lang": lang, "orig_id": next_id, "kind": "orig", "level": 0,
                 "label": "orig", "source": "%s:%s#%d" % (d["source"], os.path.relpath(d["path"], "/usr/share"), d["chunk"]),
                 "edits": 0, "body": d["body"]}
            next_id += 1
            orig_rows.append(r)
        rows.extend(orig_rows)
        # vocabulary: the natural token stream of all originals
        if lang == "en":
            vocab = [w for r in orig_rows for w in WORD_RE.findall(r["body"])]
        else:
            vocab = CJK_RE.findall("".join(r["body"] for r in orig_rows))
        rng = random.Random("%d:sample:%s" % (SEED, lang))
        sample = sorted(rng.sample(range(len(orig_rows)), min(sample_n, len(orig_rows))))
        nvar = 0
        for si in sample:
            o = orig_rows[si]
            vr = random.Random("%d:variants:%d" % (SEED, o["id"]))
            variants = []
            for pct in EDIT_PCTS:
                fn = edit_words if lang == "en" else edit_cjk
                body, nedits = fn(o["body"], pct, vr, vocab)
                variants.append(("edit", pct, body, nedits))
            for sw in REORDER_SWAPS:
                body = reorder(o["body"], sw, vr)
                if body is not None:
                    variants.append(("reorder", sw, body, sw))
            for nl in BOILER_LINES:
                variants.append(("boiler", nl, add_boiler(o["body"], lang, nl, vr), 2 * nl))
            for kind, level, body, nedits in variants:
                rows.append({"id": next_id, "lang": lang, "orig_id": o["id"], "kind": kind, "level": level,
                             "label": "%s%d" % (kind, level), "source": o["source"], "edits": nedits,
                             "body": body})
                next_id += 1
                nvar += 1
        stats[lang] = {"candidates": len(cand), "exact_dups": exact_dups, "near_dups": near_dups,
                       "originals": len(orig_rows), "sampled": len(sample), "variants": nvar,
                       "orig_bytes": sum(nbytes(r["body"]) for r in orig_rows)}
    return rows, stats


# ---------------------------------------------------------------- big table
def build_big(all_docs):
    seen, uniq = set(), []
    for d in all_docs:
        k = norm_key(d["body"])
        if k not in seen:
            seen.add(k)
            uniq.append(d)
    real_bytes = sum(nbytes(d["body"]) for d in uniq)
    rows = [(d["lang"], d["body"]) for d in uniq]
    repeated = 0
    total = real_bytes
    i = 0
    while total < BIG_TARGET_BYTES and uniq:
        rows.append(rows[i % len(uniq)])
        total += nbytes(rows[-1][1])
        repeated += 1
        i += 1
    return rows, {"exact_dups": len(all_docs) - len(uniq), "real_docs": len(uniq),
                  "real_bytes": real_bytes, "repeated_docs": repeated, "total_docs": len(rows),
                  "total_bytes": total}


def file_sha(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "data"))
    ap.add_argument("--sample", type=int, default=300, help="originals per language that get variants")
    ap.add_argument("--if-needed", action="store_true", help="do nothing if the outputs are up to date")
    ap.add_argument("--print-packages", action="store_true")
    args = ap.parse_args()
    if args.print_packages:
        print(" ".join(PACKAGES))
        return
    stamp = "stamp: corpus.py sha256=%s sample=%d" % (file_sha(os.path.abspath(__file__)), args.sample)
    outs = ["corpus_quality.jsonl", "corpus_quality_labels.tsv", "corpus_big.csv", "corpus_summary.txt"]
    summ_path = os.path.join(args.out, "corpus_summary.txt")
    if args.if_needed and all(os.path.exists(os.path.join(args.out, o)) for o in outs):
        with open(summ_path, encoding="utf-8") as f:
            if stamp in f.read():
                print("corpus.py: %s is up to date" % args.out)
                return
    os.makedirs(args.out, exist_ok=True)
    t0 = time.time()
    all_docs, per_source = load_all()
    qrows, qstats = build_quality(all_docs, args.sample)
    brows, bstats = build_big(all_docs)

    qpath = os.path.join(args.out, "corpus_quality.jsonl")
    with open(qpath + ".tmp", "w", encoding="utf-8") as f:
        for r in qrows:
            f.write(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n")
    os.replace(qpath + ".tmp", qpath)
    lpath = os.path.join(args.out, "corpus_quality_labels.tsv")
    with open(lpath + ".tmp", "w", encoding="utf-8") as f:
        f.write("id\tlang\torig_id\tkind\tlevel\tlabel\tedits\tbytes\tsource\n")
        for r in qrows:
            f.write("%d\t%s\t%d\t%s\t%d\t%s\t%d\t%d\t%s\n" % (r["id"], r["lang"], r["orig_id"], r["kind"], r["level"],
                                                           r["label"], r["edits"], nbytes(r["body"]), r["source"]))
    os.replace(lpath + ".tmp", lpath)
    bpath = os.path.join(args.out, "corpus_big.csv")
    with open(bpath + ".tmp", "w", encoding="utf-8", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["id", "lang", "body"])
        for i, (lang, body) in enumerate(brows, 1):
            w.writerow([i, lang, body])
    os.replace(bpath + ".tmp", bpath)

    L = []
    L.append("corpus.py summary (documents are 1-10 KB of UTF-8; KB = 1024 bytes)")
    L.append("packages: " + " ".join(PACKAGES))
    L.append("")
    L.append("%-24s %-22s %7s %7s %9s %6s" % ("source", "package", "files", "docs", "MB", "sec"))
    for name, pkg, nf, nd, nb, dt in per_source:
        L.append("%-24s %-22s %7d %7d %9.2f %6.1f" % (name, pkg, nf, nd, nb / 2**20, dt))
    L.append("")
    L.append("(a) quality corpus: %s" % qpath)
    for lang in ("en", "zh"):
        s = qstats[lang]
        kinds = {}
        for r in qrows:
            if r["lang"] == lang and r["kind"] != "orig":
                kinds[r["label"]] = kinds.get(r["label"], 0) + 1
        L.append("  %s: %d candidate docs, %d exact duplicates and %d near duplicates dropped -> %d originals "
                 "(%.2f MB, mean %.1f KB); %d sampled originals -> %d variants" % (
                     lang, s["candidates"], s["exact_dups"], s["near_dups"], s["originals"],
                     s["orig_bytes"] / 2**20, s["orig_bytes"] / 1024 / max(1, s["originals"]),
                     s["sampled"], s["variants"]))
        L.append("      variants per label: " + ", ".join("%s=%d" % kv for kv in sorted(kinds.items())))
    L.append("  total rows: %d" % len(qrows))
    L.append("")
    L.append("(b) big table: %s" % bpath)
    langs = {}
    for lang, body in brows:
        langs[lang] = langs.get(lang, 0) + 1
    L.append("  %d real documents (%.1f MB of text; %d exact duplicates dropped); %s" % (
        bstats["real_docs"], bstats["real_bytes"] / 2**20, bstats["exact_dups"],
        "no repeats" if not bstats["repeated_docs"] else
        "REPEATED %d documents to reach 100 MB" % bstats["repeated_docs"]))
    L.append("  total %d rows, %.1f MB of text; per lang: %s" % (
        bstats["total_docs"], bstats["total_bytes"] / 2**20, ", ".join("%s=%d" % kv for kv in sorted(langs.items()))))
    L.append("  file size %.1f MB" % (os.path.getsize(bpath) / 2**20))
    L.append("")
    L.append("elapsed %.1f s" % (time.time() - t0))
    text = "\n".join(L) + "\n"
    print(text, end="")
    with open(summ_path, "w", encoding="utf-8") as f:
        f.write(text + stamp + "\n")


if __name__ == "__main__":
    main()
