#!/usr/bin/env python3
"""
gen_unicode_table.py -- generator for src/core/unicode_table.h

This script owns src/core/unicode_table.h: the Unicode character-class ranges and
simple case-folding table used by the simhash tokenizer, which splits text
into tokens the same way on every server whatever its locale.

Run it from the repository root:

    python3 src/core/gen_unicode_table.py > src/core/unicode_table.h

It reads UnicodeData.txt, Scripts.txt and CaseFolding.txt from Debian's
unicode-data package (/usr/share/unicode/, or the directory given with
--unicode-dir), uses the Python 3 standard library only, and writes the
header to standard output.  The output is deterministic: running it again
on the same input gives a byte-identical header.

The generated header is committed and must NOT be regenerated with another
Unicode version: the tables define token boundaries and case folding, so
changing them changes stored fingerprints.  A new Unicode version needs a new
tokenizer version (and a new, separately named table).  For that reason the
script refuses to run unless the input files are Unicode 15.0.0.

Classification, for every assigned codepoint >= U+0080 (ASCII is handled
directly in the C code):
  - general category M* (Mn, Mc, Me)                     -> UC_MARK
  - L* or Nl whose script is one of SINGLE_SCRIPTS         -> UC_SINGLE
  - L* in U+3000..U+30FF or U+FF61..U+FF9F (any script)    -> UC_SINGLE
  - other L*, and all N* (Nd, Nl, No)                      -> UC_WORD
  - everything else (P*, S*, Z*, C*, unassigned)           -> UC_SEP,
    which is not listed in the table.
Case folding: CaseFolding.txt statuses C and S (simple case folding), for
source codepoints >= U+0080 (the target may be ASCII, e.g. U+212A -> 'k').
"""

import argparse
import os
import sys

UNICODE_VERSION = "15.0.0"
DEBIAN_PACKAGE = "unicode-data 15.0.0-1"

UC_SEP = 0
UC_WORD = 1
UC_SINGLE = 2
UC_MARK = 3
CLASS_NAMES = {UC_WORD: "UC_WORD", UC_SINGLE: "UC_SINGLE", UC_MARK: "UC_MARK"}

# Scripts written without spaces between words: each letter is a token.
SINGLE_SCRIPTS = frozenset([
    "Han", "Hiragana", "Katakana", "Hangul", "Bopomofo",
    "Thai", "Lao", "Khmer", "Myanmar",
])

# Letters in these blocks are UC_SINGLE whatever their script (e.g. U+30FC
# KATAKANA-HIRAGANA PROLONGED SOUND MARK and U+FF70, which are Common).
SINGLE_BLOCKS = ((0x3000, 0x30FF), (0xFF61, 0xFF9F))

MAX_CP = 0x10FFFF
RANGES_PER_LINE = 4
FOLDS_PER_LINE = 6


def die(msg):
    sys.stderr.write("gen_unicode_table.py: %s\n" % msg)
    sys.exit(1)


def open_ucd(directory, name):
    path = os.path.join(directory, name)
    try:
        return open(path, encoding="utf-8")
    except OSError as e:
        die("cannot open %s: %s" % (path, e))


def check_version(directory, name):
    """Scripts.txt / CaseFolding.txt start with '# Name-X.Y.Z.txt'."""
    with open_ucd(directory, name) as f:
        first = f.readline().strip()
    stem = name[:-len(".txt")]
    expected = "# %s-%s.txt" % (stem, UNICODE_VERSION)
    if first != expected:
        die("%s is not Unicode %s (first line %r, expected %r); the "
            "committed tables must not be regenerated with another Unicode "
            "version" % (name, UNICODE_VERSION, first, expected))


def parse_cp_range(field):
    field = field.strip()
    if ".." in field:
        a, b = field.split("..")
        return int(a, 16), int(b, 16)
    cp = int(field, 16)
    return cp, cp


def read_general_categories(directory):
    """Return a list gc[cp] -> general category string, or None if unassigned."""
    gc = [None] * (MAX_CP + 1)
    range_first = None
    with open_ucd(directory, "UnicodeData.txt") as f:
        for lineno, line in enumerate(f, 1):
            line = line.strip()
            if not line:
                continue
            fields = line.split(";")
            if len(fields) != 15:
                die("UnicodeData.txt:%d: malformed line" % lineno)
            cp = int(fields[0], 16)
            name = fields[1]
            cat = fields[2]
            if name.endswith(", First>"):
                if range_first is not None:
                    die("UnicodeData.txt:%d: nested First>" % lineno)
                range_first = (cp, name[:-len(", First>")], cat)
                continue
            if name.endswith(", Last>"):
                if range_first is None:
                    die("UnicodeData.txt:%d: Last> without First>" % lineno)
                first_cp, first_name, first_cat = range_first
                if (first_name != name[:-len(", Last>")] or first_cat != cat
                        or first_cp > cp):
                    die("UnicodeData.txt:%d: mismatched First>/Last>" % lineno)
                for c in range(first_cp, cp + 1):
                    gc[c] = cat
                range_first = None
                continue
            if range_first is not None:
                die("UnicodeData.txt:%d: expected Last>" % lineno)
            gc[cp] = cat
    if range_first is not None:
        die("UnicodeData.txt: unterminated First> range")
    return gc


def read_single_script_flags(directory):
    """Return a bytearray flag[cp] = 1 if cp's script is in SINGLE_SCRIPTS."""
    flag = bytearray(MAX_CP + 1)
    seen = set()
    with open_ucd(directory, "Scripts.txt") as f:
        for line in f:
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            rng, script = [x.strip() for x in line.split(";")]
            if script in SINGLE_SCRIPTS:
                seen.add(script)
                a, b = parse_cp_range(rng)
                for c in range(a, b + 1):
                    flag[c] = 1
    missing = SINGLE_SCRIPTS - seen
    if missing:
        die("Scripts.txt: scripts not found: %s" % ", ".join(sorted(missing)))
    return flag


def classify(gc, single_script):
    cls = bytearray(MAX_CP + 1)          # UC_SEP everywhere by default
    for cp in range(0x80, MAX_CP + 1):
        cat = gc[cp]
        if cat is None:
            continue
        major = cat[0]
        if major == "M":
            cls[cp] = UC_MARK
        elif major == "L" or cat == "Nl":
            in_block = major == "L" and any(
                lo <= cp <= hi for lo, hi in SINGLE_BLOCKS)
            if single_script[cp] or in_block:
                cls[cp] = UC_SINGLE
            else:
                cls[cp] = UC_WORD
        elif major == "N":
            cls[cp] = UC_WORD
    return cls


def build_ranges(cls):
    """Maximal runs of equal non-SEP class, sorted by first codepoint."""
    ranges = []
    cp = 0x80
    while cp <= MAX_CP:
        c = cls[cp]
        if c == UC_SEP:
            cp += 1
            continue
        start = cp
        while cp + 1 <= MAX_CP and cls[cp + 1] == c:
            cp += 1
        ranges.append((start, cp, c))
        cp += 1
    return ranges


def read_folds(directory):
    folds = {}
    with open_ucd(directory, "CaseFolding.txt") as f:
        for lineno, line in enumerate(f, 1):
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            fields = [x.strip() for x in line.split(";")]
            code, status, mapping = fields[0], fields[1], fields[2]
            if status not in ("C", "S"):
                continue
            src = int(code, 16)
            if src < 0x80:
                continue
            targets = mapping.split()
            if len(targets) != 1:
                die("CaseFolding.txt:%d: status %s with multi-codepoint "
                    "mapping" % (lineno, status))
            if src in folds:
                die("CaseFolding.txt:%d: duplicate C/S entry for %04X"
                    % (lineno, src))
            folds[src] = int(targets[0], 16)
    return sorted(folds.items())


def emit(ranges, folds):
    out = []
    w = out.append
    counts = {UC_WORD: 0, UC_SINGLE: 0, UC_MARK: 0}
    for first, last, c in ranges:
        counts[c] += last - first + 1

    w("/*\n")
    w(" * unicode_table.h -- Unicode tables for the simhash tokenizer\n")
    w(" *\n")
    w(" * GENERATED FILE: generated by src/core/gen_unicode_table.py from Unicode %s\n"
      % UNICODE_VERSION)
    w(" * (Debian %s: UnicodeData.txt, Scripts.txt, CaseFolding.txt).\n"
      % DEBIAN_PACKAGE)
    w(" *\n")
    w(" * DO NOT EDIT OR REGENERATE with another Unicode version: the tables\n")
    w(" * define token boundaries and case folding, so changing them changes\n")
    w(" * stored fingerprints.  A new Unicode version needs a new tokenizer\n")
    w(" * version.\n")
    w(" *\n")
    w(" * unicode_ranges: codepoints >= 0x80 that are not separators, as\n")
    w(" * maximal runs of one class, sorted by first and non-overlapping;\n")
    w(" * look up by binary search, absent means UC_SEP.\n")
    w(" * unicode_folds: simple case folding (CaseFolding.txt statuses C and\n")
    w(" * S) for codepoints >= 0x80, sorted by from; absent means no folding.\n")
    w(" * ASCII is handled separately in the C code.\n")
    w(" */\n")
    w("#ifndef SIMHASH_UNICODE_TABLE_H\n")
    w("#define SIMHASH_UNICODE_TABLE_H\n")
    w("\n")
    w("#include <stdint.h>\n")
    w("\n")
    w("#define UC_SEP    0   /* separator: not listed in the table */\n")
    w("#define UC_WORD   1   /* letter or digit: part of a word */\n")
    w("#define UC_SINGLE 2   /* letter of a script written without spaces: a token on its own */\n")
    w("#define UC_MARK   3   /* combining mark: extends the current token */\n")
    w("\n")
    w("typedef struct { uint32_t first, last; uint8_t cls; } UnicodeRange;\n")
    w("\n")
    w("static const UnicodeRange unicode_ranges[] = {\n")
    for i in range(0, len(ranges), RANGES_PER_LINE):
        chunk = ranges[i:i + RANGES_PER_LINE]
        w("    " + " ".join("{0x%04X,0x%04X,%d}," % r for r in chunk) + "\n")
    w("};\n")
    w("#define UNICODE_RANGES_COUNT (sizeof(unicode_ranges) / sizeof(unicode_ranges[0]))\n")
    w("\n")
    w("typedef struct { uint32_t from, to; } UnicodeFold;\n")
    w("\n")
    w("static const UnicodeFold unicode_folds[] = {\n")
    for i in range(0, len(folds), FOLDS_PER_LINE):
        chunk = folds[i:i + FOLDS_PER_LINE]
        w("    " + " ".join("{0x%04X,0x%04X}," % f for f in chunk) + "\n")
    w("};\n")
    w("#define UNICODE_FOLDS_COUNT (sizeof(unicode_folds) / sizeof(unicode_folds[0]))\n")
    w("\n")
    w("#define UNICODE_TABLE_VERSION \"%s\"\n" % UNICODE_VERSION)
    w("\n")
    w("/* Counts, for checking:\n")
    w(" *   ranges: %d\n" % len(ranges))
    w(" *   folds:  %d\n" % len(folds))
    w(" *   codepoints by class: UC_WORD %d, UC_SINGLE %d, UC_MARK %d\n"
      % (counts[UC_WORD], counts[UC_SINGLE], counts[UC_MARK]))
    w(" */\n")
    w("#define UNICODE_RANGES_NUM %d\n" % len(ranges))
    w("#define UNICODE_FOLDS_NUM  %d\n" % len(folds))
    w("\n")
    w("#endif /* SIMHASH_UNICODE_TABLE_H */\n")
    return "".join(out)


def main():
    ap = argparse.ArgumentParser(
        description="Generate src/core/unicode_table.h on standard output.")
    ap.add_argument("--unicode-dir", default="/usr/share/unicode",
                    help="directory holding the UCD files "
                         "(default: /usr/share/unicode)")
    args = ap.parse_args()
    d = args.unicode_dir

    check_version(d, "Scripts.txt")
    check_version(d, "CaseFolding.txt")

    gc = read_general_categories(d)
    single_script = read_single_script_flags(d)
    ranges = build_ranges(classify(gc, single_script))
    folds = read_folds(d)

    # Write bytes so the output does not depend on the locale or platform
    # newline conventions.
    sys.stdout.buffer.write(emit(ranges, folds).encode("ascii"))


if __name__ == "__main__":
    main()
