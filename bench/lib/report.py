#!/usr/bin/env python3
"""Prints bench/run's aligned result table from its TSV files.

usage: report.py DIRS_TSV RESULTS_TSV [NOTES_TSV]

DIRS_TSV    one line per measured directory, in column order:
            label, kind (local | glusterfs | fuse | other), path,
            statfs type (stat -f -c %T)
RESULTS_TSV header line, then: workload, label, metric, unit, value
            (value is a number, or FAIL / SKIP)
NOTES_TSV   optional: label, workload, note; a noted value gets a "*"
            and the note is listed under the table

Rows are workloads in first-seen order. For each directory the table has
its value, then its ratio to the first local directory ("/L", when the
directory is not that one) and to the first GlusterFS directory ("/G",
likewise). Higher is better for every metric bench/run emits.
"""

import sys


def read_tsv(path, skip_header=False):
    rows = []
    with open(path) as f:
        for n, line in enumerate(f):
            if skip_header and n == 0:
                continue
            line = line.rstrip("\n")
            if line:
                rows.append(line.split("\t"))
    return rows


def fmt_value(v):
    if v >= 1000:
        return "%.0f" % v
    if v >= 10:
        return "%.1f" % v
    return "%.2f" % v


def as_number(s):
    try:
        v = float(s)
    except ValueError:
        return None
    return v if v == v else None  # NaN is not a result


def main(argv):
    if len(argv) not in (3, 4):
        sys.stderr.write(__doc__)
        return 2
    dirs = read_tsv(argv[1])
    results = read_tsv(argv[2], skip_header=True)
    notes = read_tsv(argv[3]) if len(argv) == 4 else []

    labels = [d[0] for d in dirs]
    kinds = {d[0]: d[1] for d in dirs}
    local_ref = next((lb for lb in labels if kinds[lb] == "local"), None)
    gfs_ref = next((lb for lb in labels if kinds[lb] == "glusterfs"), None)

    workloads, units, values = [], {}, {}
    for row in results:
        if len(row) < 5:
            continue
        wl, label, _metric, unit, value = row[:5]
        if wl not in units:
            workloads.append(wl)
            units[wl] = unit
        values[(wl, label)] = value
    noted = {(n[0], n[1]): n[2] for n in notes if len(n) >= 3}

    header = ["workload", "unit"]
    for i, lb in enumerate(labels, 1):
        header.append("[%d]" % i)
        if local_ref and lb != local_ref:
            header.append("[%d]/L" % i)
        if gfs_ref and lb != gfs_ref:
            header.append("[%d]/G" % i)

    table = [header]
    for wl in workloads:
        line = [wl, units[wl]]
        for lb in labels:
            raw = values.get((wl, lb), "-")
            v = as_number(raw)
            cell = fmt_value(v) if v is not None else raw
            if (lb, wl) in noted:
                cell += "*"
            line.append(cell)
            for ref in (local_ref, gfs_ref):
                if not ref or lb == ref:
                    continue
                r = as_number(values.get((wl, ref), ""))
                line.append("%.2fx" % (v / r) if v is not None and r
                            else "-")
        table.append(line)

    widths = [max(len(row[c]) for row in table) for c in range(len(header))]
    for i, lb in enumerate(labels, 1):
        tags = []
        if lb == local_ref:
            tags.append("L = local reference")
        if lb == gfs_ref:
            tags.append("G = GlusterFS reference")
        d = dirs[i - 1] + ["", ""]
        print("[%d] %s  %s  statfs=%s%s" % (
            i, lb, d[2], d[3] or "?",
            ("  (" + ", ".join(tags) + ")") if tags else ""))
    print()
    for row in table:
        cells = [row[0].ljust(widths[0]), row[1].ljust(widths[1])]
        cells += [row[c].rjust(widths[c]) for c in range(2, len(row))]
        print("  ".join(cells).rstrip())
    if noted:
        print()
        for (lb, wl), note in sorted(noted.items()):
            print("* [%d] %s: %s" % (labels.index(lb) + 1 if lb in labels
                                     else 0, wl, note))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
