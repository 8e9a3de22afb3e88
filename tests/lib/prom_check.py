#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
# prom_check.py: checks that stdin is Prometheus text exposition (format
# 0.0.4) as Mortar writes it, and prints "ok N" (N samples) or one line
# naming the first problem (exit 1):
#   - every line is blank, "# HELP name text", "# TYPE name type" or a
#     sample "name{label="value",...} value";
#   - names and label names are valid, label values properly escaped;
#   - every sample's family has a TYPE, given once, before its samples,
#     and a family's samples are not split by another family;
#   - counters end in _total;
#   - every histogram series has buckets in increasing le order with
#     cumulative counts, ending at le="+Inf", which equals its _count,
#     and has a _sum.
# With --names, prints instead the names of the families declared (TYPE)
# and of the samples (without labels), one a line.
import re
import sys

NAME = r"[a-zA-Z_:][a-zA-Z0-9_:]*"
SAMPLE = re.compile(r"^(" + NAME + r")(?:\{(.*)\})? (\S+)$")
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\[\\"n])*)"(,|$)')
VALUE = re.compile(r"^(?:[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?|"
                   r"[-+]?Inf|NaN)$")


def fail(lineno, msg):
    print("line %d: %s" % (lineno, msg))
    sys.exit(1)


def parse_labels(lineno, text):
    out = []
    pos = 0
    while pos < len(text):
        m = LABEL.match(text, pos)
        if m is None:
            fail(lineno, "bad labels: {%s}" % text)
        out.append((m.group(1), m.group(2)))
        pos = m.end()
    return out


def main():
    names_only = "--names" in sys.argv[1:]
    types = {}
    helps = set()
    finished = set()
    current = None
    hist = {}  # series key -> [last le, last count, inf count, has sum]
    n = 0
    names = set()
    for lineno, line in enumerate(sys.stdin.read().split("\n"), 1):
        if line == "":
            continue
        if line.startswith("# HELP "):
            parts = line.split(" ", 3)
            if len(parts) < 4 or not re.match("^" + NAME + "$", parts[2]):
                fail(lineno, "bad HELP: " + line)
            if parts[2] in helps:
                fail(lineno, "second HELP for " + parts[2])
            helps.add(parts[2])
            continue
        if line.startswith("# TYPE "):
            parts = line.split(" ")
            if len(parts) != 4 or parts[3] not in (
                    "counter", "gauge", "histogram", "summary", "untyped"):
                fail(lineno, "bad TYPE: " + line)
            name = parts[2]
            if name in types:
                fail(lineno, "second TYPE for " + name)
            if parts[3] == "counter" and not name.endswith("_total"):
                fail(lineno, "counter %s does not end in _total" % name)
            types[name] = parts[3]
            names.add(name)
            if current is not None:
                finished.add(current)
            current = name
            continue
        if line.startswith("#"):
            continue
        m = SAMPLE.match(line)
        if m is None:
            fail(lineno, "not a sample: " + line)
        name, labels, value = m.group(1), m.group(2) or "", m.group(3)
        if not VALUE.match(value):
            fail(lineno, "bad value: " + line)
        lab = parse_labels(lineno, labels)
        fam = name
        if fam not in types:
            for suffix in ("_bucket", "_sum", "_count"):
                if fam.endswith(suffix) and \
                        types.get(fam[:-len(suffix)]) == "histogram":
                    fam = fam[:-len(suffix)]
                    break
        if fam not in types:
            fail(lineno, "sample of %s without a TYPE" % name)
        if fam != current or fam in finished:
            fail(lineno, "sample of %s outside its family" % name)
        names.add(name)
        n += 1
        if types[fam] != "histogram":
            continue
        key = (fam, tuple(kv for kv in lab if kv[0] != "le"))
        h = hist.setdefault(key, [None, None, None, False])
        if name.endswith("_bucket"):
            le = [v for k, v in lab if k == "le"]
            if len(le) != 1:
                fail(lineno, "bucket without le")
            bound = float("inf") if le[0] == "+Inf" else float(le[0])
            count = float(value)
            if h[0] is not None and bound <= h[0]:
                fail(lineno, "buckets not in increasing le order")
            if h[1] is not None and count < h[1]:
                fail(lineno, "buckets not cumulative")
            h[0], h[1] = bound, count
            if le[0] == "+Inf":
                h[2] = count
        elif name.endswith("_sum"):
            h[3] = True
        elif name.endswith("_count"):
            if h[2] is None:
                fail(lineno, "_count before a +Inf bucket")
            if float(value) != h[2]:
                fail(lineno, "_count %s differs from +Inf bucket %s" %
                     (value, h[2]))
    for key, h in hist.items():
        if h[2] is None or not h[3]:
            print("histogram %s%s lacks +Inf or _sum" % key)
            sys.exit(1)
    if names_only:
        for name in sorted(names):
            print(name)
    else:
        print("ok %d" % n)


main()
